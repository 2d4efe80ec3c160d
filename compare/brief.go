package compare

import (
	"fmt"
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/render"
)

// BriefPairs is how many pairs the brief text lists: the ones that differ
// most, by Ranked.
const BriefPairs = 3

// CompareBrief renders a comparison in few lines, for a terminal width
// cells wide: what the cases show together, one entry per case (what
// sets it apart, how it ended, the file it came from) and the pairs that
// differ most. CompareText is every pair, with the attempts side by side;
// the brief says how to ask for it, as more.
func CompareBrief(cmp Comparison, width int, more string) []byte {
	width = max(width, render.MinTextWidth)
	var b strings.Builder
	writeStory(&b, cmp, width, "")
	for i, h := range cmp.Cases {
		label := h.Label
		if label == "" {
			label = h.Mission
		}
		wrapText(&b, fmt.Sprintf("  %-3s %s: %s", h.Name, label, endWords(cmp.Outcomes[i])), width, 6)
		if h.Source != "" {
			wrapText(&b, "      "+termtext.CleanLine(h.Source), width, 6)
		}
	}
	for _, n := range cmp.Notes {
		b.WriteByte('\n')
		wrapText(&b, "Note: "+n, width, 6)
	}
	ranked := cmp.Ranked()
	if len(ranked) > 0 {
		b.WriteString("\nWhat differs most:\n")
		for _, p := range ranked[:min(len(ranked), BriefPairs)] {
			wrapText(&b, "- "+p.Sentence, width, 2)
		}
	}
	if rest := len(ranked) - BriefPairs; more != "" {
		b.WriteByte('\n')
		what := "the attempts side by side"
		if rest > 0 {
			what = fmt.Sprintf("the other %s, and the attempts side by side", termtext.Plural(rest, "pair"))
		}
		wrapText(&b, fmt.Sprintf("%s: %s", strings.ToUpper(what[:1])+what[1:], more), width, 2)
	}
	return []byte(b.String())
}

// endWords is how a case ended, short: its effects against those
// intended, then each intent's verdict.
func endWords(o OutcomeCell) string {
	vs := make([]string, len(o.Verdicts))
	for i, v := range o.Verdicts {
		vs[i] = string(v.Verdict)
		if len(o.Verdicts) > 1 {
			vs[i] = v.Intent + " " + vs[i]
		}
	}
	s := fmt.Sprintf("%s of %d intended", effects(o.Effects), o.Intended)
	if len(vs) > 0 {
		s += ", " + strings.Join(vs, ", ")
	}
	return s
}
