// Package lab is the interactive terminal lab: a mission picker, a lab
// screen that steps a mission's schedule against the provider's ledger
// with a live effect counter, and a view that compares pinned cases.
//
// The root Model owns layout and focus and routes keys; each panel is its
// own component (header, goal, schedule, timeline, transcript, ledger,
// compare, evidence, picker) with a SetSize and its own key help. The lab
// renders what the engine returns and never decides an outcome itself: it
// holds one runner and moves it, forward by stepping and back by the
// runner's own saved marks, and reads its case.
package lab

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// The smallest terminal the lab draws in.
const (
	MinWidth  = 72
	MinHeight = 20
)

// DefaultDir is where exports go unless told otherwise.
const DefaultDir = "./replaylab-cases"

type screen int

const (
	screenPicker screen = iota
	screenLab
	screenCompare
	screenEvidence
	screenCourse
	screenGlossary
)

type focus int

const (
	focusTimeline focus = iota
	focusLedger
	focusSaid
)

// Options configure a lab.
type Options struct {
	// Catalog is what the picker offers.
	Catalog *missions.Catalog
	// Mission, when set, opens the lab straight on this mission id.
	Mission string
	// Overrides are the settings chosen on the command line.
	Overrides missions.Overrides
	// Dir is where exports are written; DefaultDir when empty.
	Dir string
	// Course, when set, opens the lab on the course, at the first lesson
	// not yet done in Progress. ProgressPath is where the course saves
	// its progress as lessons end.
	Course       *missions.Course
	Progress     export.Progress
	ProgressPath string
	// FirstTime is a learner who has finished no lesson yet: the
	// timeline starts with its checkpoint rows hidden (h shows them).
	FirstTime bool
}

// Model is the lab's root model.
type Model struct {
	st   *Styles
	keys *KeyMap
	dir  string

	width, height int
	// sized: the terminal has reported its size (a 0×0 terminal has too).
	sized bool
	// exporting counts the exports still writing; quitting is set when q
	// came while one was, so the lab quits once they end; quitNote is what
	// became of them, for the command line to print after the lab closes.
	exporting int
	quitting  bool
	quitNote  string
	screen    screen
	fullHelp  bool

	picker picker

	mission  *missions.Mission
	over     missions.Overrides
	settings missions.Settings
	defaults missions.Settings
	pos      int
	steps    int
	// runner is the run under the current settings, held at pos: a step
	// moves it on, a step back or a restart rewinds it to a saved mark.
	runner *missions.Runner
	cas    *missions.Case
	// full is the whole run under the current settings, whatever the
	// position: the panels are sized for it, so stepping fills them
	// without moving them, and it is what pinning and exporting keep.
	full *missions.Case

	goal goalPanel

	header   header
	schedule schedulePanel
	timeline timeline
	said     transcript
	holds    ledgerPanel
	focus    focus
	// sep is how many blank lines part the bands below the header (the
	// goal, the timeline, the bottom row) where the run leaves room.
	sep int
	// foot is whether a rule closes the bottom row, above the room left.
	foot bool

	compare compareView
	pinned  []*missions.Case

	evidence evidenceView

	course       course
	progressPath string

	glossary     glossary
	glossaryFrom screen

	status    string
	statusErr bool
	// statusShorter holds the status in fewer and fewer words, for a line
	// too narrow for the whole one: the first that fits is shown.
	statusShorter []string
	// statusOnlyHere is whether the status is about the screen it was set
	// on, and goes when the person leaves it.
	statusOnlyHere bool
	// exportedTo is the short form of an export's status, for a line too
	// narrow for the whole one: words, a path cut from the left so the
	// end of a file name stays in sight, then words.
	exportedTo struct{ lead, path, tail string }
}

// New builds a lab. It fails when Options.Mission names no mission in the
// catalog.
func New(o Options) (Model, error) {
	if o.Catalog == nil {
		o.Catalog = missions.BuiltIn()
	}
	if o.Dir == "" {
		o.Dir = DefaultDir
	}
	st := DefaultStyles()
	keys := DefaultKeyMap()
	m := Model{st: &st, keys: &keys, dir: o.Dir, over: o.Overrides}
	m.picker = newPicker(m.st, m.keys, o.Catalog)
	m.header = newHeader(m.st)
	m.schedule = newSchedulePanel(m.st)
	m.goal = newGoalPanel(m.st)
	m.timeline = newTimeline(m.st, m.keys)
	m.said = newTranscript(m.st, m.keys)
	m.holds = newLedgerPanel(m.st, m.keys)
	m.compare = newCompareView(m.st, m.keys)
	m.evidence = newEvidenceView(m.st, m.keys)
	m.glossary = newGlossary(m.st)
	if o.FirstTime {
		m.timeline.ToggleCheckpoints()
	}
	if o.Course != nil {
		if len(o.Course.Lessons) == 0 {
			return Model{}, fmt.Errorf("the course has no lessons")
		}
		m.course = newCourse(m.st, m.keys, o.Course, o.Progress)
		m.progressPath = o.ProgressPath
		m.screen = screenCourse
	}
	if o.Mission != "" {
		ms, err := o.Catalog.Get(o.Mission)
		if err != nil {
			return Model{}, err
		}
		if err := m.open(ms); err != nil {
			return Model{}, err
		}
	}
	m.updateKeys()
	return m, nil
}

// Init starts nothing: the lab waits for the terminal's size and keys.
func (m Model) Init() tea.Cmd { return nil }

// open shows a mission from its first step.
func (m *Model) open(ms *missions.Mission) error {
	prevMission, prevPos, prevFull, prevRunner := m.mission, m.pos, m.full, m.runner
	m.mission, m.pos, m.full, m.runner = ms, 0, nil, nil
	if err := m.rerun(); err != nil {
		m.mission, m.pos, m.full, m.runner = prevMission, prevPos, prevFull, prevRunner
		return err
	}
	m.defaults = ms.Settings(missions.Overrides{})
	m.schedule.SetMission(ms)
	m.goal.SetMission(ms)
	m.screen = screenLab
	m.focus = focusTimeline
	m.timeline.Follow()
	m.picker.Select(ms.ID)
	m.refresh()
	m.layout()
	return nil
}

// rerun brings the run to the current overrides and position. Under new
// settings it runs the mission once, to the end, for the whole run the
// panels are sized by, then rewinds to the position; under the same
// settings it only moves the runner it holds.
func (m *Model) rerun() error {
	s := m.mission.Settings(m.over)
	if m.runner == nil || m.runner.Settings() != s {
		r, err := missions.NewRunner(m.mission, s)
		if err != nil {
			return err
		}
		r.Seek(r.Steps())
		full := r.Case()
		// The whole run keeps its own events: the runner's are
		// replayed as it moves back and forth.
		full.Events = append([]missions.Event(nil), full.Events...)
		m.runner, m.full = r, full
		defer m.layout()
	}
	m.runner.Seek(m.pos)
	m.settings, m.steps, m.pos, m.cas = s, m.runner.Steps(), m.runner.Position(), m.runner.View()
	m.refresh()
	return nil
}

// moveTo moves the run to position pos.
func (m *Model) moveTo(pos int) {
	m.pos = clamp(pos, 0, m.steps)
	if err := m.rerun(); err != nil {
		m.setError(err)
		return
	}
	m.timeline.Follow()
}

// refresh hands the current case to the panels.
func (m *Model) refresh() {
	if m.cas == nil {
		return
	}
	m.header.SetRun(m.cas, m.defaults, m.pos, m.steps)
	// Effects are objects that stand, and objects are never removed: the
	// whole run's objects bound the count at every step.
	m.header.SetScale(len(m.full.Ledger.Objects))
	m.schedule.SetRun(m.full, m.pos)
	m.timeline.SetCase(m.cas, m.pos)
	m.said.SetCase(m.cas, m.pos)
	m.holds.SetCase(m.cas)
	m.holds.SetNames(m.timeline.names)
	m.timeline.focused = m.focus == focusTimeline
	m.holds.focused = m.focus == focusLedger
	m.said.focused = m.focus == focusSaid
}

// setStatus puts s on the status line; where it is too wide, the first
// of shorter that fits takes its place.
// quit ends the lab, or, while an export is writing, waits for it to end
// first, so that no file is left half written. Asked again while it waits,
// it quits at once, after taking away what the unfinished write left.
func (m *Model) quit() tea.Cmd {
	switch {
	case m.exporting <= 0:
		return tea.Quit
	case !m.quitting:
		m.quitting = true
		m.setStatus("finishing the export, then quitting… (q again quits now, without the file)",
			"finishing the export, then quitting…")
		return nil
	}
	m.quitNote = "quit before the export finished: none of its files was kept"
	return tea.Sequence(func() tea.Msg {
		export.RemoveUnfinished()
		return nil
	}, tea.Quit)
}

// QuitNote is what became of the exports the lab waited for when it quit,
// or "" when it waited for none.
func (m Model) QuitNote() string { return m.quitNote }

func (m *Model) setStatus(s string, shorter ...string) {
	m.status, m.statusErr, m.statusShorter, m.statusOnlyHere, m.exportedTo.path = s, false, shorter, false, ""
}

func (m *Model) setError(err error) {
	m.status, m.statusErr, m.statusShorter, m.statusOnlyHere, m.exportedTo.path = err.Error(), true, nil, false, ""
}

// backToRun leaves the compare view or the evidence for the run.
func (m *Model) backToRun() {
	m.screen = screenLab
	if m.statusOnlyHere {
		m.setStatus("")
	}
	m.layout()
}

// toggle applies a change of settings, replays to the same position and
// says how the counter moved.
func (m *Model) toggle(change func(*missions.Overrides), what func(missions.Settings) string) {
	before, verdicts := m.cas.Outcome.Effects, m.cas.Outcome.Verdicts
	old := m.over
	change(&m.over)
	if err := m.rerun(); err != nil {
		m.over = old
		m.setError(err)
		return
	}
	// The run under the new settings has other events: a cursor kept on
	// its row number would sit on a different event, so it goes back to
	// the newest.
	m.timeline.Follow()
	after := m.cas.Outcome.Effects
	moved := fmt.Sprintf("effects stay at %d", after)
	if after != before {
		moved = fmt.Sprintf("effects %d → %d", before, after)
	}
	briefly := moved
	if m.pos == m.steps {
		// At the end the header shows the verdicts: a setting can change
		// them with the count unmoved (a saved 500 under v1 and v2).
		if vc := verdictChange(verdicts, m.cas.Outcome.Verdicts); vc != "" {
			moved += ", " + vc
			briefly += ", a verdict changed"
		}
	}
	m.setStatus(fmt.Sprintf("%s: replayed to step %d of %d, %s", what(m.settings), m.pos, m.steps, moved),
		what(m.settings)+": "+moved, what(m.settings)+": "+briefly)
}

// verdictChange says which verdicts moved from a to b, or "" when none
// did: "verdict hidden_effect → exactly_once" for a mission of one
// intent, each changed intent by name for several.
func verdictChange(a, b []missions.IntentVerdict) string {
	if len(a) != len(b) {
		return ""
	}
	var out []string
	for i := range a {
		if a[i].Verdict == b[i].Verdict || a[i].Intent != b[i].Intent {
			continue
		}
		change := fmt.Sprintf("%s → %s", a[i].Verdict, b[i].Verdict)
		if len(a) == 1 {
			return "verdict " + change
		}
		out = append(out, a[i].Intent+" "+change)
	}
	return strings.Join(out, ", ")
}

func (m *Model) pin() {
	c := m.full
	for i, p := range m.pinned {
		if p.Mission.ID == c.Mission.ID && p.Settings == c.Settings {
			m.setStatus(fmt.Sprintf("already pinned as %s; change a setting (k, p, c, s) to pin a contrasting case", export.CaseName(i)),
				fmt.Sprintf("already pinned as %s; change a setting (k, p, c, s) first", export.CaseName(i)))
			return
		}
	}
	// Pins are lettered in the order of their export file names, as
	// replaylab compare letters the exported files a shell's glob hands
	// it: A in the lab is A in compare's text and Markdown.
	at := sort.Search(len(m.pinned), func(i int) bool { return caseFileName(m.pinned[i]) > caseFileName(c) })
	m.pinned = slices.Insert(m.pinned, at, c)
	// The mission is on screen; the settings are what tells pins apart.
	name := export.CaseName(at)
	moved := ""
	if at < len(m.pinned)-1 {
		moved = fmt.Sprintf("; %s on are lettered anew, in file-name order", export.CaseName(at+1))
	}
	if m.pos < m.steps {
		// A pin keeps the whole run; saying its count here would tell
		// how the steps not yet taken end.
		m.setStatus(fmt.Sprintf("pinned %s: %s, the whole run%s · v compares", name, shortSettings(c.Settings), moved),
			fmt.Sprintf("pinned %s, the whole run · v compares", name))
		return
	}
	m.setStatus(fmt.Sprintf("pinned %s: %s → %s%s · v compares",
		name, shortSettings(c.Settings), export.Plural(c.Outcome.Effects, "effect"), moved),
		fmt.Sprintf("pinned %s → %s · v compares", name, export.Plural(c.Outcome.Effects, "effect")))
}

// shortSettings names the settings in a few words, for the status line.
// Keys hashed from the payload leave stable keys nothing to do, so the key
// source takes their place.
func shortSettings(s missions.Settings) string {
	keys := s.Words(missions.SettingStableKeys)
	if s.KeySource != missions.KeyPerIntent {
		keys = s.Words(missions.SettingKeySource)
	}
	return export.CleanLine(keys + ", " + string(s.Policy) + ", " + s.Words(missions.SettingContract))
}

// runSettings are the settings a person changes in the lab.
var runSettings = []missions.Setting{missions.SettingStableKeys, missions.SettingPolicy, missions.SettingContract, missions.SettingKeySource}

// carried names the settings of s that differ from the mission's own d,
// each with the mission's own value, or "" when none does.
func carried(s, d missions.Settings) string {
	var out []string
	for _, f := range runSettings {
		label, v := s.Word(f)
		if _, dv := d.Word(f); v != dv {
			out = append(out, fmt.Sprintf("%s%s (its own: %s)", label, v, dv))
		}
	}
	return export.CleanLine(strings.Join(out, " · "))
}

// carriedShort names the settings of s that differ from the mission's own
// d, without the mission's own values, or "" when none does.
func carriedShort(s, d missions.Settings) string {
	var out []string
	for _, f := range runSettings {
		if s.Words(f) != d.Words(f) {
			out = append(out, s.Words(f))
		}
	}
	return export.CleanLine(strings.Join(out, ", "))
}

// sameRun reports whether two cases ran alike: the same events, the same
// ledger and the same outcome, whatever their settings say.
func sameRun(a, b *missions.Case) bool {
	return reflect.DeepEqual(a.Events, b.Events) && reflect.DeepEqual(a.Ledger, b.Ledger) &&
		reflect.DeepEqual(a.Outcome, b.Outcome)
}

// keySourceMatters reports whether the open mission is one where the key
// source is part of the lesson: it is not the per-intent default now or by
// the mission's own settings, or the mission's expectations name it.
func (m *Model) keySourceMatters() bool {
	if m.mission == nil {
		return false
	}
	if m.settings.KeySource != missions.KeyPerIntent || m.defaults.KeySource != missions.KeyPerIntent {
		return true
	}
	for _, e := range m.mission.Expect {
		if e.When.KeySource != nil {
			return true
		}
	}
	return false
}

// Update routes messages: sizes to the layout, keys to the screen that
// has them, export results to the status line.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height, m.sized = msg.Width, msg.Height, true
		m.layout()
	case exportedMsg:
		m.exporting--
		m.exported(msg)
		if m.quitting && m.exporting <= 0 {
			m.quitNote = m.status
			return m, tea.Quit
		}
	case progressSavedMsg:
		m.exporting--
		if msg.err != nil {
			m.setError(fmt.Errorf("progress not saved: %w", msg.err))
		}
		if m.quitting && m.exporting <= 0 {
			m.quitNote = m.status
			return m, tea.Quit
		}
	case tea.KeyMsg:
		cmd = m.handleKey(msg)
	default:
		if m.screen == screenPicker {
			m.picker, cmd = m.picker.Update(msg)
		}
	}
	m.updateKeys()
	return m, cmd
}

func (m *Model) handleKey(k tea.KeyMsg) tea.Cmd {
	if m.screen == screenPicker && m.picker.Filtering() {
		// Every key is text for the filter, but ctrl+c still quits.
		if k.Type == tea.KeyCtrlC {
			return m.quit()
		}
		var cmd tea.Cmd
		m.picker, cmd = m.picker.Update(k)
		return cmd
	}
	switch {
	case key.Matches(k, m.keys.Quit):
		return m.quit()
	case m.screen == screenGlossary && key.Matches(k, m.glossary.keys.Back):
		m.screen, m.fullHelp = m.glossaryFrom, false
		m.layout()
		return nil
	case key.Matches(k, m.keys.Glossary):
		m.glossaryFrom, m.screen, m.fullHelp = m.screen, screenGlossary, false
		m.setStatus("")
		m.layout()
		return nil
	case key.Matches(k, m.keys.Help):
		m.fullHelp = !m.fullHelp
		m.layout()
		return nil
	case m.fullHelp && key.Matches(k, m.keys.Leave):
		m.fullHelp = false
		m.layout()
		return nil
	case m.fullHelp:
		// Any other key closes the list and does what the list says, on
		// the screen it belongs to, so nothing happens out of sight.
		m.fullHelp = false
		m.layout()
	}
	switch m.screen {
	case screenPicker:
		return m.pickerKey(k)
	case screenLab:
		return m.labKey(k)
	case screenCompare:
		return m.compareKey(k)
	case screenEvidence:
		return m.evidenceKey(k)
	case screenCourse:
		return m.courseKey(k)
	case screenGlossary:
		m.glossary, _ = m.glossary.Update(k)
	}
	return nil
}

// courseKey hands a key to the course and does the writing it asks for:
// the cases of finished runs, the progress of a finished lesson.
func (m *Model) courseKey(k tea.KeyMsg) tea.Cmd {
	m.course, _ = m.course.Update(k)
	var cmds []tea.Cmd
	if len(m.course.exports) > 0 {
		m.exporting++
		cmds = append(cmds, exportCases(m.dir, m.course.exports...))
		m.course.exports = nil
	}
	if m.course.saveProgress {
		m.course.saveProgress = false
		if m.progressPath != "" {
			m.exporting++
			cmds = append(cmds, saveProgress(m.progressPath, m.course.prog))
		}
	}
	if m.course.note != "" {
		m.setStatus(m.course.note)
	} else if len(cmds) == 0 {
		m.setStatus("")
	}
	return tea.Batch(cmds...)
}

func (m *Model) pickerKey(k tea.KeyMsg) tea.Cmd {
	if key.Matches(k, m.keys.Open) {
		if ms := m.picker.Selected(); ms != nil {
			if err := m.open(ms); err != nil {
				m.setError(err)
				return nil
			}
			m.setStatus("")
			if kept := carried(m.settings, m.defaults); kept != "" {
				// Settings chosen earlier apply to every mission; say so
				// where they differ from this one's own.
				m.setStatus("settings kept from before: "+kept,
					"settings kept from before: "+carriedShort(m.settings, m.defaults),
					"settings kept from before: the header marks them")
			}
			m.layout()
		}
		return nil
	}
	var cmd tea.Cmd
	m.picker, cmd = m.picker.Update(k)
	return cmd
}

func (m *Model) labKey(k tea.KeyMsg) tea.Cmd {
	if why := m.idle(k); len(why) > 0 {
		m.setStatus(why[0], why[1:]...)
		return nil
	}
	switch {
	case key.Matches(k, m.keys.Step):
		if m.pos < m.steps {
			m.moveTo(m.pos + 1)
			m.setStatus("")
		}
	case key.Matches(k, m.keys.StepBack):
		if m.pos > 0 {
			m.moveTo(m.pos - 1)
			m.setStatus("")
		}
	case key.Matches(k, m.keys.RunAll):
		m.moveTo(m.steps)
		m.setStatus("")
	case key.Matches(k, m.keys.Restart):
		m.moveTo(0)
		m.setStatus("")
	case key.Matches(k, m.keys.StableKeys):
		before := m.full
		m.toggle(func(o *missions.Overrides) {
			b := !m.settings.StableKeys
			o.StableKeys = &b
		}, func(s missions.Settings) string { return s.Words(missions.SettingStableKeys) })
		if m.settings.KeySource == missions.KeyPayloadHash && !m.statusErr && sameRun(before, m.full) {
			// The setting changed, but every key is the payload's hash.
			keys := m.settings.Words(missions.SettingStableKeys)
			m.setStatus(keys+": no effect, keys come from the payload hash (s changes that)",
				keys+": no effect while keys are the payload's hash (s)")
		}
	case key.Matches(k, m.keys.Policy):
		m.toggle(func(o *missions.Overrides) {
			p := next(missions.Policies, m.settings.Policy)
			o.Policy = &p
		}, func(s missions.Settings) string { return s.Words(missions.SettingPolicy) })
	case key.Matches(k, m.keys.Contract):
		m.toggle(func(o *missions.Overrides) {
			c := next(ledger.Contracts, m.settings.Contract)
			o.Contract = &c
		}, func(s missions.Settings) string { return s.Words(missions.SettingContract) })
	case key.Matches(k, m.keys.KeySource):
		m.toggle(func(o *missions.Overrides) {
			ks := next(missions.KeySources, m.settings.KeySource)
			o.KeySource = &ks
		}, func(s missions.Settings) string { return s.Words(missions.SettingKeySource) })
	case key.Matches(k, m.keys.Evidence):
		if m.hasEvidence() {
			m.evidence.SetCase(m.cas)
			m.screen = screenEvidence
			m.setStatus("")
			m.layout()
		}
	case key.Matches(k, m.keys.Pin):
		m.pin()
	case key.Matches(k, m.keys.Compare):
		if len(m.pinned) > 0 {
			m.compare.SetCases(m.pinned)
			m.screen = screenCompare
			m.setStatus("")
			m.layout()
		}
	case key.Matches(k, m.keys.Export):
		m.setStatus("exporting "+caseFileName(m.full)+"…", "exporting the case…")
		m.exporting++
		return exportCases(m.dir, m.full)
	case key.Matches(k, m.keys.Checkpoints):
		m.timeline.ToggleCheckpoints()
		m.layout()
		if m.timeline.CheckpointsHidden() {
			m.setStatus("checkpoint rows hidden; h shows them again")
		} else {
			m.setStatus("checkpoint rows shown: what the caller recorded after each event")
		}
	case key.Matches(k, m.keys.Focus):
		// tab goes round: the timeline, the ledger, what the agent said.
		switch m.focus {
		case focusTimeline:
			m.focus = focusLedger
			m.setStatus("↑/↓ and pgup/pgdn now scroll the ledger; tab moves them on to what the agent said",
				"↑/↓ now scroll the ledger; tab moves them on")
		case focusLedger:
			m.focus = focusSaid
			m.setStatus("↑/↓ now scroll what the agent said, one entry at a time; tab gives them back to the timeline",
				"↑/↓ now scroll what the agent said; tab gives them back")
		default:
			m.focus = focusTimeline
			m.setStatus("↑/↓ move the timeline's cursor again; the strip under it shows its row")
		}
		m.refresh()
		if m.focus == focusLedger && m.holds.lineCount() <= m.holds.rows() {
			m.setStatus("↑/↓ now scroll the ledger, but all of it fits; tab moves them on to what the agent said",
				"↑/↓ now scroll the ledger (all of it fits); tab moves them on")
		}
	case key.Matches(k, m.keys.Up, m.keys.Down, m.keys.PageUp, m.keys.PageDown):
		switch m.focus {
		case focusLedger:
			m.holds, _ = m.holds.Update(k)
		case focusSaid:
			m.said, _ = m.said.Update(k)
		default:
			m.timeline, _ = m.timeline.Update(k)
		}
	case key.Matches(k, m.keys.Leave):
		m.screen = screenPicker
		m.setStatus("")
		m.layout()
	}
	return nil
}

func (m *Model) compareKey(k tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(k, m.keys.Leave):
		m.backToRun()
	case key.Matches(k, m.keys.Export):
		m.setStatus(fmt.Sprintf("exporting %s…", export.Plural(len(m.pinned), "pinned case")))
		m.exporting++
		return exportCases(m.dir, m.pinned...)
	case key.Matches(k, m.keys.Unpin):
		m.pinned = nil
		m.screen = screenLab
		m.setStatus("pins cleared")
		m.layout()
	case key.Matches(k, m.keys.Up, m.keys.Down, m.keys.PageUp, m.keys.PageDown, m.keys.Left, m.keys.Right):
		m.compare, _ = m.compare.Update(k)
	default:
		if why := m.runKeyElsewhere(k); why != "" {
			m.setStatus(why)
			m.statusOnlyHere = true
		}
	}
	return nil
}

// runKeyElsewhere says where a key of the run screen works when it is
// pressed on the compare view or the evidence, where it does nothing, or
// "" when k is not such a key.
func (m *Model) runKeyElsewhere(k tea.KeyMsg) string {
	kb := m.keys
	for _, b := range []key.Binding{kb.Step, kb.StepBack, kb.RunAll, kb.Restart, kb.StableKeys, kb.Policy,
		kb.Contract, kb.KeySource, kb.Pin, kb.Compare, kb.Export, kb.Evidence, kb.Checkpoints, kb.Focus} {
		if pressed(k, b) {
			h := b.Help()
			return fmt.Sprintf("%s (%s) works on the run: esc goes back to it", h.Key, h.Desc)
		}
	}
	return ""
}

func (m *Model) evidenceKey(k tea.KeyMsg) tea.Cmd {
	if key.Matches(k, m.keys.Leave, m.keys.Evidence) {
		m.backToRun()
		return nil
	}
	if key.Matches(k, m.keys.Up, m.keys.Down, m.keys.PageUp, m.keys.PageDown) {
		m.evidence, _ = m.evidence.Update(k)
		return nil
	}
	if why := m.runKeyElsewhere(k); why != "" {
		m.setStatus(why)
		m.statusOnlyHere = true
	}
	return nil
}

// pressed reports whether k is one of b's keys, whether or not b is
// enabled now.
func pressed(k tea.KeyMsg, b key.Binding) bool {
	for _, s := range b.Keys() {
		if k.String() == s {
			return true
		}
	}
	return false
}

// idle says why a lab key that does nothing at this moment does nothing,
// then the same in fewer words where it has them, or nothing when k is not
// such a key. The help bar leaves these keys out; a key pressed anyway
// answers on the status line instead of in silence.
func (m *Model) idle(k tea.KeyMsg) []string {
	switch {
	case (pressed(k, m.keys.Step) || pressed(k, m.keys.RunAll)) && !m.keys.Step.Enabled():
		return []string{fmt.Sprintf("the run is over (step %d of %d): b steps back, 0 starts again", m.pos, m.steps)}
	case (pressed(k, m.keys.StepBack) || pressed(k, m.keys.Restart)) && !m.keys.StepBack.Enabled():
		return []string{"this is the start: n runs the first step, r the whole run"}
	case pressed(k, m.keys.Compare) && !m.keys.Compare.Enabled():
		return []string{"nothing pinned yet: m pins this case, v then compares the pinned ones"}
	case pressed(k, m.keys.Unpin) && len(m.pinned) == 0:
		return []string{"nothing pinned yet: m pins this case"}
	case pressed(k, m.keys.Unpin):
		return []string{fmt.Sprintf("x clears the pins from the compare view: v opens it (%s)", export.Plural(len(m.pinned), "pinned case"))}
	case pressed(k, m.keys.Evidence) && !m.keys.Evidence.Enabled():
		if m.settings.Policy != missions.Guarded {
			return []string{"g shows what the guarded caller hands a person; under the naive policy nothing is (p switches)",
				"nothing is handed to a person under the naive policy: p switches"}
		}
		if m.pos < m.steps {
			// Whether the run will escalate is for the steps to show.
			return []string{"nothing has been handed to a person so far: g shows the evidence once the guarded caller escalates",
				"nothing handed to a person so far"}
		}
		return []string{"the guarded caller settled every intent of this run: nothing was handed to a person",
			"the guarded caller settled every intent: nothing was handed to a person"}
	}
	return nil
}

// hasEvidence reports whether the run at the current position has handed
// an intent to a person.
func (m *Model) hasEvidence() bool {
	return m.cas != nil && len(m.cas.Outcome.Evidence) > 0
}

// exported reports a finished export on the status line. A path too long
// for the line loses its beginning, never the end of the file name, where
// a numeric suffix tells a second export apart.
func (m *Model) exported(msg exportedMsg) {
	names := make([]string, len(msg.paths))
	for i, p := range msg.paths {
		names[i] = filepath.Base(p)
	}
	switch {
	case msg.err != nil && len(msg.paths) > 0:
		m.setError(fmt.Errorf("exported %s, then failed: %w", strings.Join(msg.paths, ", "), msg.err))
	case msg.err != nil:
		m.setError(fmt.Errorf("export failed: %w", msg.err))
	case len(msg.paths) == 1:
		tail := ""
		if msg.renamed > 0 {
			// The name the person would look for holds an earlier export.
			tail = " (" + takenName(names[0]) + " was there already)"
		}
		m.setStatus("exported the full run to " + msg.paths[0] + tail)
		m.exportedTo.lead, m.exportedTo.path, m.exportedTo.tail = "exported to ", msg.paths[0], ""
		if tail != "" {
			m.exportedTo.tail = "; the name was taken"
		}
	default:
		dir := filepath.Dir(msg.paths[0])
		s := fmt.Sprintf("exported %d cases to %s: %s", len(msg.paths), dir, strings.Join(names, ", "))
		lead, tail := fmt.Sprintf("exported %d cases to ", len(msg.paths)), ""
		if msg.renamed > 0 {
			// Names were taken: the suffixed files are not where the
			// person would look first.
			tail = fmt.Sprintf("; %d got a -N suffix, the name being taken", msg.renamed)
			if msg.renamed == 1 {
				tail = "; 1 got a -N suffix, its name being taken"
			}
			s += tail
		}
		if ansi.StringWidth(s) > m.width {
			// Too many names to read on one line: say where they are.
			s = lead + dir + tail
			if tail == "" {
				s += ", one .json file per case"
			}
		}
		m.setStatus(s)
		m.exportedTo.lead, m.exportedTo.path, m.exportedTo.tail = lead, dir, tail
	}
}

// takenName is the name a file was meant to have before a -N suffix was
// added to it because that name was taken.
func takenName(name string) string {
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	if i := strings.LastIndexByte(base, '-'); i > 0 && strings.Trim(base[i+1:], "0123456789") == "" && i+1 < len(base) {
		base = base[:i]
	}
	return base + ext
}

// next is the value after cur in order, wrapping around.
func next[T comparable](order []T, cur T) T {
	for i, v := range order {
		if v == cur {
			return order[(i+1)%len(order)]
		}
	}
	return order[0]
}

// updateKeys turns on exactly the keys that do something now.
func (m *Model) updateKeys() {
	k := m.keys
	lab := m.screen == screenLab && m.mission != nil
	cmp := m.screen == screenCompare
	ev := m.screen == screenEvidence
	typing := m.screen == screenPicker && m.picker.Filtering()
	k.Open.SetEnabled(m.screen == screenPicker && !typing && m.picker.Selected() != nil)
	// ? is a character of the filter too.
	k.Help.SetEnabled(!typing)
	k.Glossary.SetEnabled(!typing && m.screen != screenGlossary)
	if typing {
		// q is a letter of the filter now.
		k.Quit.SetHelp("ctrl+c", "quit")
	} else {
		k.Quit.SetHelp("q", "quit")
	}
	k.Step.SetEnabled(lab && m.pos < m.steps)
	k.RunAll.SetEnabled(lab && m.pos < m.steps)
	k.StepBack.SetEnabled(lab && m.pos > 0)
	k.Restart.SetEnabled(lab && m.pos > 0)
	for _, b := range []*key.Binding{&k.StableKeys, &k.Policy, &k.Contract, &k.KeySource, &k.Pin, &k.Focus, &k.Checkpoints} {
		b.SetEnabled(lab)
	}
	if m.settings.KeySource == missions.KeyPayloadHash {
		k.StableKeys.SetHelp("k", "stable keys (no effect)")
	} else {
		k.StableKeys.SetHelp("k", "stable keys")
	}
	if m.timeline.CheckpointsHidden() {
		k.Checkpoints.SetHelp("h", "show checkpoints")
	} else {
		k.Checkpoints.SetHelp("h", "hide checkpoints")
	}
	k.Export.SetEnabled(lab || cmp && len(m.pinned) > 0)
	if cmp {
		k.Export.SetHelp("e", "export all")
	} else {
		k.Export.SetHelp("e", "export JSON")
	}
	k.Compare.SetEnabled(lab && len(m.pinned) > 0)
	k.Evidence.SetEnabled(lab && m.hasEvidence() || ev)
	if ev {
		k.Evidence.SetHelp("g", "back to the run")
	} else {
		k.Evidence.SetHelp("g", "evidence")
	}
	k.Unpin.SetEnabled(cmp && len(m.pinned) > 0)
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown} {
		b.SetEnabled(lab || cmp && m.compare.Scrolls() || ev && m.evidence.Scrolls())
	}
	k.Left.SetEnabled(cmp && m.compare.HiddenColumns())
	k.Right.SetEnabled(cmp && m.compare.HiddenColumns())
	switch {
	case lab && m.focus == focusTimeline:
		k.Up.SetHelp("↑/↓", "pick row")
		k.Focus.SetHelp("tab", "↑/↓ to the ledger")
	case lab && m.focus == focusLedger:
		k.Up.SetHelp("↑/↓", "scroll")
		k.Focus.SetHelp("tab", "↑/↓ to what was said")
	default:
		k.Up.SetHelp("↑/↓", "scroll")
		k.Focus.SetHelp("tab", "↑/↓ to the timeline")
	}
	k.Leave.SetEnabled(lab || cmp || ev || m.fullHelp)
	if m.fullHelp {
		k.Help.SetHelp("?/esc", "close help")
	} else {
		k.Help.SetHelp("?", "all keys")
	}
}

// ShortHelp is the help bar for the current screen.
func (m Model) ShortHelp() []key.Binding {
	k := m.keys
	if m.fullHelp {
		// The list above is the help; the bar says only how to leave it.
		return []key.Binding{k.Quit}
	}
	switch m.screen {
	case screenPicker:
		return append(m.picker.ShortHelp(), k.Quit)
	case screenCompare:
		return append(m.compare.ShortHelp(), k.Export, k.Unpin, k.Leave, k.Quit)
	case screenEvidence:
		return append(m.evidence.ShortHelp(), k.Leave, k.Quit)
	case screenCourse:
		return append(m.course.ShortHelp(), k.Quit)
	case screenGlossary:
		return append(m.glossary.ShortHelp(), k.Quit)
	}
	out := []key.Binding{k.Step, k.StepBack, k.Evidence, k.RunAll}
	if m.pos == m.steps {
		// At the end, pinning is what comes next.
		out = append(out, k.Pin)
	}
	switch {
	case m.settings.KeySource == missions.KeyPayloadHash:
		// Stable keys change nothing while keys are the payload's hash;
		// s is the way back to keys of their own.
		out = append(out, k.KeySource, k.Policy, k.Contract)
	case m.keySourceMatters():
		out = append(out, k.KeySource, k.StableKeys, k.Policy, k.Contract)
	default:
		out = append(out, k.StableKeys, k.Policy, k.Contract)
	}
	out = append(out, k.Checkpoints)
	if m.pos < m.steps {
		out = append(out, k.Pin)
	}
	out = append(out, k.Compare, k.Export)
	if !m.keySourceMatters() {
		out = append(out, k.KeySource)
	}
	return append(out, k.Leave, k.Quit)
}

// FullHelp is every key of the current screen, in groups.
func (m Model) FullHelp() [][]key.Binding {
	k := m.keys
	switch m.screen {
	case screenPicker:
		return append(m.picker.FullHelp(), []key.Binding{k.Glossary, k.Quit, k.Help})
	case screenCompare:
		return append(m.compare.FullHelp(), []key.Binding{k.Export, k.Unpin, k.Leave, k.Glossary, k.Quit, k.Help})
	case screenEvidence:
		return append(m.evidence.FullHelp(), []key.Binding{k.Evidence, k.Leave, k.Glossary, k.Quit, k.Help})
	case screenCourse:
		return append(m.course.FullHelp(), []key.Binding{k.Glossary, k.Quit, k.Help})
	case screenGlossary:
		return append(m.glossary.FullHelp(), []key.Binding{k.Quit, k.Help})
	}
	return [][]key.Binding{
		{k.Step, k.StepBack, k.RunAll, k.Restart, k.Evidence},
		{k.StableKeys, k.Policy, k.Contract, k.KeySource},
		{k.Pin, k.Compare, k.Export},
		{k.Checkpoints, k.Focus, k.Up, k.PageUp},
		{k.Glossary, k.Leave, k.Quit, k.Help},
	}
}

// Layout of the lab screen.
const (
	chromeLines = 2 // status line and help bar
	gap         = 2 // between columns
	// The bottom row of panels never takes more than this share of the
	// room below the header, so the timeline keeps most of it.
	bottomShareNum, bottomShareDen = 9, 20
	minBottom                      = 4 // a title and three lines
	minGoal                        = 3 // a title and two lines
	// From this width on, the schedule widens for its longest line.
	wideSchedule = 120
)

// layout gives every panel its box. Widths come from the terminal.
// Heights come from the whole run under the current settings, so that
// stepping fills the panels without moving them: the schedule, the
// transcript and the ledger are as tall as the tallest of them needs, up
// to a share of the room; the timeline gets what it needs of the rest; the
// mission's goal fills what is left over, if there is enough for it; and
// a blank line parts the bands where there is still room.
func (m *Model) layout() {
	w, h := m.width, m.height
	if w < MinWidth || h < MinHeight {
		return
	}
	body := h - chromeLines
	m.picker.SetSize(w, body)
	m.course.SetSize(w, body)
	m.glossary.SetSize(w, body)
	m.compare.SetSize(w, body)
	// The evidence keeps the header above it: which run, which settings,
	// and the counter.
	m.evidence.SetSize(w, body-headerHeight)
	m.header.SetSize(w, headerHeight)
	sw := clamp(w*3/10, 24, 34)
	if m.full != nil && w >= wideSchedule {
		// A wide terminal gives the schedule what its longest line needs,
		// up to a third of the width, rather than cutting it.
		sw = clamp(m.schedule.Width(m.full), sw, max(sw, w/3))
	}
	tw := (w - sw - 2*gap) / 2
	lw := w - sw - 2*gap - tw
	rest := body - headerHeight

	needB, needT := 0, rest
	dh := 0
	if m.full != nil {
		said := newTranscript(m.st, m.keys)
		said.SetCase(m.full, m.steps)
		said.SetSize(tw, 0)
		needB = max(m.schedule.Height(), said.Height(rest), 1+ledgerLines(m.full.Ledger))
		if len(m.full.Events) > 0 {
			// The strip under the timeline is as tall as the run's
			// longest row needs, within a share of the screen.
			most := clamp(body/8, minDetail+1, maxDetail)
			dh = clamp(m.timeline.detailNeed(m.full, w, most), minDetail, most)
		}
		needT = 2 + max(1, m.timeline.rowsFor(m.full)) + dh
	}
	// The bottom row's share is of the room the strip leaves: the strip
	// belongs to the timeline's rows.
	capB := max(minBottom, (rest-dh)*bottomShareNum/bottomShareDen)
	if m.full == nil {
		needB = capB
	}
	bh := clamp(needB, minBottom, capB)
	th := max(rest-bh, 0)
	if needT < th {
		th = needT
	}
	spare := rest - th - bh
	// A capped bottom row takes back what the timeline does not need.
	grow := min(spare, max(0, needB-bh))
	bh, spare = bh+grow, spare-grow
	gh := 0
	if spare >= minGoal {
		gh = min(spare, m.goal.Height(w))
		spare -= gh
	}
	// Room still over lets long notes carry on under their rows, when the
	// whole run, wrapped, fits: the timeline never scrolls for it.
	wrapNotes := false
	if m.full != nil && spare > 0 && th == needT {
		if extra := m.timeline.wrapExtra(m.full, w, spare); extra > 0 && extra <= spare {
			th, spare, wrapNotes = th+extra, spare-extra, true
		}
	}
	// What is still over first parts the bands with a blank line each,
	// all of them or none so the spacing is even; the rest stays below the
	// bottom row, above the status line, so no panel ends in blank lines.
	m.sep, m.foot = 0, false
	if bands := 2 + min(gh, 1); spare >= bands {
		m.sep, spare = 1, spare-bands
		// A rule closes the bottom row, so the room under it reads as
		// the screen's margin, not as lines the panels left empty.
		m.foot = spare > 0
	}
	m.goal.SetSize(w, gh)
	if gh == 0 {
		// No room for the goal's panel: it shows in the timeline's empty
		// rows before the first step instead.
		m.timeline.SetGoal(m.goal.text)
	} else {
		m.timeline.SetGoal("")
	}
	m.timeline.SetDetailHeight(dh)
	m.timeline.SetWrap(wrapNotes)
	m.timeline.SetSize(w, th)
	m.schedule.SetSize(sw, bh)
	m.said.SetSize(tw, bh)
	m.holds.SetSize(lw, bh)
}

// View draws the current screen.
func (m Model) View() string {
	if m.width == 0 || m.height == 0 {
		if !m.sized {
			return ""
		}
		// The terminal says it has no room at all, which is seldom true
		// (a serial console, a terminal whose size was never set): say
		// so on one line rather than draw nothing.
		return fmt.Sprintf("replaylab: this terminal reports its size as %d×%d, so nothing can be laid out; set its size (e.g. stty cols 100 rows 30) or press q to quit.", m.width, m.height)
	}
	if m.width < MinWidth || m.height < MinHeight {
		return m.tooSmall()
	}
	body := m.height - chromeLines
	var top string
	switch {
	case m.fullHelp:
		title := panelTitle(*m.st, "all keys", "? or esc closes", false, m.width)
		top = box(append([]string{title, ""}, m.fullHelpLines()...), m.width, body)
	case m.screen == screenPicker:
		top = m.picker.View()
	case m.screen == screenCourse:
		top = m.course.View()
	case m.screen == screenGlossary:
		top = m.glossary.View()
	case m.screen == screenCompare:
		top = m.compare.View()
	case m.screen == screenEvidence:
		top = lipgloss.JoinVertical(lipgloss.Left, m.header.View(), m.evidence.View())
	default:
		bottom := lipgloss.JoinHorizontal(lipgloss.Top,
			m.schedule.View(), strings.Repeat(" ", gap), m.said.View(), strings.Repeat(" ", gap), m.holds.View())
		parts := []string{m.header.View()}
		band := func(v string) {
			for range m.sep {
				parts = append(parts, "")
			}
			parts = append(parts, v)
		}
		if g := m.goal.View(); g != "" {
			band(g)
		}
		band(m.timeline.View())
		band(bottom)
		if m.foot {
			parts = append(parts, m.st.Rule.Render(strings.Repeat("─", m.width)))
		}
		top = lipgloss.JoinVertical(lipgloss.Left, parts...)
	}
	return lipgloss.JoinVertical(lipgloss.Left, box(strings.Split(top, "\n"), m.width, body), m.statusLine(), m.helpLine())
}

// fullHelpLines lays the groups of FullHelp out as columns, starting a new
// row of columns when the next group would not fit, so no key is cut off
// however narrow the terminal.
func (m Model) fullHelpLines() []string {
	hs := m.st.Help
	const colGap = "    "
	var out, row []string
	rowW := 0
	flush := func() {
		if len(row) == 0 {
			return
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, row...)
		row, rowW = nil, 0
	}
	for _, group := range m.FullHelp() {
		var keys, descs []string
		kw := 0
		for _, b := range group {
			if !b.Enabled() {
				continue
			}
			keys = append(keys, b.Help().Key)
			descs = append(descs, b.Help().Desc)
			kw = max(kw, lipgloss.Width(b.Help().Key))
		}
		if len(keys) == 0 {
			continue
		}
		col := make([]string, len(keys))
		cw := 0
		for i := range keys {
			col[i] = hs.FullKey.Render(fit(keys[i], kw)) + " " + hs.FullDesc.Render(descs[i])
			cw = max(cw, lipgloss.Width(col[i]))
		}
		if rowW > 0 && rowW+len(colGap)+cw > m.width {
			flush()
		}
		sep := ""
		if rowW > 0 {
			sep = colGap
		}
		// Pad the row so the new column starts at the same place on every
		// line, then add it.
		for len(row) < len(col) {
			row = append(row, strings.Repeat(" ", rowW))
		}
		for i := range row {
			line := row[i]
			line += strings.Repeat(" ", max(0, rowW-lipgloss.Width(line)))
			if i < len(col) {
				line += sep + col[i]
			}
			row[i] = line
		}
		rowW += len(sep) + cw
	}
	flush()
	return out
}

// statusLine says what the last action did, or where to go next.
func (m Model) statusLine() string {
	if m.fullHelp {
		return m.st.Subtle.Render(cut("any other key closes this list and does what it says", m.width))
	}
	if m.status != "" {
		s := m.st.Status
		if m.statusErr {
			s = m.st.StatusError
		}
		line := export.CleanLine(m.status)
		if to := m.exportedTo; ansi.StringWidth(line) > m.width && to.path != "" {
			line = to.lead + leftCut(export.CleanLine(to.path), m.width-ansi.StringWidth(to.lead+to.tail)) + to.tail
		}
		if ansi.StringWidth(line) > m.width {
			line = firstFit(line, m.statusShorter, m.width)
		}
		return s.Render(cut(line, m.width))
	}
	var hint []string
	switch m.screen {
	case screenPicker:
		hint = []string{"enter opens a mission · / filters the list"}
		switch {
		case m.picker.Filtering() && len(m.picker.list.VisibleItems()) == 0:
			hint = []string{"nothing matches these words: change them, or esc drops the filter"}
		case m.picker.Filtering():
			hint = []string{"type words from a title, id or goal · enter keeps the filter · esc drops it",
				"type words from a title, id or goal · enter keeps · esc drops"}
		}
	case screenLab:
		switch {
		case m.hasEvidence():
			hint = []string{"escalated: g shows the evidence a person is handed"}
		case m.pos == m.steps:
			// The verdict in words, then what to do next where it fits.
			v := verdictSentence(m.cas.Outcome.Verdicts)
			next := "m pins this case; change a setting (k, p, c) and pin again to compare"
			if m.keySourceMatters() {
				next = "m pins this case; s switches the key source, then pin again to compare"
			}
			if len(m.pinned) > 0 {
				next = fmt.Sprintf("%s · v compares", export.Plural(len(m.pinned), "pinned case"))
			}
			short := v
			if i := strings.IndexAny(v, ";,"); i > 0 {
				short = v[:i]
			}
			hint = []string{v + " · " + next, v, short}
		case len(m.pinned) > 0:
			hint = []string{fmt.Sprintf("%s · v compares", export.Plural(len(m.pinned), "pinned case"))}
		case m.keySourceMatters():
			hint = []string{"n steps through the schedule · r runs to the end · s switches the key source",
				"n steps · r runs to the end · s switches the key source"}
		default:
			hint = []string{"n steps through the schedule · r runs to the end · k toggles stable keys",
				"n steps · r runs to the end · k toggles stable keys"}
		}
	case screenCompare:
		hint = []string{"e exports every pinned case · x clears the pins · esc goes back to the run",
			"e exports every pinned case · x clears the pins · esc goes back"}
		if m.compare.cmp.Diverge > 0 {
			hint = []string{"◆ marks the first attempt where the words match and the ledgers do not",
				"◆ marks where the words match and the ledgers do not"}
		}
	case screenGlossary:
		hint = []string{"every word the lab shows, with what it means · esc goes back"}
	case screenEvidence:
		hint = []string{fmt.Sprintf("what the guarded executor hands a person at step %d of %d · esc goes back", m.pos, m.steps),
			fmt.Sprintf("what a person is handed at step %d of %d · esc goes back", m.pos, m.steps)}
	}
	if len(hint) == 0 {
		return ""
	}
	return m.st.Subtle.Render(cut(firstFit(hint[0], hint[1:], m.width), m.width))
}

// verdictSentence says the worst of a run's verdicts in plain words:
// "duplicate: believes done; the ledger holds 2 effects for one intent",
// with its intent where the run has several.
func verdictSentence(vs []missions.IntentVerdict) string {
	worst := worstVerdict(vs)
	for _, v := range vs {
		if v.Verdict != worst {
			continue
		}
		s := string(v.Verdict) + ": " + v.Explain()
		if len(vs) > 1 {
			s = export.CleanLine(v.Intent) + " " + s
		}
		return s
	}
	return ""
}

// firstFit is line when it fits in w cells, else the first of shorter
// that does, else the shortest of them, to be cut.
func firstFit(line string, shorter []string, w int) string {
	if ansi.StringWidth(line) <= w {
		return line
	}
	for _, s := range shorter {
		line = export.CleanLine(s)
		if ansi.StringWidth(line) <= w {
			break
		}
	}
	return line
}

// helpLine is the short help, with the key to the full list always shown
// at the right. Bindings that do not fit are left out whole.
func (m Model) helpLine() string {
	hs := m.st.Help
	item := func(b key.Binding) string {
		return hs.ShortKey.Render(b.Help().Key) + " " + hs.ShortDesc.Render(b.Help().Desc)
	}
	more := item(m.keys.Help)
	if !m.keys.Help.Enabled() {
		more = ""
	}
	room := m.width - lipgloss.Width(more) - 2
	sep := hs.ShortSeparator.Render(" • ")
	var b strings.Builder
	used := 0
	for _, kb := range m.ShortHelp() {
		if !kb.Enabled() {
			continue
		}
		s := item(kb)
		if used > 0 {
			s = sep + s
		}
		if used+lipgloss.Width(s) > room {
			break
		}
		b.WriteString(s)
		used += lipgloss.Width(s)
	}
	return b.String() + strings.Repeat(" ", max(1, m.width-used-lipgloss.Width(more))) + more
}

// tooSmall says how big the terminal must be, wrapped to the terminal it
// is shown in, however small, and centred as one left-aligned block.
func (m Model) tooSmall() string {
	var lines []string
	for _, p := range []string{
		fmt.Sprintf("replaylab needs a terminal of at least %d×%d;", MinWidth, MinHeight),
		fmt.Sprintf("this one is %d×%d.", m.width, m.height),
		"",
		"Make the window larger, or press q to quit.",
	} {
		if p == "" {
			if len(lines)+2 <= m.height {
				lines = append(lines, "")
			}
			continue
		}
		lines = append(lines, wrap(p, m.width)...)
	}
	lines = firstLines(lines, m.height, m.width, "")
	wide := 0
	for _, l := range lines {
		wide = max(wide, ansi.StringWidth(l))
	}
	for i, l := range lines {
		lines[i] = m.st.Text.Render(fit(l, wide))
	}
	msg := strings.Join(lines, "\n")
	return box(strings.Split(lipgloss.Place(m.width, m.height, lipgloss.Center, lipgloss.Center, msg), "\n"), m.width, m.height)
}
