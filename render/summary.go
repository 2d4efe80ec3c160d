package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// The summary table's columns at full width: with the gaps it is 96
// columns wide, which fits the default text width (100).
const (
	colTick   = 5
	colWhat   = 36
	colSay    = 34
	colLedger = 17
	colGap    = 2
)

// summaryCols are the widths of the summary table's columns.
type summaryCols struct{ tick, what, say, ledger int }

// summaryLayout fits the summary table to width columns: the full table
// where it fits, otherwise the two columns of words share what is left,
// in the full table's proportions. Narrower than MinTextWidth is
// laid out at that width.
func summaryLayout(width int) summaryCols {
	width = max(width, MinTextWidth)
	full := summaryCols{colTick, colWhat, colSay, colLedger}
	if width >= colTick+colWhat+colSay+colLedger+2*colGap {
		return full
	}
	c := full
	if width < 80 {
		c.ledger = 12 // "12 effects" and an object id or two
	}
	rest := width - c.tick - c.ledger - 2*colGap
	c.what = rest * colWhat / (colWhat + colSay)
	c.say = rest - c.what
	return c
}

// WriteSummary prints the human summary of a case: the transcript beside
// the ledger, event by event, then the outcome and the verdicts.
// It fits width columns (see summaryLayout).
func WriteSummary(w io.Writer, c *missions.Case, width int) {
	cols := summaryLayout(width)
	m := &c.Mission
	s := c.Settings
	lineW := cols.tick + cols.what + cols.say + cols.ledger + 2*colGap
	para := func(text string) {
		for _, line := range termtext.Wrap(termtext.CleanLine(text), lineW) {
			fmt.Fprintln(w, line)
		}
	}
	para(termtext.CleanLine(m.ID) + " — " + termtext.CleanLine(m.Title))
	var settings []string
	for _, f := range missions.AllSettings[:5] {
		settings = append(settings, s.Words(f))
	}
	settings = append(settings, BudgetWords(s)...)
	for _, line := range joinFitting(settings, " · ", lineW) {
		fmt.Fprintln(w, termtext.CleanLine(line))
	}
	fmt.Fprintln(w)

	writeRow(w, cols, []string{"tick"}, termtext.Wrap("what happened", cols.what), termtext.Wrap("the agent says", cols.say), termtext.Wrap("ledger after", cols.ledger))
	writeRow(w, cols, []string{"----"}, []string{strings.Repeat("-", cols.what)}, []string{strings.Repeat("-", cols.say)}, []string{strings.Repeat("-", cols.ledger)})
	held := HeldAfter(c, 4, 1)
	for _, r := range summaryRows(c.Events) {
		say := []string{""}
		if r.say != "" {
			say = termtext.Wrap(`"`+termtext.CleanLine(r.say)+`"`, cols.say)
		}
		what := describeEvent(r.ev, cols.what)
		if len(r.checkpoints) > 0 {
			what = append(what, termtext.Wrap(termtext.CleanLine("checkpoint: "+strings.Join(r.checkpoints, " → ")), cols.what)...)
		}
		writeRow(w, cols, []string{fmt.Sprintf("t%d", r.ev.Tick)}, what, say, ledgerAfter(r.effects, held[r.at], cols.ledger))
	}

	o := c.Outcome
	failed, canceled := 0, 0
	for _, obj := range c.Ledger.Objects {
		switch obj.Status {
		case ledger.Failed:
			failed++
		case ledger.Canceled:
			canceled++
		}
	}
	effects := fmt.Sprint(o.Effects)
	if failed > 0 {
		// Objects that ended failed are not effects: their mutation never
		// took hold. Say they exist all the same.
		effects += fmt.Sprintf(" · %s ended failed", termtext.Plural(failed, "object"))
	}
	if canceled > 0 {
		effects += fmt.Sprintf(" · %s canceled", termtext.Plural(canceled, "object"))
	}
	fmt.Fprintln(w)
	para(fmt.Sprintf("effects %s · intended %d · succeeded %d", effects, o.Intended, o.Succeeded))
	idW := 0
	for _, v := range o.Verdicts {
		idW = max(idW, ansi.StringWidth(termtext.CleanLine(v.Intent)))
	}
	for _, v := range o.Verdicts {
		id := termtext.CleanLine(v.Intent)
		lead := fmt.Sprintf("  %s%s  %-14s  ", id, strings.Repeat(" ", idW-ansi.StringWidth(id)), v.Verdict)
		for _, line := range hang(lead, v.Explain(), lineW) {
			fmt.Fprintln(w, line)
		}
	}
	for _, e := range o.Evidence {
		for i, line := range termtext.Wrap(fmt.Sprintf("escalated %s: %s", e.Intent, e.Reason), lineW-4) {
			if i > 0 {
				line = "  " + line
			}
			fmt.Fprintf(w, "  %s\n", termtext.CleanLine(line))
		}
	}
}

// summaryRow is one row of the summary: an event with the checkpoint changes
// that belong to it folded in, and what the agent said by the row's end.
// at is the index of the row's last event, whose ledger the row shows.
type summaryRow struct {
	ev          missions.Event
	checkpoints []string
	say         string
	effects     int
	at          int
}

// summaryRows folds checkpoint events into the rows they belong to: the ones
// recorded just before a send go with that send, the ones after an event go
// with it. Every other event is a row of its own.
func summaryRows(events []missions.Event) []summaryRow {
	var rows []summaryRow
	var pending []int
	alone := func(i int) summaryRow {
		return summaryRow{ev: events[i], say: events[i].Say, effects: events[i].Effects, at: i}
	}
	for i, ev := range events {
		if ev.Kind == missions.EventCheckpoint {
			if n := len(rows); n > 0 && len(pending) == 0 && rows[n-1].ev.Intent == ev.Intent && !sendsNext(ev) {
				rows[n-1].checkpoints = append(rows[n-1].checkpoints, string(ev.Checkpoint))
				rows[n-1].effects = ev.Effects
				rows[n-1].at = i
				if ev.Say != "" {
					rows[n-1].say = ev.Say
				}
				continue
			}
			pending = append(pending, i)
			continue
		}
		r := alone(i)
		if len(pending) > 0 && events[pending[0]].Intent == ev.Intent {
			for _, p := range pending {
				r.checkpoints = append(r.checkpoints, string(events[p].Checkpoint))
			}
			pending = nil
		}
		for _, p := range pending {
			rows = append(rows, alone(p))
		}
		pending = nil
		rows = append(rows, r)
	}
	for _, p := range pending {
		rows = append(rows, alone(p))
	}
	return rows
}

// sendsNext reports whether a checkpoint is recorded on the way to a send.
func sendsNext(ev missions.Event) bool {
	return ev.Checkpoint == missions.Approved || ev.Checkpoint == missions.Submitted
}

// describeEvent is the "what happened" cell of an event, colWhat wide.
func describeEvent(ev missions.Event, colWhat int) []string {
	var lines []string
	switch ev.Kind {
	case missions.EventAttempt:
		lines = append(lines, termtext.Wrap(fmt.Sprintf("attempt %d → %s", ev.Attempt, ev.Fixture), colWhat)...)
		who := ev.Intent
		if ev.Worker > 0 {
			who += fmt.Sprintf(" · worker %d", ev.Worker)
		}
		if ev.Key != "" {
			who += " · key " + ev.Key
		} else {
			who += " · no key"
		}
		lines = append(lines, termtext.Wrap(who, colWhat)...)
		lines = append(lines, termtext.Wrap(ev.Note, colWhat)...)
		seen := fmt.Sprintf("→ the caller sees: %s", ev.Observed)
		if ev.Class != "" {
			seen += " (" + string(ev.Class) + ")"
		}
		lines = append(lines, termtext.Wrap(seen, colWhat)...)
	case missions.EventCheckpoint:
		// One line where the note only repeats the new state.
		head := fmt.Sprintf("%s → %s", ev.Intent, ev.Checkpoint)
		if ev.Note != "" && ev.Note != string(ev.Checkpoint) {
			head += ": " + ev.Note
		}
		lines = append(lines, termtext.Wrap(head, colWhat)...)
	default:
		head := string(ev.Kind)
		if ev.Intent != "" {
			head += " · " + ev.Intent
		}
		lines = append(lines, termtext.Wrap(head, colWhat)...)
		lines = append(lines, termtext.Wrap(ev.Note, colWhat)...)
	}
	for i := range lines {
		lines[i] = termtext.CleanLine(lines[i])
	}
	return lines
}

// ledgerAfter is the "ledger after" cell: the effect count and the objects
// that stood then (HeldAfter).
func ledgerAfter(effects int, h Held, colLedger int) []string {
	lines := []string{termtext.Plural(effects, "effect")}
	return append(lines, termtext.Wrap(strings.Join(h.IDs(), " "), colLedger)...)
}

// joinFitting joins items with sep into lines at most width columns wide,
// breaking only between items where it can, so "seed 1" is never split
// from its number; an item wider than a line is wrapped on its own.
func joinFitting(items []string, sep string, width int) []string {
	var lines []string
	cur := ""
	for _, it := range items {
		switch {
		case cur == "":
			cur = it
		case ansi.StringWidth(cur+sep+it) <= width:
			cur += sep + it
		default:
			lines = append(lines, cur)
			cur = it
		}
		if ansi.StringWidth(cur) > width {
			parts := termtext.Wrap(cur, width)
			lines = append(lines, parts[:len(parts)-1]...)
			cur = parts[len(parts)-1]
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// hang puts text after lead, wrapped so that every line is at most width
// columns wide and the lines after the first start under the text; where
// that leaves the text too little room, it goes under lead, indented.
func hang(lead, text string, width int) []string {
	lw := ansi.StringWidth(lead)
	if lw+ansi.StringWidth(text) <= width {
		return []string{lead + text}
	}
	indent := lw
	if width-lw < 24 {
		indent = 4
	}
	lines := termtext.Wrap(text, width-indent)
	out := make([]string, 0, len(lines)+1)
	if indent == lw {
		out = append(out, lead+lines[0])
		lines = lines[1:]
	} else {
		out = append(out, strings.TrimRight(lead, " "))
	}
	for _, l := range lines {
		out = append(out, strings.Repeat(" ", indent)+l)
	}
	return out
}

// writeRow prints one table row whose cells may span several lines.
func writeRow(w io.Writer, cols summaryCols, cells ...[]string) {
	widths := []int{cols.tick, cols.what, cols.say, cols.ledger}
	rows := 0
	for _, c := range cells {
		rows = max(rows, len(c))
	}
	for i := range rows {
		var b strings.Builder
		for j, c := range cells {
			text := ""
			if i < len(c) {
				text = c[i]
			}
			if j == len(cells)-1 {
				b.WriteString(text)
				break
			}
			b.WriteString(text)
			pad := widths[j] - ansi.StringWidth(text)
			if j > 0 {
				pad += colGap
			}
			b.WriteString(strings.Repeat(" ", max(pad, 1)))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
