package lab

// The run screen: one mission stepped attempt by attempt, with the
// schedule, the timeline, the ledger, the agent's words and the effect
// counter, and the toggles that re-run it under other settings.

import (
	"fmt"
	"maps"
	"reflect"

	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/replaylab/replaylab/compare"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
	"github.com/replaylab/replaylab/reproduce"
)

type focus int

const (
	focusTimeline focus = iota
	focusLedger
	focusSaid
)

// nav is what a screen's key asks of the root: the screen to show next
// (the same one to stay), and how many file writes the command it returns
// starts, so that quitting waits for them.
type nav struct {
	to     screen
	writes int
	// unpin clears the lab's pinned cases.
	unpin bool
	// adding: the picker opens to pick a case of another mission to pin
	// beside the pinned ones; its pin comes back to compare.
	adding bool
	// savesPins: the writes are the pinned cases.
	savesPins bool
}

// runScreen is the lab screen: a mission's run, stepped against the
// provider's ledger, in panels: the header with the effect counter, the
// goal, the timeline, and the schedule, the agent's words and the ledger
// side by side. It owns its keys and the cases pinned from it.
type runScreen struct {
	st   *Styles
	keys runKeys
	runController

	w, h int

	goal     goalPanel
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

	pinned []*missions.Case
	// pinGen counts the changes of the pins; savedGen is the newest
	// count an export of them that ended well was started at; writingGen
	// the newest one an export still under way was started at, and
	// pinWrites how many such exports are under way.
	pinGen, savedGen, writingGen, pinWrites int
}

func newRunScreen(st *Styles, over missions.Overrides) runScreen {
	r := runScreen{st: st, keys: newRunKeys(), header: newHeader(st), schedule: newSchedulePanel(st), goal: newGoalPanel(st),
		timeline: newTimeline(st), said: newTranscript(st), holds: newLedgerPanel(st)}
	r.over = over
	return r
}

// open shows a mission from its first step.
func (r *runScreen) open(ms *missions.Mission) error {
	if err := r.load(ms); err != nil {
		return err
	}
	r.header.SetRecorded(nil, "")
	r.said.recorded, r.timeline.recorded = false, false
	r.schedule.SetMission(ms)
	r.goal.SetMission(ms)
	r.focus = focusTimeline
	r.timeline.Follow()
	r.refresh()
	r.layout()
	return nil
}

// openRecorded shows a recorded client's run from its first request.
func (r *runScreen) openRecorded(run *reproduce.SessionRun, name string) {
	r.loadRecorded(run, name)
	r.header.SetRecorded(run, name)
	r.said.recorded, r.timeline.recorded = true, true
	r.schedule.SetRecorded(run)
	goal := *r.mission
	goal.Goal = fmt.Sprintf("Your client's own run, from %s: each request it sent, the fault it met and the ledger after it. %s", name, r.mission.Goal)
	r.goal.SetMission(&goal)
	r.focus = focusTimeline
	r.timeline.Follow()
	r.refresh()
	r.layout()
}

// hasLoneAttempt reports whether m has a step f can edit.
func hasLoneAttempt(m *missions.Mission) bool {
	if m == nil {
		return false
	}
	for _, st := range m.Schedule {
		if st.Kind() == missions.StepAttempt {
			return true
		}
	}
	return false
}

// selectedStep is the step f edits: the current one, or before the first
// step the first, and after the last the last.
func (r *runScreen) selectedStep() int {
	return clamp(r.pos, 1, len(r.mission.Schedule))
}

// editStep gives the selected step the next fixture of the world table,
// or, with all, every lone attempt one fixture: failure_before_commit
// first, then each after it in turn, then the mission's own again. The
// run replays to the same position, and the status line says how the
// counter moved.
func (r *runScreen) editStep(sb *statusBar, all bool) {
	if r.rec != nil {
		sb.setError(errRecorded)
		return
	}
	before := r.cas.Outcome.Effects
	edits := map[int]missions.Fixture{}
	// every is what F gives every attempt, kept for the next F; an f
	// leaves it "".
	var what string
	var every missions.Fixture
	if all {
		// From failure_before_commit, then each fixture after it in
		// turn, then the mission's own again; an f in between starts the
		// round anew.
		to := missions.Fixtures[0]
		if r.every != "" {
			to = missions.NextFixture(r.every)
			if to == missions.Fixtures[0] {
				to = ""
			}
		}
		for i, st := range r.base.Schedule {
			if st.Kind() == missions.StepAttempt && to != "" {
				edits[i+1] = to
			}
		}
		what, every = "every attempt: "+string(to), to
		if to == "" {
			what = "every attempt: the mission's own fixtures again"
		}
	} else {
		n := r.selectedStep()
		st := r.mission.Schedule[n-1]
		if st.Kind() != missions.StepAttempt {
			sb.setStatus(fmt.Sprintf("step %d is %s: f changes a lone attempt's fixture; n and b move to another step", n, stepPhrase(st)),
				fmt.Sprintf("step %d sends no lone attempt: n/b move to one", n))
			return
		}
		maps.Copy(edits, r.edits)
		to := missions.NextFixture(st.Fixture)
		edits[n] = to
		what = fmt.Sprintf("step %d: %s → %s", n, st.Fixture, to)
	}
	if err := r.setEdits(edits); err != nil {
		sb.setError(err)
		return
	}
	r.every = every
	r.schedule.SetMission(r.mission)
	r.goal.SetMission(r.mission)
	r.refresh()
	r.layout()
	r.timeline.Follow()
	moved := countMoved(before, r.cas.Outcome.Effects)
	if r.pos == 0 {
		moved = "n runs it"
	}
	next := ""
	if r.pos == r.steps {
		next = " · m pins it"
	}
	sb.setStatus(fmt.Sprintf("%s; replayed to step %d of %d, %s%s", what, r.pos, r.steps, moved, next), what+": "+moved+next, what+": "+moved)
}

// moveTo moves the run to position pos.
func (r *runScreen) moveTo(pos int) error {
	resized, err := r.seek(pos)
	if err != nil {
		return err
	}
	r.refresh()
	if resized {
		r.layout()
	}
	r.timeline.Follow()
	return nil
}

// refresh hands the current case to the panels.
func (r *runScreen) refresh() {
	if r.cas == nil {
		return
	}
	r.header.SetRun(r.cas, r.defaults, r.pos, r.steps)
	// Effects are objects that stand, and objects are never removed: the
	// whole run's objects bound the count at every step.
	r.header.SetScale(len(r.full.Ledger.Objects))
	r.schedule.SetRun(r.full, r.pos)
	r.timeline.SetCase(r.cas, r.pos)
	r.said.SetCase(r.cas, r.pos)
	r.holds.SetCase(r.cas)
	r.holds.SetNames(r.timeline.names)
	r.timeline.focused = r.focus == focusTimeline
	r.holds.focused = r.focus == focusLedger
	r.said.focused = r.focus == focusSaid
}

// toggle applies a change of settings, replays to the same position and
// says how the counter moved.
func (r *runScreen) toggle(sb *statusBar, change func(*missions.Overrides), what func(missions.Settings) string) {
	before, verdicts := r.cas.Outcome.Effects, r.cas.Outcome.Verdicts
	resized, err := r.change(change)
	if err != nil {
		sb.setError(err)
		return
	}
	r.refresh()
	if resized {
		r.layout()
	}
	// The run under the new settings has other events: a cursor kept on
	// its row number would sit on a different event, so it goes back to
	// the newest.
	r.timeline.Follow()
	moved := countMoved(before, r.cas.Outcome.Effects)
	if r.pos == 0 {
		// Nothing has run: no count has moved or stayed.
		sb.setStatus(fmt.Sprintf("%s: nothing has run yet; n steps, r runs it to the end", what(r.settings)), what(r.settings)+": n steps, r runs")
		return
	}
	briefly := moved
	if r.pos == r.steps {
		// At the end the header shows the verdicts: a setting can change
		// them with the count unmoved (a saved 500 under v1 and v2).
		if vc, n := verdictChange(verdicts, r.cas.Outcome.Verdicts); n > 0 {
			moved += ", " + vc
			if n == 1 {
				briefly += ", a verdict changed"
			} else {
				briefly += fmt.Sprintf(", %d verdicts changed", n)
			}
		}
	}
	sb.setStatus(fmt.Sprintf("%s: replayed to step %d of %d, %s", what(r.settings), r.pos, r.steps, moved),
		what(r.settings)+": "+moved, what(r.settings)+": "+briefly)
}

// countMoved says how a change moved the effect count: "effects 1 → 2",
// or "effects stay at 1".
func countMoved(before, after int) string {
	if after != before {
		return fmt.Sprintf("effects %d → %d", before, after)
	}
	return fmt.Sprintf("effects stay at %d", after)
}

// verdictChange says which verdicts moved from a to b, and how many did:
// "verdict hidden_effect → exactly_once" for a mission of one intent,
// each changed intent by name for several, "" when none moved.
func verdictChange(a, b []missions.IntentVerdict) (string, int) {
	if len(a) != len(b) {
		return "", 0
	}
	var out []string
	for i := range a {
		if a[i].Verdict == b[i].Verdict || a[i].Intent != b[i].Intent {
			continue
		}
		change := fmt.Sprintf("%s → %s", a[i].Verdict, b[i].Verdict)
		if len(a) == 1 {
			return "verdict " + change, 1
		}
		out = append(out, a[i].Intent+" "+change)
	}
	return strings.Join(out, ", "), len(out)
}

// pinnedAs is the letter of the pin that holds the run on screen, if one
// does: the same mission under the same settings.
func (r *runScreen) pinnedAs() (string, bool) {
	for i, p := range r.pinned {
		if p.Mission.ID == r.full.Mission.ID && p.Settings == r.full.Settings && p.Mission.Digest() == r.full.Mission.Digest() {
			return compare.CaseName(i), true
		}
	}
	return "", false
}

func (r *runScreen) pin(sb *statusBar) {
	if name, ok := r.pinnedAs(); ok {
		sb.setStatus(fmt.Sprintf("already pinned as %s; change a setting (k, p, c, s) to pin a contrasting case", name),
			fmt.Sprintf("already pinned as %s; change a setting (k, p, c, s) first", name))
		return
	}
	c := r.kept()
	// Pins are lettered in the order they were pinned, and a letter,
	// once given, stays: A is the first case pinned, whatever comes
	// after it.
	at := len(r.pinned)
	r.pinned = append(r.pinned, c)
	r.pinGen++
	// The mission is on screen; the settings are what tells pins apart.
	name := compare.CaseName(at)
	effects := termtext.Plural(c.Outcome.Effects, "effect")
	switch {
	case r.rec != nil:
		sb.setStatus(fmt.Sprintf("pinned %s: your client's run → %s · v compares, a sets a mission's case beside it", name, effects),
			fmt.Sprintf("pinned %s: your client → %s · v compares", name, effects))
	case r.pos == 0:
		// Nothing has run on screen: the pin holds a run not yet seen,
		// and its count would tell how it ends before the steps do.
		k, _ := contrast(c.Settings)
		sb.setStatus(fmt.Sprintf("pinned %s: the whole run under %s, not yet stepped here (n or r shows it) · %s, then m pins the other case", name, shortSettings(c.Settings), k),
			fmt.Sprintf("pinned %s: the whole run, not yet stepped (n or r shows it)", name))
	case r.pos < r.steps:
		// A pin keeps the whole run; saying its count here would tell
		// how the steps not yet taken end. One pin compares with
		// nothing: the next thing is the contrasting case.
		next := "v compares"
		if len(r.pinned) == 1 {
			k, _ := contrast(c.Settings)
			next = k + ", then m pins the other case"
		}
		sb.setStatus(fmt.Sprintf("pinned %s: %s, the whole run · %s", name, shortSettings(c.Settings), next),
			fmt.Sprintf("pinned %s, the whole run · %s", name, next))
	case len(r.pinned) == 1:
		// One pin compares with nothing: the next thing to do is the
		// contrasting case.
		k, turns := contrast(c.Settings)
		sb.setStatus(fmt.Sprintf("pinned %s: %s → %s · %s %s, then m pins that case beside it", name, shortSettings(c.Settings), effects, k, turns),
			fmt.Sprintf("pinned %s → %s · %s, then m pins the other case", name, effects, k),
			fmt.Sprintf("pinned %s · %s, then m", name, k))
	case len(r.pinned) == 2 && r.edits == nil && hasLoneAttempt(r.base):
		// Two cases of the mission's own schedule: the article's third
		// case replaces its outcomes.
		sb.setStatus(fmt.Sprintf("pinned %s: %s → %s · F replaces every outcome with failure_before_commit, then m pins that · v compares", name, shortSettings(c.Settings), effects),
			fmt.Sprintf("pinned %s → %s · F replaces every outcome, then m · v compares", name, effects),
			fmt.Sprintf("pinned %s → %s · F, then m · v compares", name, effects))
	default:
		sb.setStatus(fmt.Sprintf("pinned %s: %s → %s · v compares", name, shortSettings(c.Settings), effects),
			fmt.Sprintf("pinned %s → %s · v compares", name, effects))
	}
}

// contrast is the key that gives the case to set beside one run under s,
// and what it turns: stable keys the other way, or, where keys come from
// the payload hash and the toggle changes nothing, the policy.
func contrast(s missions.Settings) (key, turns string) {
	if s.KeySource != missions.KeyPerIntent {
		other := missions.Guarded
		if s.Policy == missions.Guarded {
			other = missions.Naive
		}
		return "p", "turns the policy " + string(other)
	}
	if s.StableKeys {
		return "k", "turns stable keys off"
	}
	return "k", "turns stable keys on"
}

// shortSettings names the settings in a few words, for the status line.
// Keys hashed from the payload leave stable keys nothing to do, so the key
// source takes their place.
func shortSettings(s missions.Settings) string {
	keys := s.Words(missions.SettingStableKeys)
	if s.KeySource != missions.KeyPerIntent {
		keys = s.Words(missions.SettingKeySource)
	}
	return termtext.CleanLine(keys + ", " + string(s.Policy) + ", " + s.Words(missions.SettingContract))
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
	return termtext.CleanLine(strings.Join(out, " · "))
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
	return termtext.CleanLine(strings.Join(out, ", "))
}

// sameRun reports whether two cases ran alike: the same events, the same
// ledger and the same outcome, whatever their settings say.
func sameRun(a, b *missions.Case) bool {
	return missions.SameEvents(a.Log(), b.Log()) && reflect.DeepEqual(a.Ledger, b.Ledger) &&
		reflect.DeepEqual(a.Outcome, b.Outcome)
}

// Update takes a key of the lab screen.
func (r runScreen) Update(k tea.KeyMsg, sb *statusBar, dir string) (runScreen, tea.Cmd, nav) {
	stay := nav{to: screenLab}
	if why := r.idle(k); len(why) > 0 {
		sb.setStatus(why[0], why[1:]...)
		return r, nil, stay
	}
	moveTo := func(pos int) {
		if err := r.moveTo(pos); err != nil {
			sb.setError(err)
			return
		}
		sb.setStatus("")
	}
	switch {
	case key.Matches(k, r.keys.Step):
		if r.pos < r.steps {
			moveTo(r.pos + 1)
		}
	case key.Matches(k, r.keys.StepBack):
		if r.pos > 0 {
			moveTo(r.pos - 1)
		}
	case key.Matches(k, r.keys.RunAll):
		moveTo(r.steps)
	case key.Matches(k, r.keys.Restart):
		moveTo(0)
	case key.Matches(k, r.keys.StableKeys):
		before := r.full
		r.toggle(sb, func(o *missions.Overrides) {
			b := !r.settings.StableKeys
			o.StableKeys = &b
		}, func(s missions.Settings) string { return s.Words(missions.SettingStableKeys) })
		if r.settings.KeySource == missions.KeyPayloadHash && !sb.statusErr && sameRun(before, r.full) {
			// The setting changed, but every key is the payload's hash.
			keys := r.settings.Words(missions.SettingStableKeys)
			sb.setStatus(keys+": no effect, keys come from the payload hash (s changes that)",
				keys+": no effect while keys are the payload's hash (s)")
		}
	case key.Matches(k, r.keys.Policy):
		r.toggle(sb, func(o *missions.Overrides) {
			p := next(missions.Policies, r.settings.Policy)
			o.Policy = &p
		}, func(s missions.Settings) string { return s.Words(missions.SettingPolicy) })
	case key.Matches(k, r.keys.Contract):
		r.toggle(sb, func(o *missions.Overrides) {
			c := next(r.contracts(), r.settings.Contract)
			o.Contract = &c
		}, func(s missions.Settings) string { return s.Words(missions.SettingContract) })
	case key.Matches(k, r.keys.Provider):
		if r.rec != nil {
			sb.setError(errRecorded)
			break
		}
		sb.setStatus("")
		return r, nil, nav{to: screenProviders}
	case key.Matches(k, r.keys.KeySource):
		r.toggle(sb, func(o *missions.Overrides) {
			ks := next(missions.KeySources, r.settings.KeySource)
			o.KeySource = &ks
		}, func(s missions.Settings) string { return s.Words(missions.SettingKeySource) })
	case key.Matches(k, r.keys.Fixture):
		r.editStep(sb, false)
	case key.Matches(k, r.keys.AllFixtures):
		r.editStep(sb, true)
	case key.Matches(k, r.keys.Evidence):
		if r.hasEvidence() {
			sb.setStatus("")
			return r, nil, nav{to: screenEvidence}
		}
	case key.Matches(k, r.keys.Pin):
		r.pin(sb)
	case key.Matches(k, r.keys.Compare):
		if len(r.pinned) > 0 {
			sb.setStatus("")
			return r, nil, nav{to: screenCompare}
		}
	case key.Matches(k, r.keys.Export):
		sb.setStatus("exporting "+caseFileName(r.full)+"…", "exporting the case…")
		return r, exportCases(dir, r.kept()), nav{to: screenLab, writes: 1}
	case key.Matches(k, r.keys.Checkpoints):
		r.timeline.ToggleCheckpoints()
		r.layout()
		if r.timeline.CheckpointsHidden() {
			sb.setStatus("checkpoint rows hidden; h shows them again")
		} else {
			sb.setStatus("checkpoint rows shown: what the caller recorded after each event")
		}
	case key.Matches(k, r.keys.Focus):
		// tab goes round: the timeline, the ledger, what the agent said,
		// skipping a panel that shows all it holds, where ↑/↓ would do
		// nothing.
		ledgerScrolls := r.holds.lineCount() > r.holds.rows()
		saidScrolls := r.said.Scrolls()
		switch {
		case r.focus == focusTimeline && ledgerScrolls:
			r.focus = focusLedger
			sb.setStatus("↑/↓ and pgup/pgdn now scroll the ledger; tab moves them on",
				"↑/↓ now scroll the ledger; tab moves them on")
		case r.focus != focusSaid && saidScrolls:
			r.focus = focusSaid
			sb.setStatus("↑/↓ now scroll what the agent said, one entry at a time; tab gives them back to the timeline",
				"↑/↓ now scroll what the agent said; tab gives them back")
		case r.focus == focusTimeline:
			sb.setStatus("the ledger and what the agent said fit whole: ↑/↓ stay with the timeline's cursor",
				"the ledger and the words fit whole: ↑/↓ stay on the timeline")
		default:
			r.focus = focusTimeline
			sb.setStatus("↑/↓ move the timeline's cursor again; the strip under it shows its row")
		}
		r.refresh()
	case key.Matches(k, r.keys.Up, r.keys.Down, r.keys.PageUp, r.keys.PageDown):
		switch r.focus {
		case focusLedger:
			r.holds, _ = r.holds.Update(k)
		case focusSaid:
			r.said, _ = r.said.Update(k)
		default:
			r.timeline, _ = r.timeline.Update(k)
		}
	case key.Matches(k, r.keys.Leave):
		sb.setStatus("")
		return r, nil, nav{to: screenPicker}
	}
	return r, nil, stay
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
func (r *runScreen) idle(k tea.KeyMsg) []string {
	switch {
	case (pressed(k, r.keys.Step) || pressed(k, r.keys.RunAll)) && !r.keys.Step.Enabled():
		return []string{fmt.Sprintf("the run is over (step %d of %d): b steps back, 0 starts again", r.pos, r.steps)}
	case (pressed(k, r.keys.StepBack) || pressed(k, r.keys.Restart)) && !r.keys.StepBack.Enabled():
		return []string{"this is the start: n runs the first step, r the whole run"}
	case pressed(k, r.keys.Compare) && !r.keys.Compare.Enabled():
		return []string{"nothing pinned yet: m pins this case, v then compares the pinned ones"}
	case k.String() == "x" && len(r.pinned) == 0:
		return []string{"nothing pinned yet: m pins this case"}
	case k.String() == "x":
		return []string{fmt.Sprintf("x clears the pins from the compare view: v opens it (%s)", termtext.Plural(len(r.pinned), "pinned case"))}
	case r.rec != nil && (pressed(k, r.keys.StableKeys) || pressed(k, r.keys.Policy) || pressed(k, r.keys.Contract) ||
		pressed(k, r.keys.KeySource) || pressed(k, r.keys.Fixture) || pressed(k, r.keys.AllFixtures)):
		return []string{errRecorded.Error(), "your client's own run: k, p, c, s, f and F are off"}
	case r.rec == nil && r.mission != nil && !hasLoneAttempt(r.base) && (pressed(k, r.keys.Fixture) || pressed(k, r.keys.AllFixtures)):
		return []string{"f and F replace a lone attempt's fixture, and every attempt of this mission is sent by workers together",
			"no lone attempt here for f or F to change"}
	case r.rec != nil && pressed(k, r.keys.Checkpoints):
		return []string{"a recorded client's run has no checkpoint rows: the timeline shows its requests and what the provider did"}
	case r.rec != nil && pressed(k, r.keys.Export):
		return []string{fmt.Sprintf("the recorded run is a file already, %s: replaylab replay, compare or check read it", termtext.CleanLine(r.recName)),
			"the recorded run is a file already: " + termtext.CleanLine(r.recName)}
	case pressed(k, r.keys.Evidence) && !r.keys.Evidence.Enabled() && r.rec != nil:
		return []string{"the provider's records show no intent gone wrong so far: g shows them once one is",
			"nothing gone wrong so far"}
	case pressed(k, r.keys.Evidence) && !r.keys.Evidence.Enabled():
		if r.settings.Policy != missions.Guarded {
			return []string{"g shows what the guarded caller hands a person; under the naive policy nothing is (p switches)",
				"nothing is handed to a person under the naive policy: p switches"}
		}
		if r.pos < r.steps {
			// Whether the run will escalate is for the steps to show.
			return []string{"nothing has been handed to a person so far: g shows the evidence once the guarded caller escalates",
				"nothing handed to a person so far"}
		}
		return []string{"the guarded caller settled every intent of this run: nothing was handed to a person",
			"the guarded caller settled every intent: nothing was handed to a person"}
	}
	return nil
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

// updateKeys turns on exactly the keys that do something now; none do
// while another screen is on top.
func (r *runScreen) updateKeys(onTop bool) {
	k := &r.keys
	lab := r.mission != nil && onTop
	k.Step.SetEnabled(lab && r.pos < r.steps)
	k.RunAll.SetEnabled(lab && r.pos < r.steps)
	k.StepBack.SetEnabled(lab && r.pos > 0)
	k.Restart.SetEnabled(lab && r.pos > 0)
	for _, b := range []*key.Binding{&k.Pin, &k.Focus, &k.Checkpoints, &k.Up, &k.Down, &k.PageUp, &k.PageDown, &k.Leave} {
		b.SetEnabled(lab)
	}
	// A recorded client's run cannot be changed: these are off, and the
	// header says why.
	for _, b := range []*key.Binding{&k.StableKeys, &k.Policy, &k.Contract, &k.Provider, &k.KeySource, &k.Fixture, &k.AllFixtures, &k.Export} {
		b.SetEnabled(lab && r.rec == nil)
	}
	if r.rec != nil {
		// A session's run has no caller's checkpoints to hide.
		k.Checkpoints.SetEnabled(false)
	}
	if r.mission != nil && !hasLoneAttempt(r.base) {
		// Only a lone attempt's fixture can be replaced.
		k.Fixture.SetEnabled(false)
		k.AllFixtures.SetEnabled(false)
	}
	if r.settings.KeySource == missions.KeyPayloadHash {
		k.StableKeys.SetHelp("k", "stable keys (no effect)")
	} else {
		k.StableKeys.SetHelp("k", "stable keys")
	}
	if r.timeline.CheckpointsHidden() {
		k.Checkpoints.SetHelp("h", "show checkpoints")
	} else {
		k.Checkpoints.SetHelp("h", "hide checkpoints")
	}
	k.Compare.SetEnabled(lab && len(r.pinned) > 0)
	k.Evidence.SetEnabled(lab && r.hasEvidence())
	switch r.focus {
	case focusTimeline:
		k.Up.SetHelp("↑/↓", "pick row")
		k.Focus.SetHelp("tab", "↑/↓ to the ledger")
	case focusLedger:
		k.Up.SetHelp("↑/↓", "scroll")
		k.Focus.SetHelp("tab", "↑/↓ to what was said")
	default:
		k.Up.SetHelp("↑/↓", "scroll")
		k.Focus.SetHelp("tab", "↑/↓ to the timeline")
	}
}

// ShortHelp is the help bar of the lab screen.
func (r runScreen) ShortHelp() []key.Binding {
	k := r.keys
	out := []key.Binding{k.Step, k.StepBack, k.Evidence, k.RunAll}
	if r.pos == r.steps {
		// At the end, pinning is what comes next.
		out = append(out, k.Pin)
	}
	switch {
	case r.settings.KeySource == missions.KeyPayloadHash:
		// Stable keys change nothing while keys are the payload's hash;
		// s is the way back to keys of their own.
		out = append(out, k.KeySource, k.Policy, k.Provider)
	case r.keySourceMatters():
		out = append(out, k.KeySource, k.StableKeys, k.Policy, k.Provider)
	default:
		out = append(out, k.StableKeys, k.Policy, k.Provider)
	}
	out = append(out, k.Checkpoints)
	if r.pos < r.steps {
		out = append(out, k.Pin)
	}
	out = append(out, k.Compare, k.Export)
	if !r.keySourceMatters() {
		out = append(out, k.KeySource)
	}
	return append(out, k.Leave)
}

// FullHelp is every key of the lab screen, in groups.
func (r runScreen) FullHelp() [][]key.Binding {
	k := r.keys
	return [][]key.Binding{
		{k.Step, k.StepBack, k.RunAll, k.Restart, k.Evidence},
		{k.StableKeys, k.Policy, k.Contract, k.Provider, k.KeySource, k.Fixture, k.AllFixtures},
		{k.Pin, k.Compare, k.Export},
		{k.Checkpoints, k.Focus, k.Up, k.PageUp},
		{k.Leave},
	}
}

// hint is what the status line suggests when nothing was just done.
func (r *runScreen) hint() []string {
	switch {
	case r.rec != nil && r.pos == r.steps:
		v := verdictSentence(r.cas.Outcome.Verdicts)
		return []string{v + " · g shows the provider's records · m pins this run, then v and a set a mission's case beside it",
			v + " · g: the provider's records", v}
	case r.rec != nil && r.hasEvidence():
		return []string{verdictSentence(r.cas.Outcome.Verdicts) + " so far · g shows what the provider recorded of it", "g: the provider's records"}
	case r.rec != nil:
		return []string{"n steps through your client's requests · r runs to the end · m pins the run",
			"n steps · r runs to the end · m pins"}
	case r.hasEvidence():
		return []string{"escalated: g shows the evidence a person is handed"}
	case r.pos == r.steps:
		// The verdict in words, then what to do next where it fits.
		v := verdictSentence(r.cas.Outcome.Verdicts)
		next := "m pins this case; change a setting (k, p, c) and pin again to compare"
		if r.keySourceMatters() {
			next = "m pins this case; s switches the key source, then pin again to compare"
		}
		if len(r.pinned) > 0 {
			next = fmt.Sprintf("%s · v compares", termtext.Plural(len(r.pinned), "pinned case"))
		}
		short := v
		if i := strings.IndexAny(v, ";,"); i > 0 {
			short = v[:i]
		}
		return []string{v + " · " + next, v, short}
	case len(r.pinned) > 0:
		return []string{fmt.Sprintf("%s · v compares", termtext.Plural(len(r.pinned), "pinned case"))}
	case r.keySourceMatters():
		return []string{"n steps through the schedule · r runs to the end · s switches the key source",
			"n steps · r runs to the end · s switches the key source"}
	}
	return []string{"n steps through the schedule · r runs to the end · k toggles stable keys",
		"n steps · r runs to the end · k toggles stable keys"}
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
			s = termtext.CleanLine(v.Intent) + " " + s
		}
		return s
	}
	return ""
}

// Layout of the lab screen.
const (
	gap = 2 // between columns
	// The bottom row of panels never takes more than this share of the
	// room below the header, so the timeline keeps most of it.
	bottomShareNum, bottomShareDen = 9, 20
	minBottom                      = 4 // a title and three lines
	minGoal                        = 3 // a title and two lines
	// From this width on, the schedule widens for its longest line.
	wideSchedule = 120
)

// SetSize gives the screen its box.
func (r *runScreen) SetSize(w, h int) {
	r.w, r.h = w, h
	r.layout()
}

// layout gives every panel its box. Widths come from the terminal.
// Heights come from the whole run under the current settings, so that
// stepping fills the panels without moving them: the schedule, the
// transcript and the ledger are as tall as the tallest of them needs, up
// to a share of the room; the timeline gets what it needs of the rest; the
// mission's goal fills what is left over, if there is enough for it; and
// a blank line parts the bands where there is still room.
func (r *runScreen) layout() {
	w, body := r.w, r.h
	if w < MinWidth || body < MinHeight-chromeLines {
		return
	}
	r.header.SetSize(w, headerHeight)
	sw := clamp(w*3/10, 24, 34)
	if r.full != nil {
		// The schedule gets what its longest line needs, up to three
		// eighths of the width (a third where that is wide enough),
		// rather than cutting a fixture's name.
		// Below wideSchedule it widens only where that shows every
		// line whole: a schedule cut all the same keeps its width for the
		// panels beside it.
		need := r.schedule.Width(r.full)
		switch {
		case w >= wideSchedule:
			sw = clamp(need, sw, max(sw, w/3))
		case len(r.mission.Intents) == 1:
			// One intent: the ledger's lines are short, and the
			// fixture's name is what the schedule is read for.
			sw = clamp(need, sw, max(sw, w*2/5))
		case need <= w*3/8:
			sw = max(sw, need)
		}
	}
	tw := (w - sw - 2*gap) / 2
	lw := w - sw - 2*gap - tw
	rest := body - headerHeight

	needB, needT := 0, rest
	dh := 0
	if r.full != nil {
		// Each need is measured only as far as the room: a long run's
		// ledger or rows fill it long before their end, and what would
		// be measured past that changes nothing on screen.
		needB = max(r.schedule.Height(), 1+ledgerLines(r.full.Ledger))
		if needB < rest {
			said := newTranscript(r.st)
			said.SetCase(r.full, r.steps)
			said.SetSize(tw, 0)
			needB = max(needB, said.Height(rest))
		}
		rows := r.timeline.rowsFor(r.full, rest)
		if r.full.Log().Len() > 0 {
			// The strip under the timeline is as tall as the run's
			// longest row needs, within a share of the screen. A run
			// of more rows than the screen has lines gets the whole
			// share: its rows are read a screen at a time, and
			// measuring every one of them is what a toggle on a long
			// mission would wait for.
			most := clamp(body/8, minDetail+1, maxDetail)
			dh = most
			if rows < rest {
				dh = clamp(r.timeline.detailNeed(r.full, w, most), minDetail, most)
			}
		}
		needT = 2 + max(1, rows) + dh
	}
	// The bottom row's share is of the room the strip leaves: the strip
	// belongs to the timeline's rows.
	capB := max(minBottom, (rest-dh)*bottomShareNum/bottomShareDen)
	if r.full == nil {
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
		gh = min(spare, r.goal.Height(w))
		spare -= gh
	}
	// Room still over lets long notes carry on under their rows, when the
	// whole run, wrapped, fits: the timeline never scrolls for it.
	wrapNotes := false
	if r.full != nil && spare > 0 && th == needT {
		if extra := r.timeline.wrapExtra(r.full, w, spare); extra > 0 && extra <= spare {
			th, spare, wrapNotes = th+extra, spare-extra, true
		}
	}
	// What is still over first parts the bands with a blank line each,
	// all of them or none so the spacing is even; the rest stays below the
	// bottom row, above the status line, so no panel ends in blank lines.
	r.sep, r.foot = 0, false
	if bands := 2 + min(gh, 1); spare >= bands {
		r.sep, spare = 1, spare-bands
		// A rule closes the bottom row, so the room under it reads as
		// the screen's margin, not as lines the panels left empty.
		r.foot = spare > 0
	}
	r.goal.SetSize(w, gh)
	if gh == 0 {
		// No room for the goal's panel: it shows in the timeline's empty
		// rows before the first step instead.
		r.timeline.SetGoal(r.goal.text)
	} else {
		r.timeline.SetGoal("")
	}
	r.timeline.SetDetailHeight(dh)
	r.timeline.SetWrap(wrapNotes)
	r.timeline.SetSize(w, th)
	r.schedule.SetSize(sw, bh)
	r.said.SetSize(tw, bh)
	r.holds.SetSize(lw, bh)
}

// View draws the lab screen in its box.
func (r *runScreen) View() string {
	bottom := lipgloss.JoinHorizontal(lipgloss.Top,
		r.schedule.View(), strings.Repeat(" ", gap), r.said.View(), strings.Repeat(" ", gap), r.holds.View())
	parts := []string{r.header.View()}
	band := func(v string) {
		for range r.sep {
			parts = append(parts, "")
		}
		parts = append(parts, v)
	}
	if g := r.goal.View(); g != "" {
		band(g)
	}
	band(r.timeline.View())
	band(bottom)
	if r.foot {
		parts = append(parts, r.st.Rule.Render(strings.Repeat("─", r.w)))
	}
	return lipgloss.JoinVertical(lipgloss.Left, parts...)
}

// chooseProvider runs the mission under the profile chosen in the
// chooser, keeping the position, as c does for the first three.
func (r *runScreen) chooseProvider(sb *statusBar, c ledger.Contract) {
	r.toggle(sb, func(o *missions.Overrides) { o.Contract = &c }, func(s missions.Settings) string { return s.Words(missions.SettingContract) })
}

// contracts are what c cycles through: the mission's own provider where
// it is not one of the first three, then v1, v2 and none (C chooses among
// every profile).
func (r *runScreen) contracts() []ledger.Contract {
	own := r.base.Contract
	if own == "" || providers.Short(own) {
		return missions.ShortContracts
	}
	return append([]ledger.Contract{own}, missions.ShortContracts...)
}
