package lab

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// screen names the screens the root routes to.
type screen int

const (
	screenPicker screen = iota
	screenLab
	screenCompare
	screenEvidence
	screenCourse
	screenGlossary
	screenProviders
)

// Every screen meets the component contract: its own keys, a box from
// the root, a view of exactly that box.
var (
	_ component = (*picker)(nil)
	_ component = (*runScreen)(nil)
	_ component = (*compareScreen)(nil)
	_ component = (*evidenceScreen)(nil)
	_ component = (*courseView)(nil)
	_ component = (*glossary)(nil)
	_ component = (*providerChooser)(nil)
)

// compareScreen is the pinned cases side by side, with its own keys.
type compareScreen struct {
	compareView
	keys compareKeys
}

func newCompareScreen(st *Styles) compareScreen {
	return compareScreen{compareView: newCompareView(st), keys: newCompareKeys()}
}

// Update takes a key of the compare view. pinned are the cases it shows,
// which e exports into dir; run are the lab screen's keys, for a word on
// those pressed here.
func (c compareScreen) Update(k tea.KeyMsg, sb *statusBar, dir string, pinned []*missions.Case, run runKeys) (compareScreen, tea.Cmd, nav) {
	stay := nav{to: screenCompare}
	switch {
	case key.Matches(k, c.keys.Leave):
		sb.leftScreen()
		return c, nil, nav{to: screenLab}
	case key.Matches(k, c.keys.Add):
		sb.setStatus(fmt.Sprintf("pick a mission to pin beside the %d pinned: enter opens it, then m pins it and comes back to compare", len(pinned)),
			"pick a mission: enter opens it; there m pins it and comes back to compare")
		return c, nil, nav{to: screenPicker, adding: true}
	case key.Matches(k, c.keys.Export):
		// A recorded client's run is a session file already: the cases
		// the lab made are what there is to write.
		var cases []*missions.Case
		for _, p := range pinned {
			if p.Settings.Policy != missions.RealClient {
				cases = append(cases, p)
			}
		}
		if len(cases) == 0 {
			sb.setStatus("the pinned run is a recorded session, a file already: replaylab replay, compare or check read it",
				"the pinned run is a session file already")
			return c, nil, stay
		}
		sb.setStatus(fmt.Sprintf("exporting %s…", termtext.Plural(len(cases), "pinned case")))
		write := exportCases(dir, cases...)
		skipped := len(pinned) - len(cases)
		return c, func() tea.Msg {
			msg := write().(exportedMsg)
			msg.recorded = skipped
			return msg
		}, nav{to: screenCompare, writes: 1, savesPins: true}
	case key.Matches(k, c.keys.Unpin):
		sb.setStatus("pins cleared")
		return c, nil, nav{to: screenLab, unpin: true}
	case key.Matches(k, c.keys.Up, c.keys.Down, c.keys.PageUp, c.keys.PageDown, c.keys.Left, c.keys.Right):
		c.compareView, _ = c.compareView.Update(k)
	default:
		if why := elsewhere(k, run); why != "" {
			sb.setStatus(why)
			sb.statusOnlyHere = true
		}
	}
	return c, nil, stay
}

func (c *compareScreen) updateKeys(pinned int) {
	k := &c.keys
	k.Add.SetEnabled(pinned > 0)
	k.Export.SetEnabled(pinned > 0)
	k.Unpin.SetEnabled(pinned > 0)
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown} {
		b.SetEnabled(c.Scrolls())
	}
	k.Left.SetEnabled(c.HiddenColumns())
	k.Right.SetEnabled(c.HiddenColumns())
}

func (c compareScreen) ShortHelp() []key.Binding {
	k := c.keys
	return []key.Binding{k.Up, k.Left, k.Add, k.Export, k.Unpin, k.Leave}
}

func (c compareScreen) FullHelp() [][]key.Binding {
	k := c.keys
	return [][]key.Binding{{k.Up, k.PageUp, k.Left}, {k.Add, k.Export, k.Unpin, k.Leave}}
}

func (c *compareScreen) hint() []string {
	// What a ◆ means is said in the view itself, beside the rows it
	// marks, where no status can take its place.
	return []string{"e exports every pinned case · a adds a mission's case · x clears the pins · esc goes back to the run",
		"e exports every pinned case · x clears the pins · esc goes back"}
}

// evidenceScreen is the evidence a person is handed, with its own keys.
type evidenceScreen struct {
	evidenceView
	keys evidenceKeys
}

func newEvidenceScreen(st *Styles) evidenceScreen {
	return evidenceScreen{evidenceView: newEvidenceView(st), keys: newEvidenceKeys()}
}

// Update takes a key of the evidence view.
func (e evidenceScreen) Update(k tea.KeyMsg, sb *statusBar, run runKeys) (evidenceScreen, nav) {
	switch {
	case key.Matches(k, e.keys.Back):
		sb.leftScreen()
		return e, nav{to: screenLab}
	case key.Matches(k, e.keys.Up, e.keys.Down, e.keys.PageUp, e.keys.PageDown):
		e.evidenceView, _ = e.evidenceView.Update(k)
	default:
		if why := elsewhere(k, run); why != "" {
			sb.setStatus(why)
			sb.statusOnlyHere = true
		}
	}
	return e, nav{to: screenEvidence}
}

func (e *evidenceScreen) updateKeys() {
	k := &e.keys
	for _, b := range []*key.Binding{&k.Up, &k.Down, &k.PageUp, &k.PageDown} {
		b.SetEnabled(e.Scrolls())
	}
}

func (e evidenceScreen) ShortHelp() []key.Binding { return []key.Binding{e.keys.Up, e.keys.Back} }
func (e evidenceScreen) FullHelp() [][]key.Binding {
	return [][]key.Binding{{e.keys.Up, e.keys.PageUp, e.keys.Back}}
}

// elsewhere says where a key of the lab screen works when it is pressed
// on the compare view or the evidence, where it does nothing, or "" when
// k is not such a key.
func elsewhere(k tea.KeyMsg, kb runKeys) string {
	for _, b := range []key.Binding{kb.Step, kb.StepBack, kb.RunAll, kb.Restart, kb.StableKeys, kb.Policy,
		kb.Contract, kb.KeySource, kb.Pin, kb.Compare, kb.Export, kb.Evidence, kb.Checkpoints, kb.Focus} {
		if pressed(k, b) {
			h := b.Help()
			return fmt.Sprintf("%s (%s) works on the run: esc goes back to it", h.Key, h.Desc)
		}
	}
	return ""
}
