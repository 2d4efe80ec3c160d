package lab

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

const evidenceTitle = "evidence for a person"

// evidenceView shows what the guarded executor hands a person when it
// escalates an intent: the intent and its key, the reason, every attempt
// as the caller recorded it, every read-back and what it found, and the
// provider's objects for the intent with their statuses. It shows the
// bundles of the run at the lab's current position, builds its lines when
// the case or the width changes, and scrolls.
type evidenceView struct {
	st      *Styles
	keys    scrollKeys
	w, h    int
	bundles []missions.EvidenceBundle
	labels  map[string]string // intent id → the words the agent uses for it
	ticks   map[string]int    // intent id → the tick it was handed over
	lines   []string
	// recorded: the bundles are a recorded client's, made from the
	// provider's records, not handed over by a caller.
	recorded bool
	scroller
}

func newEvidenceView(st *Styles) evidenceView {
	return evidenceView{st: st, keys: newScrollKeys()}
}

func (v *evidenceView) SetSize(w, h int) {
	if w != v.w {
		v.w = w
		v.build()
	}
	v.h = h
	v.clampOffset()
}

func (v *evidenceView) ShortHelp() []key.Binding {
	return []key.Binding{v.keys.Up}
}

func (v *evidenceView) FullHelp() [][]key.Binding {
	return [][]key.Binding{{v.keys.Up, v.keys.PageUp}}
}

// SetCase takes the evidence of the run so far and opens at its top.
func (v *evidenceView) SetCase(c *missions.Case) {
	v.bundles = c.Outcome.Evidence
	v.labels = map[string]string{}
	for _, in := range c.Mission.Intents {
		v.labels[in.ID] = in.Label
	}
	v.ticks = map[string]int{}
	log := c.Log()
	for i := range log.Len() {
		if log.Kind(i) == missions.EventEscalate {
			v.ticks[log.At(i).Intent] = log.Tick(i)
		}
	}
	v.offset = 0
	v.build()
}

func (v *evidenceView) rows() int { return max(0, v.h-1) }

// Scrolls reports whether the bundle is longer than the screen.
func (v *evidenceView) Scrolls() bool { return len(v.lines) > v.rows() }

func (v *evidenceView) clampOffset() { v.clampTo(len(v.lines) - v.rows()) }

// Update scrolls the bundle.
func (v evidenceView) Update(msg tea.Msg) (evidenceView, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		v.moveBy(v.keys.scroll(k, max(1, v.rows()-1)), len(v.lines)-v.rows())
	}
	return v, nil
}

func (v *evidenceView) View() string {
	if v.w <= 0 || v.h <= 0 {
		return ""
	}
	title, note := evidenceTitle, termtext.Plural(len(v.bundles), "escalated intent")
	if v.recorded {
		title, note = "the provider's records", termtext.Plural(len(v.bundles), "intent")+" gone wrong"
	}
	if len(v.lines) > v.rows() {
		note = fmt.Sprintf("lines %d–%d of %d, ↑↓ scroll", v.offset+1, min(len(v.lines), v.offset+v.rows()), len(v.lines))
	}
	out := []string{panelTitle(*v.st, title, note, false, v.w)}
	start, end := v.window(len(v.lines), v.rows())
	out = append(out, v.lines[start:end]...)
	return box(out, v.w, v.h)
}

// Where the values of the bundle's head ("key", "reason") start, after
// their names.
const evidenceNameW = 9

// build lays out every bundle at the current width.
func (v *evidenceView) build() {
	v.lines = v.lines[:0]
	if v.w <= 0 {
		return
	}
	for i := range v.bundles {
		if i > 0 {
			v.lines = append(v.lines, "")
		}
		v.bundle(&v.bundles[i])
	}
	if len(v.bundles) == 0 {
		v.lines = append(v.lines, v.st.Subtle.Render(cut("no intent has been handed to a person at this step", v.w)))
	}
}

// add appends lines.
func (v *evidenceView) add(ls ...string) { v.lines = append(v.lines, ls...) }

// addFlow appends spans flowed over as many lines as they need, the first
// after lead and the others after indent.
func (v *evidenceView) addFlow(spans []span, lead, indent string) {
	v.add(flow(spans, v.w, math.MaxInt, lead, indent)...)
}

// field adds a named value, wrapped under its own column.
func (v *evidenceView) field(name string, value []span) {
	v.addFlow(value, v.st.Subtle.Render(fit(name, evidenceNameW)), strings.Repeat(" ", evidenceNameW))
}

// section adds a heading: a name and a count.
func (v *evidenceView) section(s string) {
	v.add(v.st.Title.Render(cut(s, v.w)))
}

func (v *evidenceView) bundle(b *missions.EvidenceBundle) {
	st := v.st
	head := termtext.CleanLine(b.Intent)
	if l := v.labels[b.Intent]; l != "" {
		head += " · " + termtext.CleanLine(l)
	}
	if t, ok := v.ticks[b.Intent]; ok {
		head += fmt.Sprintf(" · handed over at t%d", t)
	}
	v.addFlow([]span{{head, st.Escalate, false}}, "", "")
	keyText := termtext.CleanLine(b.Key)
	if keyText == "" {
		keyText = "none: no key was sent"
	}
	v.field("key", []span{{keyText, st.Text, false}})
	v.field("reason", []span{{termtext.CleanLine(b.Reason), st.Text, false}})

	v.add("")
	v.section("attempts: " + fmt.Sprint(len(b.Attempts)))
	if len(b.Attempts) == 0 {
		v.add(st.Subtle.Render(cut(" none: nothing was sent", v.w)))
	}
	if !v.attemptTable(b.Attempts) {
		for i := range b.Attempts {
			v.attemptBlock(b.Attempts, i)
		}
	}

	v.add("")
	v.section("read-backs: " + fmt.Sprint(len(b.Reads)))
	if len(b.Reads) == 0 {
		v.add(st.Subtle.Render(cut(" none: the caller never read the ledger back", v.w)))
	}
	for _, r := range b.Reads {
		found := "found nothing"
		if len(r.Found) > 0 {
			found = "found " + termtext.CleanLine(r.Summary)
		}
		lead := " " + fit(fmt.Sprintf("t%d", r.Tick), 5)
		v.addFlow([]span{{found, st.Text, false}}, st.Subtle.Render(lead), strings.Repeat(" ", len(lead)))
	}

	v.add("")
	v.section("the provider's objects for it: " + fmt.Sprint(len(b.Objects)))
	if len(b.Objects) == 0 {
		v.add(st.Subtle.Render(cut(" none: the provider holds nothing for this intent", v.w)))
	}
	for _, o := range b.Objects {
		v.add(st.Text.Render(cut(" "+o.Object.String()+" "+o.Status.String(), v.w)))
	}
}

// responseText is what the caller heard: the code, object and status, or
// a dash when it heard nothing (a timeout, a crash).
func responseText(r *ledger.Response) string {
	if r == nil || r.Code == 0 {
		return "—"
	}
	s := fmt.Sprint(r.Code)
	if r.Object != 0 {
		s += " " + r.Object.String()
	}
	if r.Status != 0 {
		s += " " + r.Status.String()
	}
	return s
}

// changedPayload says whether attempt i sent other parameters than the
// first attempt did.
func changedPayload(as []missions.EvidenceAttempt, i int) bool {
	return i > 0 && as[i].Payload != as[0].Payload
}

// payloadStyle draws the payload of attempt i: a payload that differs from
// the first attempt's stands out, and the "≠ #1" after it says so without
// colour.
func (v *evidenceView) payloadStyle(as []missions.EvidenceAttempt, i int) lipgloss.Style {
	if changedPayload(as, i) {
		return v.st.Diverge
	}
	return v.st.Text
}

// attemptCells are the cells of one attempt, in table order.
func attemptCells(as []missions.EvidenceAttempt, i int) [7]string {
	a := as[i]
	payload := termtext.CleanLine(a.Payload)
	if changedPayload(as, i) {
		payload += fmt.Sprintf(" ≠ #%d", as[0].Attempt)
	}
	errText := termtext.CleanLine(a.Error)
	if errText == "" {
		errText = "—"
	}
	return [7]string{
		fmt.Sprintf("#%d", a.Attempt), fmt.Sprintf("t%d", a.Tick), keyCell(a.Key), payload,
		termtext.CleanLine(string(a.Observed)), errText, responseText(a.Response),
	}
}

var attemptHeads = [7]string{"#", "tick", "key", "payload", "observed", "error", "response"}

// attemptTable lays the attempts out one per row, when every row fits the
// width; it reports whether it did.
func (v *evidenceView) attemptTable(as []missions.EvidenceAttempt) bool {
	if len(as) == 0 {
		return true
	}
	var widths [7]int
	for c, h := range attemptHeads {
		widths[c] = lipgloss.Width(h)
	}
	cells := make([][7]string, len(as))
	for i := range as {
		cells[i] = attemptCells(as, i)
		for c, s := range cells[i] {
			widths[c] = max(widths[c], lipgloss.Width(s))
		}
	}
	total := 1
	for _, w := range widths {
		total += w + 2
	}
	if total-2 > v.w {
		return false
	}
	// row renders the cells, the payload in its own style.
	row := func(cs [7]string, style, payload lipgloss.Style) string {
		var b strings.Builder
		b.WriteString(style.Render(" "))
		for c, s := range cs {
			if c < len(cs)-1 {
				s = fit(s, widths[c])
			}
			if c == 3 {
				b.WriteString(payload.Render(s))
			} else {
				b.WriteString(style.Render(s))
			}
			if c < len(cs)-1 {
				b.WriteString("  ")
			}
		}
		return b.String()
	}
	v.add(strings.TrimRight(row(attemptHeads, v.st.Subtle, v.st.Subtle), " "))
	for i, cs := range cells {
		v.add(row(cs, v.st.Text, v.payloadStyle(as, i)))
	}
	return true
}

// attemptBlock lays out attempt i in two parts where the table does not
// fit: when and with which key and payload, then what the caller saw and
// what the provider answered.
func (v *evidenceView) attemptBlock(as []missions.EvidenceAttempt, i int) {
	st := v.st
	cs := attemptCells(as, i)
	lead := " " + fit(cs[0], 3) + " " + fit(cs[1], 4) + " "
	indent := strings.Repeat(" ", lipgloss.Width(lead))
	// Each name and each value stays on one line where it can.
	first := []span{{"key", st.Subtle, true}, {cs[2], st.Text, true}, {"· payload", st.Subtle, true}, {cs[3], v.payloadStyle(as, i), true}}
	if as[i].Key == "" {
		first = append([]span{{"no key", st.Text, true}}, first[2:]...)
	}
	v.addFlow(first, st.Subtle.Render(lead), indent)
	second := []span{{"observed", st.Subtle, true}, {cs[4], st.Text, true}, {"· error", st.Subtle, true}, {cs[5], st.Text, true},
		{"· response", st.Subtle, true}, {cs[6], st.Text, true}}
	v.addFlow(second, indent, indent)
}
