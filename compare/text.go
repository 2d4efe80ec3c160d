package compare

import (
	"fmt"
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/render"
)

// minCaseColumn is the narrowest a case's column may get before the
// comparison splits its cases over several tables.
const minCaseColumn = 16

const (
	colSep  = " │ "
	ruleSep = "─┼─"
	// sepWidth is the display width of colSep and ruleSep.
	sepWidth = 3
)

// CompareText renders a comparison for a terminal width cells wide. When
// the cases do not fit side by side, they are split over several tables
// that each repeat the attempt column.
func CompareText(cmp Comparison, width int) []byte {
	width = max(width, render.MinTextWidth)
	var b strings.Builder
	writeStory(&b, cmp, width, ", aligned by attempt number")
	for _, h := range cmp.Cases {
		head := fmt.Sprintf("  %-3s %s (%s)", h.Name, h.Title, h.Mission)
		wrapText(&b, head, width, 6)
		wrapText(&b, "      "+render.SettingsLine(h.Settings), width, 6)
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
		wrapText(&b, DivergeLegend+".", width, 2)
	}
	if len(cmp.Pairs) > 0 {
		b.WriteString("\nWhat the pairs show:\n")
		for _, p := range cmp.Ranked() {
			wrapText(&b, "- "+p.Sentence, width, 2)
		}
	}
	return []byte(b.String())
}

// writeStory begins a text: what the cases show together, then the line
// that leads the list of cases ("6 cases" and what follows).
func writeStory(b *strings.Builder, cmp Comparison, width int, cases string) {
	if cmp.Story != "" {
		wrapText(b, cmp.Story, width, 0)
		b.WriteByte('\n')
	}
	fmt.Fprintf(b, "%s%s:\n", termtext.Plural(len(cmp.Cases), "case"), cases)
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
