package export

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/replaylab/replaylab/internal/termtext"
)

// DefaultTextWidth is the width text output assumes when it cannot ask a
// terminal.
const DefaultTextWidth = 100

// MinTextWidth is the narrowest width text output lays itself out for;
// narrower requests are laid out at this width.
const MinTextWidth = 40

// minCaseColumn is the narrowest a case's column may get before the
// comparison splits its cases over several tables.
const minCaseColumn = 16

const (
	colSep  = " │ "
	ruleSep = "─┼─"
	// sepWidth is the display width of colSep and ruleSep.
	sepWidth = 3
)

// textTable is a table for the terminal. Cells never hold newlines; a cell
// wider than its column is word-wrapped, and a word wider than the column
// is broken, so no line of the table is ever wider than asked.
type textTable struct {
	header []string
	rows   []textRow
	// fixed is how many leading columns keep their natural width; the
	// others share what is left.
	fixed int
}

type textRow struct {
	cells []string
	// rule draws a horizontal rule above the row.
	rule bool
}

// widths lays the columns out within total display cells.
func (t textTable) widths(total int) []int {
	n := len(t.header)
	natural := make([]int, n)
	measure := func(cells []string) {
		for i, c := range cells {
			natural[i] = max(natural[i], ansi.StringWidth(c))
		}
	}
	measure(t.header)
	for _, r := range t.rows {
		measure(r.cells)
	}
	w := make([]int, n)
	left := total - sepWidth*(n-1)
	for i := 0; i < t.fixed && i < n; i++ {
		w[i] = max(1, natural[i])
		left -= w[i]
	}
	// Share what is left among the other columns: each gets an equal
	// share or its natural width if smaller, and what the small ones do
	// not use goes to the others.
	open := []int{}
	for i := t.fixed; i < n; i++ {
		open = append(open, i)
	}
	for len(open) > 0 {
		share := max(1, left/len(open))
		var still []int
		for _, i := range open {
			if natural[i] <= share {
				w[i] = max(1, natural[i])
				left -= w[i]
			} else {
				still = append(still, i)
			}
		}
		if len(still) == len(open) {
			for k, i := range still {
				w[i] = max(1, left/len(still))
				if k < left%len(still) {
					w[i]++
				}
			}
			break
		}
		open = still
	}
	return w
}

// render writes the table at most total display cells wide.
func (t textTable) render(b *strings.Builder, total int) {
	w := t.widths(total)
	rule := func() {
		parts := make([]string, len(w))
		for i, n := range w {
			parts[i] = strings.Repeat("─", n)
		}
		b.WriteString(strings.Join(parts, ruleSep))
		b.WriteByte('\n')
	}
	t.line(b, w, t.header)
	rule()
	for _, r := range t.rows {
		if r.rule {
			rule()
		}
		t.line(b, w, r.cells)
	}
}

// line writes one row, wrapping each cell within its column.
func (t textTable) line(b *strings.Builder, w []int, cells []string) {
	wrapped := make([][]string, len(w))
	height := 1
	for i := range w {
		var c string
		if i < len(cells) {
			c = cells[i]
		}
		wrapped[i] = wrapCell(c, w[i])
		height = max(height, len(wrapped[i]))
	}
	for l := 0; l < height; l++ {
		var sb strings.Builder
		for i := range w {
			if i > 0 {
				sb.WriteString(colSep)
			}
			var s string
			if l < len(wrapped[i]) {
				s = wrapped[i][l]
			}
			sb.WriteString(s)
			sb.WriteString(strings.Repeat(" ", max(0, w[i]-ansi.StringWidth(s))))
		}
		b.WriteString(strings.TrimRight(sb.String(), " "))
		b.WriteByte('\n')
	}
}

// wrapCell breaks s into lines at most width cells wide: at spaces where
// it can (after underscores, in a single word that has them), inside words
// where it must. A line that still does not fit (a
// character wider than the column) is cut with an ellipsis.
func wrapCell(s string, width int) []string {
	if s == "" {
		return []string{""}
	}
	breaks := ""
	if !strings.Contains(s, " ") && strings.Contains(s, "_") {
		// One word with underscores (a fixture's name) breaks after one
		// of them rather than inside a word.
		breaks = "_"
	}
	lines := strings.Split(ansi.Wrap(s, width, breaks), "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, " ")
		if ansi.StringWidth(l) > width {
			l = ansi.Truncate(l, width, "…")
		}
		lines[i] = l
	}
	return lines
}

// wrapText wraps a paragraph to width, indenting every line after the
// first by indent spaces.
func wrapText(b *strings.Builder, s string, width, indent int) {
	first := true
	for _, l := range wrapCell(s, max(1, width-indent)) {
		if !first {
			b.WriteString(strings.Repeat(" ", indent))
		}
		first = false
		b.WriteString(l)
		b.WriteByte('\n')
	}
}

// CompareText renders a comparison for a terminal width cells wide. When
// the cases do not fit side by side, they are split over several tables
// that each repeat the attempt column.
func CompareText(cmp Comparison, width int) []byte {
	width = max(width, MinTextWidth)
	var b strings.Builder
	if cmp.Story != "" {
		wrapText(&b, cmp.Story, width, 0)
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%s, aligned by attempt number:\n", termtext.Plural(len(cmp.Cases), "case"))
	for _, h := range cmp.Cases {
		head := fmt.Sprintf("  %-3s %s (%s)", h.Name, h.Title, h.Mission)
		wrapText(&b, head, width, 6)
		wrapText(&b, "      "+SettingsLine(h.Settings), width, 6)
		if h.Source != "" {
			wrapText(&b, "      from "+termtext.CleanLine(h.Source), width, 6)
		}
	}
	for _, n := range cmp.Notes {
		b.WriteByte('\n')
		wrapText(&b, "Note: "+n, width, 6)
	}
	for _, group := range caseGroups(cmp, width) {
		b.WriteByte('\n')
		compareTable(cmp, group).render(&b, width)
	}
	if cmp.Diverge > 0 {
		b.WriteByte('\n')
		wrapText(&b, DivergeMark+" an attempt where two cases' ledgers first diverge while the agent's words are the same.", width, 2)
	}
	if len(cmp.Pairs) > 0 {
		b.WriteString("\nWhat the pairs show:\n")
		for _, p := range cmp.Ranked() {
			wrapText(&b, "- "+p.Sentence, width, 2)
		}
	}
	return []byte(b.String())
}

// Field names of a comparison table's sub-rows.
const (
	fieldIntent   = "intent"
	fieldFixture  = "fixture"
	fieldObserved = "observed"
	fieldSaid     = "agent said"
	fieldEffects  = "effects"
	fieldVerdicts = "verdicts"
)

// caseGroups splits the cases into runs that fit side by side in width.
func caseGroups(cmp Comparison, width int) [][]int {
	fixedW := len("outcome") + sepWidth + len(fieldSaid)
	per := max(1, (width-fixedW)/(minCaseColumn+sepWidth))
	var groups [][]int
	for i := 0; i < len(cmp.Cases); i += per {
		var g []int
		for k := i; k < min(i+per, len(cmp.Cases)); k++ {
			g = append(g, k)
		}
		groups = append(groups, g)
	}
	return groups
}

// showIntents reports whether the rows should name the intent: only when
// the cases involve more than one.
func showIntents(cmp Comparison) bool {
	seen := ""
	for _, r := range cmp.Rows {
		for _, c := range r.Cells {
			if !c.Present {
				continue
			}
			if seen != "" && c.Intent != seen {
				return true
			}
			seen = c.Intent
		}
	}
	return false
}

// fieldRows is a comparison as rows of label, field and one value per
// case; text and Markdown lay these out each their own way.
type fieldRow struct {
	label  string // the attempt number or "outcome", on the first sub-row only
	field  string
	values []string
	first  bool // the first sub-row of an attempt
}

func fieldRows(cmp Comparison, group []int) []fieldRow {
	var out []fieldRow
	intents := showIntents(cmp)
	for _, r := range cmp.Rows {
		label := fmt.Sprint(r.Attempt)
		if r.Divergent {
			label += " " + DivergeMark
		}
		fields := []string{fieldFixture, fieldObserved, fieldSaid, fieldEffects}
		if intents {
			fields = append([]string{fieldIntent}, fields...)
		}
		for k, f := range fields {
			fr := fieldRow{field: f, first: k == 0}
			if k == 0 {
				fr.label = label
			}
			for _, i := range group {
				fr.values = append(fr.values, cellValue(r.Cells[i], f))
			}
			out = append(out, fr)
		}
	}
	eff := fieldRow{label: "outcome", field: fieldEffects, first: true}
	ver := fieldRow{field: fieldVerdicts}
	for _, i := range group {
		o := cmp.Outcomes[i]
		eff.values = append(eff.values, fmt.Sprintf("%d of %d intended", o.Effects, o.Intended))
		ver.values = append(ver.values, strings.Join(verdictWords(o), "; "))
	}
	return append(out, eff, ver)
}

func cellValue(c Cell, field string) string {
	if !c.Present {
		if field == fieldFixture {
			return "(not sent)"
		}
		return ""
	}
	switch field {
	case fieldIntent:
		return c.Intent
	case fieldFixture:
		return string(c.Fixture)
	case fieldObserved:
		return string(c.Observed)
	case fieldSaid:
		if c.Said == "" {
			return "(nothing)"
		}
		return c.Said
	case fieldEffects:
		return fmt.Sprint(c.Effects)
	}
	return ""
}

func compareTable(cmp Comparison, group []int) textTable {
	t := textTable{header: []string{"attempt", ""}, fixed: 2}
	for _, i := range group {
		t.header = append(t.header, cmp.Cases[i].Heading())
	}
	for k, fr := range fieldRows(cmp, group) {
		t.rows = append(t.rows, textRow{
			cells: append([]string{fr.label, fr.field}, fr.values...),
			rule:  fr.first && k > 0,
		})
	}
	return t
}
