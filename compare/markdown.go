package compare

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/render"
)

// CompareMarkdown renders a comparison as Markdown: a list of the cases,
// any notes, a GFM table aligned by attempt, and one sentence per pair.
func CompareMarkdown(cmp Comparison) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "## Comparing %s\n\n", termtext.Plural(len(cmp.Cases), "case"))
	if cmp.Story != "" {
		fmt.Fprintf(&b, "%s\n\n", render.MarkdownText(cmp.Story))
	}
	for _, h := range cmp.Cases {
		fmt.Fprintf(&b, "- **%s** %s (%s): %s", h.Name, render.MarkdownText(h.Title), render.MarkdownCode(h.Mission), render.MarkdownText(render.SettingsLine(h.Settings)))
		if h.Source != "" {
			fmt.Fprintf(&b, ", from %s", render.MarkdownCode(h.Source))
		}
		b.WriteByte('\n')
	}
	for _, n := range cmp.Notes {
		fmt.Fprintf(&b, "\n> **Note:** %s\n", render.MarkdownText(n))
	}
	b.WriteByte('\n')
	header := []string{"attempt", ""}
	all := make([]int, len(cmp.Cases))
	for i, h := range cmp.Cases {
		all[i] = i
		header = append(header, render.MarkdownText(h.Heading()))
	}
	var rows [][]string
	for _, fr := range fieldRows(cmp, all) {
		label := fr.label
		if strings.HasSuffix(label, " "+DivergeMark) {
			label = "**" + strings.TrimSuffix(label, " "+DivergeMark) + "** " + DivergeMark
		}
		cells := []string{label, render.MarkdownText(fr.field)}
		for _, v := range fr.values {
			if fr.field == fieldFixture || fr.field == fieldObserved {
				if strings.HasPrefix(v, "(") {
					cells = append(cells, render.MarkdownText(v))
				} else {
					cells = append(cells, render.MarkdownCode(v))
				}
				continue
			}
			cells = append(cells, render.MarkdownText(v))
		}
		rows = append(rows, cells)
	}
	render.MarkdownTable(&b, header, rows)
	if cmp.Diverge > 0 {
		b.WriteString("\n" + DivergeLegend + ".\n")
	}
	if len(cmp.Pairs) > 0 {
		b.WriteString("\n### What the pairs show\n\n")
		for _, p := range cmp.Ranked() {
			fmt.Fprintf(&b, "- %s\n", render.MarkdownText(p.Sentence))
		}
	}
	if len(cmp.Sequences) == len(cmp.Cases) && len(cmp.Cases) > 0 {
		b.WriteString("\n### Each case in sequence\n")
		for i, h := range cmp.Cases {
			fmt.Fprintf(&b, "\n**%s**\n\n", render.MarkdownText(h.Heading()))
			b.WriteString(cmp.Sequences[i])
		}
	}
	return []byte(b.String())
}

// CompareJSON renders a comparison for scripts: indented JSON with a
// "schema" field first and a trailing newline.
func CompareJSON(cmp Comparison) ([]byte, error) {
	doc := struct {
		Schema string `json:"schema"`
		Comparison
	}{ComparisonSchemaID, cmp}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return termtext.EscapeHidden(append(b, '\n')), nil
}

// Render writes the comparison in the format; text fits width columns.
func Render(cmp Comparison, f render.Format, width int) ([]byte, error) {
	switch f {
	case render.JSON:
		return CompareJSON(cmp)
	case render.Markdown:
		return CompareMarkdown(cmp), nil
	}
	return CompareText(cmp, width), nil
}
