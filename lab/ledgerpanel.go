package lab

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// ledgerPanel shows what the provider's ledger holds after the current
// step: its objects (the effects) and its idempotency records. It scrolls
// when it has the keys and builds only the lines on screen.
type ledgerPanel struct {
	st    *Styles
	keys  scrollKeys
	names keyNames
	w, h  int
	snap  ledger.Snapshot
	many  bool // several intents: name the intent on each object
	// standIn says, where the mission keeps keys for its own number of
	// ticks, what that stands in for: "8 ticks here; stripe-v1 keeps
	// keys 24 h".
	standIn string
	scroller
	focused bool
}

func newLedgerPanel(st *Styles) ledgerPanel {
	return ledgerPanel{st: st, keys: newScrollKeys()}
}

func (p *ledgerPanel) SetSize(w, h int) { p.w, p.h = w, h; p.clampOffset() }

func (p *ledgerPanel) ShortHelp() []key.Binding {
	return []key.Binding{p.keys.Up}
}

func (p *ledgerPanel) FullHelp() [][]key.Binding {
	return [][]key.Binding{{p.keys.Up, p.keys.PageUp}}
}

// SetCase shows the ledger of c.
func (p *ledgerPanel) SetCase(c *missions.Case) {
	p.snap, p.many = c.Ledger, len(c.Mission.Intents) > 1
	p.standIn = missions.RetentionStandIn(&c.Mission, c.Settings)
	p.clampOffset()
}

// SetNames gives the panel the run's key letters, for its records.
func (p *ledgerPanel) SetNames(k keyNames) { p.names = k }

func (p *ledgerPanel) rows() int { return max(0, p.h-1) }

// lineCount is the number of lines of the whole ledger: a heading and at
// least one line for objects, the same for records.
func (p *ledgerPanel) lineCount() int { return ledgerLines(p.snap) }

func ledgerLines(s ledger.Snapshot) int {
	return 2 + max(1, len(s.Objects)) + max(1, len(s.Records))
}

func (p *ledgerPanel) clampOffset() { p.clampTo(p.lineCount() - p.rows()) }

// Update scrolls when the ledger has the keys.
func (p ledgerPanel) Update(msg tea.Msg) (ledgerPanel, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		p.moveBy(p.keys.scroll(k, max(1, p.rows()-1)), p.lineCount()-p.rows())
	}
	return p, nil
}

// line builds line i of the whole ledger.
func (p *ledgerPanel) line(i int) string {
	objs, recs := p.snap.Objects, p.snap.Records
	objLines := max(1, len(objs))
	switch {
	case i == 0:
		// The ledger says how many of its objects count as effects: one
		// that ended failed is kept but moved no money.
		count := termtext.Plural(p.snap.Effects, "effect")
		if failed := len(objs) - p.snap.Effects; failed > 0 {
			count += fmt.Sprintf(", %d failed", failed)
		}
		// Narrow, the count keeps its words and the heading gives way.
		return p.st.Title.Render(cut(firstFit("objects: "+count, []string{count}, p.w), p.w))
	case i <= objLines:
		if len(objs) == 0 {
			return p.st.Subtle.Render(cut(firstFit(" none: nothing committed", []string{" nothing committed", " none"}, p.w), p.w))
		}
		return p.st.Text.Render(p.objectLine(objs[i-1]))
	case i == objLines+1:
		head := fmt.Sprintf("idempotency records: %d", len(recs))
		if p.standIn != "" {
			// The mission's ticks stand in for the profile's wall time:
			// said where it fits, left out where it does not.
			head = firstFit(head+" · kept "+p.standIn, []string{head}, p.w)
		}
		return p.st.Title.Render(cut(head, p.w))
	}
	j := i - objLines - 2
	if len(recs) == 0 {
		if j == 0 {
			return p.st.Subtle.Render(cut(firstFit(" none: no key saved", []string{" no key saved", " none"}, p.w), p.w))
		}
		return ""
	}
	if j >= len(recs) {
		return ""
	}
	r := recs[j]
	// "key A → 200 re_0001 · kept to t100": the key, the answer saved
	// under it, and until when the provider keeps it.
	s := " " + p.names.name(r.Key) + " →"
	if r.Response.Code != 0 {
		s += fmt.Sprintf(" %d", r.Response.Code)
	}
	if r.Response.Object != 0 {
		s += " " + r.Response.Object.String()
	}
	if r.State != ledger.RecordSaved {
		s += " " + r.State.String()
	}
	if until := fmt.Sprintf(" · kept to t%d", r.ExpiresAt); ansi.StringWidth(s)+len(until) <= p.w {
		s += until
	}
	return p.st.Text.Render(cut(s, p.w))
}

// objectLine is one object in at most p.w cells: its id, its status and
// the tick it took that status, with how long it was pending, and its
// intent where the mission has several (its end, where it does not fit
// whole). A pending object that resolved
// took its status when it resolved, as the timeline's row says. Where
// the line is too long the pending note goes first, then the tick, so the
// intent that tells two objects apart stays whole.
func (p *ledgerPanel) objectLine(o ledger.Object) string {
	base := fmt.Sprintf(" %s %s", o.ID, o.Status)
	at, note := fmt.Sprintf(" t%d", o.Tick), ""
	switch {
	case o.Status == ledger.Pending && o.ResolveAt > 0:
		note = fmt.Sprintf(" (until t%d)", o.ResolveAt)
	case o.ResolveAt > 0:
		at, note = fmt.Sprintf(" t%d", o.ResolveAt), fmt.Sprintf(" (pending from t%d)", o.Tick)
	}
	intent := ""
	if p.many {
		intent = " " + termtext.CleanLine(o.Intent)
	}
	for _, s := range []string{base + at + note + intent, base + at + intent, base + intent} {
		if lipgloss.Width(s) <= p.w {
			return s
		}
	}
	// Intents of one mission tend to differ at their end (refund-1042-a,
	// refund-1042-b): keep the end.
	if room := p.w - lipgloss.Width(base) - 1; p.many && room >= 2 {
		return base + " …" + ansi.TruncateLeft(intent[1:], lipgloss.Width(intent)-1-(room-1), "")
	}
	return cut(base+intent, p.w)
}

func (p *ledgerPanel) View() string {
	if p.w <= 0 || p.h <= 0 {
		return ""
	}
	note := fmt.Sprintf("t%d", p.snap.Tick)
	if p.lineCount() > p.rows() {
		note = fmt.Sprintf("%d/%d ↕", p.offset+1, p.lineCount())
	}
	name := "the ledger holds"
	if focus := 2 * btoi(p.focused); focus+ansi.StringWidth(name)+3+ansi.StringWidth(note) > p.w {
		// Narrow: the scroll position says more than the longer name.
		name = "ledger"
	}
	lines := []string{panelTitle(*p.st, name, note, p.focused, p.w)}
	start, end := p.window(p.lineCount(), p.rows())
	for i := start; i < end; i++ {
		lines = append(lines, p.line(i))
	}
	return box(lines, p.w, p.h)
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
