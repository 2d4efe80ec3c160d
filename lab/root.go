// Package lab is the interactive terminal lab and the course.
//
// The root Model routes: it takes the keys every screen shares (quit, the
// full key list, the glossary), hands every other key to the screen on
// top, and does what the screen asks of it (go to another screen, wait
// for a write). Each screen owns its keys, a value of its own, and is
// given its box with SetSize: the picker, the lab screen (runScreen, with
// the run controller that holds the runner), the compare view, the
// evidence, the course and the glossary. Below them are the status bar
// and the help bar, built on bubbles' help. The lab renders what the
// engine returns and never decides an outcome itself.
package lab

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/course"
	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/reproduce"
)

// The smallest terminal the lab draws in.
const (
	MinWidth  = 72
	MinHeight = 20
)

// chromeLines are the status line and the help bar.
const chromeLines = 2

// DefaultDir is where exports go unless told otherwise: the case folder,
// shown as relative to where the lab was started.
const DefaultDir = "./" + export.DefaultCaseDir

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
	Course       *course.Course
	Progress     course.Progress
	ProgressPath string
	// FirstTime is a learner who has finished no lesson yet: the
	// timeline starts with its checkpoint rows hidden (h shows them).
	FirstTime bool
	// Recorded, when set, opens the lab on a recorded client's run (a
	// session told step by step), read from the file RecordedName.
	Recorded     *reproduce.SessionRun
	RecordedName string
}

// Model is the lab's root model.
type Model struct {
	st     *Styles
	global globalKeys
	dir    string

	width, height int
	// sized: the terminal has reported its size (a 0×0 terminal has too).
	sized bool
	// exporting counts the writes still going; quitting is set when q
	// came while one was, so the lab quits once they end; quitNote is what
	// became of them, for the command line to print after the lab closes.
	exporting int
	// saving counts the writes of the course's progress among them.
	saving   int
	quitting bool
	quitNote string
	// leaveAsked: q came in the middle of a lesson, or with pins not
	// exported, and the lab asked first; a second q leaves, keeping the
	// lesson's place.
	leaveAsked bool
	// adding: a from the compare view went to the picker, so the next
	// mission's pin goes back to compare.
	adding   bool
	screen   screen
	fullHelp bool

	statusBar

	picker picker
	runScreen
	compare  compareScreen
	evidence evidenceScreen

	course       courseView
	progressPath string

	glossary     glossary
	glossaryFrom screen

	chooser providerChooser
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
	m := Model{st: &st, global: newGlobalKeys(), dir: o.Dir}
	m.picker = newPicker(m.st, o.Catalog)
	m.runScreen = newRunScreen(m.st, o.Overrides)
	m.compare = newCompareScreen(m.st)
	m.evidence = newEvidenceScreen(m.st)
	m.glossary = newGlossary(m.st)
	m.chooser = newProviderChooser(m.st)
	if o.FirstTime {
		m.timeline.ToggleCheckpoints()
	}
	if o.Course != nil {
		if len(o.Course.Lessons) == 0 {
			return Model{}, errors.New("the course has no lessons")
		}
		m.course = newCourse(m.st, o.Course, o.Progress)
		m.course.dir = o.Dir
		m.progressPath = o.ProgressPath
		m.screen = screenCourse
		if m.course.note != "" {
			m.setStatus(m.course.note)
			m.course.note = ""
		}
	}
	if o.Recorded != nil {
		if len(o.Recorded.Views) != len(o.Recorded.Steps)+2 {
			return Model{}, fmt.Errorf("a recorded run of %d requests has %d views; it needs one before the first and one after each, then the last", len(o.Recorded.Steps), len(o.Recorded.Views))
		}
		m.runScreen.openRecorded(o.Recorded, o.RecordedName)
		m.screen = screenLab
		m.picker.Select(o.Recorded.Views[0].Mission.ID)
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

// open shows a mission on the lab screen from its first step.
func (m *Model) open(ms *missions.Mission) error {
	if err := m.runScreen.open(ms); err != nil {
		return err
	}
	m.screen = screenLab
	m.picker.Select(ms.ID)
	return nil
}

// moveTo moves the run to position pos, saying so when it cannot.
func (m *Model) moveTo(pos int) {
	if err := m.runScreen.moveTo(pos); err != nil {
		m.setError(err)
	}
}

// quit ends the lab, or, while a write is going, waits for it to end
// first, so that no file is left half written. Asked again while it waits,
// it quits at once, after taking away what the unfinished write left.
func (m *Model) quit() tea.Cmd {
	switch {
	case m.exporting <= 0:
		return tea.Quit
	case !m.quitting && m.saving == m.exporting:
		m.quitting = true
		m.setStatus("saving the course's progress, then quitting… (q again quits now, without saving it)",
			"saving the progress, then quitting…")
		return nil
	case !m.quitting:
		m.quitting = true
		m.setStatus("finishing the export, then quitting… (q again quits now, without the file)",
			"finishing the export, then quitting…")
		return nil
	}
	m.quitNote = "quit before the export finished: none of its files was kept"
	if m.saving == m.exporting {
		m.quitNote = "quit before the progress was saved: the lesson just finished is not recorded"
	} else if m.saving > 0 {
		m.quitNote += ", and the lesson just finished is not recorded"
	}
	return tea.Sequence(func() tea.Msg {
		atomicfile.RemoveUnfinished()
		return nil
	}, tea.Quit)
}

// pinsUnsaved: there are pins that no export has written or is writing.
func (m *Model) pinsUnsaved() bool {
	return len(m.pinned) > 0 && m.savedGen != m.pinGen && (m.pinWrites == 0 || m.writingGen != m.pinGen)
}

// inLesson: a lesson is under way, on screen or under the glossary opened
// from it.
func (m *Model) inLesson() bool {
	onCourse := m.screen == screenCourse || m.screen == screenGlossary && m.glossaryFrom == screenCourse
	return onCourse && m.course.leaving() != nil
}

// keepPlace writes the course's progress with the place in the lesson the
// learner is leaving, so that learn reopens there.
func (m *Model) keepPlace() tea.Cmd {
	if m.progressPath == "" {
		return nil
	}
	p := m.course.prog
	p.Lessons = maps.Clone(p.Lessons)
	p.Resume = m.course.leaving()
	m.exporting++
	m.saving++
	return saveProgress(m.progressPath, p)
}

// QuitNote is what became of the exports the lab waited for when it quit,
// or "" when it waited for none.
func (m Model) QuitNote() string { return m.quitNote }

// Update routes messages: sizes to the layout, keys to the screen that
// has them, the results of writes to the status line.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height, m.sized = msg.Width, msg.Height, true
		m.layout()
	case exportedMsg:
		m.exporting--
		if msg.pins {
			m.pinWrites--
			switch {
			case msg.err == nil:
				m.savedGen = max(m.savedGen, msg.gen)
			case msg.gen == m.writingGen:
				// The newest export of the pins failed: none under way
				// writes them as they stand.
				m.writingGen = -1
			}
		}
		m.exported(msg, m.width)
		if m.quitting && m.exporting <= 0 && m.pinsUnsaved() && msg.pins && msg.err != nil {
			// q waited for the pins' export, which failed: asking again
			// beats dropping them unsaid.
			m.quitting, m.leaveAsked = false, true
			m.setError(fmt.Errorf("the pins were not exported (%w); q again quits, dropping them", msg.err))
			return m, nil
		}
		if m.quitting && m.exporting <= 0 {
			m.quitNote = m.status
			return m, tea.Quit
		}
	case progressSavedMsg:
		m.exporting--
		m.saving--
		if msg.err != nil {
			m.setError(fmt.Errorf("progress not saved: %w", msg.err))
		}
		if m.quitting && m.exporting <= 0 {
			m.quitNote = m.status
			return m, tea.Quit
		}
	case tea.KeyMsg:
		if m.sized && (m.width < MinWidth || m.height < MinHeight) {
			// The screen says only how big the terminal must be, and that
			// q quits: no other key acts behind it.
			if key.Matches(msg, m.global.Quit) {
				if m.inLesson() {
					cmd = tea.Sequence(m.keepPlace(), m.quit())
				} else {
					cmd = m.quit()
				}
			}
			break
		}
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
	asked := m.leaveAsked
	m.leaveAsked = false
	switch {
	case asked && k.Type == tea.KeyEsc:
		// esc answers the question q asked: stay, where it was asked.
		m.setStatus("")
		return nil
	case key.Matches(k, m.global.Quit) && m.inLesson():
		// In the middle of a lesson q asks first; ctrl+c, or q again,
		// leaves, and the course keeps the place to come back to.
		if k.String() == "q" && !asked {
			m.leaveAsked = true
			m.setStatus("q again leaves the lesson: your answers so far are kept, and learn reopens at this question · any other key stays",
				"q again leaves: your answers are kept, learn reopens here", "q again leaves; learn reopens here")
			return nil
		}
		return tea.Sequence(m.keepPlace(), m.quit())
	case key.Matches(k, m.global.Quit) && m.pinsUnsaved() && k.String() == "q" && !asked:
		// Pins live only in the lab: q asks before it drops them.
		m.leaveAsked = true
		n := termtext.Plural(len(m.pinned), "pinned case")
		them := "them"
		if len(m.pinned) == 1 {
			them = "it"
		}
		var how string
		switch m.screen {
		case screenLab:
			how = "v then e exports " + them
		case screenCompare:
			how = "e exports " + them
		case screenPicker:
			how = "enter, v, then e exports " + them
		default:
			how = "from the lab, v then e exports " + them
		}
		m.setStatus(fmt.Sprintf("q again quits and drops the %s, not exported · %s · any other key stays", n, how),
			fmt.Sprintf("q again quits, dropping the %s · %s", n, how), "q again quits, dropping the pins")
		return nil
	case key.Matches(k, m.global.Quit):
		return m.quit()
	case m.screen == screenGlossary && key.Matches(k, m.glossary.keys.Back):
		m.screen, m.fullHelp = m.glossaryFrom, false
		m.layout()
		return nil
	case key.Matches(k, m.global.Glossary):
		m.glossaryFrom, m.screen, m.fullHelp = m.screen, screenGlossary, false
		m.setStatus("")
		m.layout()
		return nil
	case key.Matches(k, m.global.Help):
		m.fullHelp = !m.fullHelp
		return nil
	case m.fullHelp && key.Matches(k, m.global.Close):
		m.fullHelp = false
		return nil
	case m.fullHelp:
		// Any other key closes the list and does what the list says, on
		// the screen it belongs to, so nothing happens out of sight.
		m.fullHelp = false
	}
	var cmd tea.Cmd
	var n nav
	switch m.screen {
	case screenPicker:
		return m.pickerKey(k)
	case screenLab:
		before := len(m.pinned)
		m.runScreen, cmd, n = m.runScreen.Update(k, &m.statusBar, m.dir)
		if m.adding && len(m.pinned) > before {
			// The case picked from compare's a is pinned: back to
			// compare, with it beside the others.
			m.adding = false
			n.to = screenCompare
			others := "the others"
			if len(m.pinned) == 2 {
				others = "the other"
			}
			m.setStatus(fmt.Sprintf("pinned %s beside %s: the %d pinned cases side by side", m.cas.Mission.ID, others, len(m.pinned)),
				fmt.Sprintf("pinned beside %s: %d side by side", others, len(m.pinned)))
		}
	case screenCompare:
		m.compare, cmd, n = m.compare.Update(k, &m.statusBar, m.dir, m.pinned, m.runScreen.keys)
		if n.savesPins {
			// The export's answer says which pins it wrote.
			write, gen := cmd, m.pinGen
			cmd = func() tea.Msg {
				msg := write().(exportedMsg)
				msg.pins, msg.gen = true, gen
				return msg
			}
		}
	case screenEvidence:
		m.evidence, n = m.evidence.Update(k, &m.statusBar, m.runScreen.keys)
	case screenProviders:
		var ch chosen
		m.chooser, ch = m.chooser.Update(k)
		n = nav{to: screenProviders}
		switch {
		case ch.pick:
			m.runScreen.chooseProvider(&m.statusBar, ch.contract)
			n.to = screenLab
		case ch.back:
			m.statusBar.leftScreen()
			n.to = screenLab
		}
	case screenCourse:
		return m.courseKey(k)
	case screenGlossary:
		m.glossary, cmd = m.glossary.Update(k)
		return cmd
	}
	m.follow(n)
	return cmd
}

// follow does what a screen's key asked: clear the pins, go to the screen
// named, count the writes started.
func (m *Model) follow(n nav) {
	m.exporting += n.writes
	if n.savesPins {
		m.writingGen, m.pinWrites = m.pinGen, m.pinWrites+1
	}
	if n.unpin {
		m.pinned = nil
		m.pinGen++
		m.adding = false
	}
	if n.adding {
		m.adding = true
		// A case of another mission is what a is for: the first one
		// with nothing pinned is where the picker opens.
		taken := map[string]bool{}
		for _, c := range m.pinned {
			if c.Settings.Policy != missions.RealClient {
				taken[c.Mission.ID] = true
			}
		}
		m.picker.SelectFirstExcept(taken)
		// A recorded client's mission comes first, while no case of it
		// is pinned: the client beside a caller on the same schedule.
		for _, c := range m.pinned {
			if c.Settings.Policy == missions.RealClient && !taken[c.Mission.ID] {
				m.picker.Select(c.Mission.ID)
				break
			}
		}
	}
	if n.to == screenCompare {
		// However compare is reached, an add in progress has ended.
		m.adding = false
	}
	if n.to == m.screen {
		return
	}
	switch n.to {
	case screenCompare:
		m.compare.SetLab(m.full)
		m.compare.SetCases(m.pinned)
	case screenEvidence:
		m.evidence.recorded = m.rec != nil
		m.evidence.SetCase(m.cas)
	case screenProviders:
		m.chooser.Open(m.settings, m.base.Contract)
	}
	m.screen = n.to
	m.layout()
}

func (m *Model) pickerKey(k tea.KeyMsg) tea.Cmd {
	if key.Matches(k, m.picker.keys.Open) {
		if ms := m.picker.Selected(); ms != nil {
			if err := m.open(ms); err != nil {
				m.setError(err)
				return nil
			}
			m.setStatus("")
			if m.adding {
				pinned := termtext.Plural(len(m.pinned), "pinned case")
				m.setStatus(fmt.Sprintf("m pins the whole run beside the %s and compares them", pinned),
					"m pins the whole run beside the pinned and compares")
				for _, c := range m.pinned {
					if c.Settings.Policy == missions.RealClient && c.Mission.ID == ms.ID && m.settings.Policy != missions.Guarded {
						// Your client beside the guarded caller, on the
						// same schedule: p first.
						m.setStatus("p turns the policy guarded, then m pins its run beside your client's and compares them",
							"p: the guarded policy, then m pins it beside your client")
						break
					}
				}
				if name, ok := m.pinnedAs(); ok {
					// Pinned already, under these very settings.
					m.setStatus(fmt.Sprintf("already pinned as %s; change a setting (k, p, c, s) and m pins it beside the others, or esc to pick another", name),
						fmt.Sprintf("already pinned as %s; change a setting (k, p, c, s), then m", name))
				}
				m.layout()
				return nil
			}
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

// courseKey hands a key to the course and does the writing it asks for:
// the cases of finished runs, the progress of a finished lesson.
func (m *Model) courseKey(k tea.KeyMsg) tea.Cmd {
	if m.exportedTo.path != "" {
		// What the last write did was said; the next key moves on from
		// it, so it does not linger into the next run.
		m.setStatus("")
	}
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
			m.saving++
			// The write gets a copy: the course goes on changing its own.
			p := m.course.prog
			p.Lessons = maps.Clone(p.Lessons)
			cmds = append(cmds, saveProgress(m.progressPath, p))
		}
	}
	if m.course.note != "" {
		m.setStatus(m.course.note)
	} else if len(cmds) == 0 {
		m.setStatus("")
	}
	return tea.Batch(cmds...)
}

// updateKeys turns on exactly the keys that do something now, on every
// screen.
func (m *Model) updateKeys() {
	g := &m.global
	typing := m.screen == screenPicker && m.picker.Filtering()
	m.picker.keys.Open.SetEnabled(m.screen == screenPicker && !typing && m.picker.Selected() != nil)
	// ? and w are characters of the filter too.
	g.Help.SetEnabled(!typing)
	g.Glossary.SetEnabled(!typing && m.screen != screenGlossary)
	if typing {
		// q is a letter of the filter now.
		g.Quit.SetHelp("ctrl+c", "quit")
	} else {
		g.Quit.SetHelp("q", "quit")
	}
	g.Close.SetEnabled(m.fullHelp)
	if m.fullHelp {
		g.Help.SetHelp("?/esc", "close help")
	} else {
		g.Help.SetHelp("?", "all keys")
	}
	m.runScreen.updateKeys(m.screen == screenLab)
	m.compare.updateKeys(len(m.pinned))
	m.evidence.updateKeys()
}

// top is the keys of the screen on top.
func (m Model) top() help.KeyMap {
	switch m.screen {
	case screenPicker:
		return &m.picker
	case screenCompare:
		return m.compare
	case screenEvidence:
		return m.evidence
	case screenCourse:
		return m.course
	case screenGlossary:
		return m.glossary
	case screenProviders:
		return m.chooser
	}
	return m.runScreen
}

// ShortHelp is the help bar for the current screen.
func (m Model) ShortHelp() []key.Binding {
	if m.fullHelp {
		// The list above is the help; the bar says only how to leave it.
		return []key.Binding{m.global.Quit}
	}
	return append(m.top().ShortHelp(), m.global.Quit)
}

// FullHelp is every key of the current screen, in groups, then the keys
// of every screen.
func (m Model) FullHelp() [][]key.Binding {
	g := m.global
	return append(m.top().FullHelp(), []key.Binding{g.Glossary, g.Quit, g.Help})
}

// layout gives every screen its box: the terminal, less the status and
// help lines.
func (m *Model) layout() {
	w, h := m.width, m.height
	if w < MinWidth || h < MinHeight {
		return
	}
	body := h - chromeLines
	m.picker.SetSize(w, body)
	m.course.SetSize(w, body)
	m.glossary.SetSize(w, body)
	m.chooser.SetSize(w, body)
	m.compare.SetSize(w, body)
	// The evidence keeps the header above it: which run, which settings,
	// and the counter.
	m.evidence.SetSize(w, body-headerHeight)
	m.runScreen.SetSize(w, body)
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
		top = box(append([]string{title, ""}, fullHelpLines(m.st, m.FullHelp(), m.width)...), m.width, body)
	case m.screen == screenPicker:
		top = m.picker.View()
	case m.screen == screenCourse:
		top = m.course.View()
	case m.screen == screenGlossary:
		top = m.glossary.View()
	case m.screen == screenProviders:
		top = m.chooser.View()
	case m.screen == screenCompare:
		top = m.compare.View()
	case m.screen == screenEvidence:
		top = lipgloss.JoinVertical(lipgloss.Left, m.header.View(), m.evidence.View())
	default:
		top = m.runScreen.View()
	}
	return lipgloss.JoinVertical(lipgloss.Left, box(strings.Split(top, "\n"), m.width, body), m.statusLine(), m.helpLine())
}

// statusLine says what the last action did, or where to go next.
func (m Model) statusLine() string {
	if m.fullHelp {
		return m.st.Subtle.Render(cut("any other key closes this list and does what it says", m.width))
	}
	var hint []string
	switch m.screen {
	case screenPicker:
		hint = []string{"enter opens a mission · / filters the list · new here? replaylab learn is the course",
			"enter opens a mission · / filters · new? replaylab learn"}
		switch {
		case m.picker.Filtering() && len(m.picker.list.VisibleItems()) == 0:
			hint = []string{"nothing matches these words: change them, or esc drops the filter"}
		case m.picker.Filtering():
			hint = []string{"type words from a title, id or goal · enter keeps the filter · esc drops it",
				"type words from a title, id or goal · enter keeps · esc drops"}
		}
	case screenLab:
		hint = m.runScreen.hint()
	case screenCompare:
		hint = m.compare.hint()
	case screenEvidence:
		hint = []string{fmt.Sprintf("what the guarded executor hands a person at step %d of %d · esc goes back", m.pos, m.steps),
			fmt.Sprintf("what a person is handed at step %d of %d · esc goes back", m.pos, m.steps)}
		if m.rec != nil {
			hint = []string{fmt.Sprintf("what the provider recorded of each intent gone wrong, at step %d of %d · esc goes back", m.pos, m.steps),
				fmt.Sprintf("the provider's records at step %d of %d · esc goes back", m.pos, m.steps)}
		}
	case screenGlossary:
		hint = []string{"every word the lab shows, with what it means · esc goes back"}
	case screenProviders:
		hint = []string{"↑/↓ chooses a provider · enter runs the mission under its contract · esc goes back unchanged",
			"↑/↓ chooses · enter runs under it · esc goes back"}
	}
	return m.statusBar.view(m.st, m.width, hint)
}

// helpLine is the short help, with the key to the full list always shown
// at the right.
func (m Model) helpLine() string {
	return helpBar(m.st, m.ShortHelp(), m.global.Help, m.width)
}

// tooSmall says how big the terminal must be, wrapped to the terminal it
// is shown in, however small, and centred as one left-aligned block.
func (m Model) tooSmall() string {
	var lines []string
	for _, p := range []string{
		// Each line a phrase of its own, so that a narrow terminal
		// breaks between them, never inside a size.
		fmt.Sprintf("replaylab needs at least %d×%d;", MinWidth, MinHeight),
		fmt.Sprintf("this terminal is %d×%d.", m.width, m.height),
		"",
		"Make the window larger,",
		"or press q to quit.",
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
