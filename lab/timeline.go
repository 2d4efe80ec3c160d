package lab

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// Fixed column widths of the timeline.
const (
	keyW      = 13 // ik_ + ten hex digits
	providerW = 11 // not_reached, late_commit
	observedW = 8  // conflict, mismatch
	effectsW  = 5  // "12 ↑"; wider when the count needs it
	noteMinW  = 16 // below this, notes of attempts are left out
)

// timeline is the scrollable list of the run's events. It keeps a
// reference to the case's events and builds only the rows on screen, so a
// run of ten thousand events draws as fast as a run of ten.
type timeline struct {
	st      *Styles
	keys    *KeyMap
	w, h    int
	events  []missions.Event
	pos     int
	offset  int
	follow  bool // stick to the newest events
	focused bool

	tickW, attW, fixW, effW int
}

func newTimeline(st *Styles, keys *KeyMap) timeline {
	return timeline{st: st, keys: keys, follow: true}
}

func (t *timeline) SetSize(w, h int) { t.w, t.h = w, h; t.clampOffset() }

func (t *timeline) ShortHelp() []key.Binding {
	return []key.Binding{t.keys.Up}
}

func (t *timeline) FullHelp() [][]key.Binding {
	return [][]key.Binding{{t.keys.Up, t.keys.PageUp}}
}

// SetCase shows the events of c after pos steps. The column widths come
// from the largest values, which sit at the end of the event list.
func (t *timeline) SetCase(c *missions.Case, pos int) {
	t.events, t.pos = c.Events, pos
	t.tickW, t.attW, t.effW = 4, 2, effectsW
	if n := len(c.Events); n > 0 {
		// Effects never go away, so the last count is the largest.
		t.effW = max(effectsW, len(fmt.Sprint(c.Events[n-1].Effects))+2)
		t.tickW = max(4, len(fmt.Sprint(c.Events[n-1].Tick))+1)
		for i := n - 1; i >= 0; i-- {
			if c.Events[i].Attempt > 0 {
				t.attW = max(2, len(fmt.Sprint(c.Events[i].Attempt))+1)
				break
			}
		}
	}
	t.fixW = len("checkpoint")
	for _, f := range missions.Fixtures {
		if fixtureUsed(&c.Mission, f) {
			t.fixW = max(t.fixW, len(f))
		}
	}
	t.clampOffset()
}

// fixtureUsed reports whether the mission's schedule names f. Missions
// name few distinct fixtures, so this stops early.
func fixtureUsed(m *missions.Mission, f missions.Fixture) bool {
	for _, st := range m.Schedule {
		if st.Fixture == f {
			return true
		}
		for _, tg := range st.Together {
			if tg.Fixture == f {
				return true
			}
		}
	}
	return false
}

// Follow scrolls to the newest events and keeps them in view.
func (t *timeline) Follow() { t.follow = true; t.clampOffset() }

func (t *timeline) rows() int { return max(0, t.h-2) }

func (t *timeline) clampOffset() {
	maxOff := max(0, len(t.events)-t.rows())
	if t.follow {
		t.offset = maxOff
	}
	t.offset = clamp(t.offset, 0, maxOff)
}

func (t *timeline) scroll(d int) {
	t.follow = false
	t.offset += d
	if t.offset >= len(t.events)-t.rows() {
		t.follow = true
	}
	t.clampOffset()
}

// Update scrolls when the timeline has the keys.
func (t timeline) Update(msg tea.Msg) (timeline, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return t, nil
	}
	switch {
	case key.Matches(k, t.keys.Up):
		t.scroll(-1)
	case key.Matches(k, t.keys.Down):
		t.scroll(1)
	case key.Matches(k, t.keys.PageUp):
		t.scroll(-max(1, t.rows()-1))
	case key.Matches(k, t.keys.PageDown):
		t.scroll(max(1, t.rows()-1))
	}
	return t, nil
}

// fixedW is the width of every column but the note.
func (t *timeline) fixedW(kw int) int {
	return 1 + t.tickW + 1 + t.attW + 1 + kw + 1 + t.fixW + 1 + providerW + 1 + observedW + 1 + t.effW
}

func (t *timeline) View() string {
	if t.w <= 0 || t.h <= 0 {
		return ""
	}
	note := fmt.Sprintf("%d events", len(t.events))
	if n := len(t.events); n > t.rows() && t.rows() > 0 {
		note = fmt.Sprintf("%d–%d of %d events", t.offset+1, min(n, t.offset+t.rows()), n)
	}
	lines := []string{panelTitle(*t.st, "timeline", note, t.focused, t.w)}
	kw := keyW
	if t.fixedW(kw) > t.w {
		kw = max(4, keyW-(t.fixedW(kw)-t.w))
	}
	noteW := t.w - t.fixedW(kw) - 1
	head := " " + fit("tick", t.tickW) + " " + fit("#", t.attW) + " " + fit("key", kw) + " " +
		fit("fixture", t.fixW) + " " + fit("provider", providerW) + " " + fit("observed", observedW) + " " + fit("eff", t.effW)
	if noteW >= noteMinW {
		head += " what happened"
	}
	lines = append(lines, t.st.Subtle.Render(cut(head, t.w)))
	if len(t.events) == 0 {
		lines = append(lines, t.st.Subtle.Render(cut(" nothing has happened yet: n sends the first step", t.w)))
		return box(lines, t.w, t.h)
	}
	end := min(len(t.events), t.offset+t.rows())
	for i := t.offset; i < end; i++ {
		lines = append(lines, t.row(i, kw, noteW))
	}
	return box(lines, t.w, t.h)
}

// row renders event i.
func (t *timeline) row(i, kw, noteW int) string {
	ev := &t.events[i]
	gutter, style := " ", t.st.Done
	if ev.Step == t.pos {
		gutter, style = "›", t.st.Now
	}
	tick := fit(fmt.Sprintf("t%d", ev.Tick), t.tickW)
	key := "—"
	if ev.Key != "" {
		key = export.CleanLine(ev.Key)
	}
	if ev.Kind != missions.EventAttempt && ev.Key == "" {
		key = ""
	}
	key = fit(key, kw)
	if ev.Kind != missions.EventAttempt {
		rest := t.w - (1 + t.tickW + 1 + t.attW + 1 + kw + 1 + t.fixW + 1)
		text := gutter + tick + " " + fit("", t.attW) + " " + key + " " + fit(string(ev.Kind), t.fixW) + " " +
			cut(export.CleanLine(ev.Note), rest)
		return style.Render(cut(text, t.w))
	}
	eff := fmt.Sprint(ev.Effects)
	if i > 0 && ev.Effects > t.events[i-1].Effects || i == 0 && ev.Effects > 0 {
		eff += " ↑"
	}
	text := gutter + tick + " " + fit(fmt.Sprintf("#%d", ev.Attempt), t.attW) + " " + key + " " +
		fit(export.CleanLine(string(ev.Fixture)), t.fixW) + " " + fit(export.CleanLine(ev.Provider), providerW) + " " +
		fit(export.CleanLine(string(ev.Observed)), observedW) + " " + fit(eff, t.effW)
	if noteW >= noteMinW {
		text += " " + cut(export.CleanLine(ev.Note), noteW)
	}
	return style.Render(strings.TrimRight(text, " "))
}
