package export

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/replaylab/replaylab/internal/termtext"
)

// MarkdownText makes text from a case safe inside a Markdown paragraph or table
// cell: control sequences removed, one line, and every character that
// could end a cell or start inline Markdown escaped with a backslash
// (CommonMark accepts a backslash before any ASCII punctuation, and GFM
// reads \| inside a table cell as a literal bar). An underscore inside a
// word cannot start emphasis, so it is left alone to keep ids readable.
func MarkdownText(s string) string {
	r := []rune(strings.TrimSpace(termtext.CleanLine(s)))
	var b strings.Builder
	word := func(i int) bool {
		return i >= 0 && i < len(r) && (unicode.IsLetter(r[i]) || unicode.IsDigit(r[i]))
	}
	for i, c := range r {
		switch c {
		case '\\', '|', '`', '*', '[', ']', '<', '>', '~', '&':
			b.WriteByte('\\')
		case '_':
			if !word(i-1) || !word(i+1) {
				b.WriteByte('\\')
			}
		case '#', '+', '-', '=':
			// At the start, these could open a heading or a list.
			if i == 0 && (len(r) == 1 || r[1] == ' ' || r[1] == c) {
				b.WriteByte('\\')
			}
		case '.', ')':
			// "1. " at the start would open an ordered list.
			if leadingDigits(r) == i && i > 0 && (i+1 == len(r) || r[i+1] == ' ') {
				b.WriteByte('\\')
			}
		}
		b.WriteRune(c)
	}
	return b.String()
}

func leadingDigits(r []rune) int {
	n := 0
	for n < len(r) && r[n] >= '0' && r[n] <= '9' {
		n++
	}
	return n
}

// MarkdownCode renders an identifier as a code span. Backticks cannot occur in
// a one-backtick span, so they become quotes; a bar is escaped because
// GFM splits table cells before it reads code spans.
func MarkdownCode(s string) string {
	s = strings.TrimSpace(termtext.CleanLine(s))
	if s == "" {
		return ""
	}
	s = strings.ReplaceAll(s, "`", "'")
	s = strings.ReplaceAll(s, "|", `\|`)
	return "`" + s + "`"
}

// MarkdownTable writes a GFM table. Every row has as many cells as the header;
// cells are expected to be escaped already.
func MarkdownTable(b *strings.Builder, header []string, rows [][]string) {
	row := func(cells []string) {
		b.WriteString("|")
		for i := range header {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			if c == "" {
				b.WriteString(" |")
				continue
			}
			b.WriteString(" " + c + " |")
		}
		b.WriteByte('\n')
	}
	row(header)
	b.WriteString("|")
	for range header {
		b.WriteString(" --- |")
	}
	b.WriteByte('\n')
	for _, r := range rows {
		row(r)
	}
}

// CompareMarkdown renders a comparison as Markdown: a list of the cases,
// any notes, a GFM table aligned by attempt, and one sentence per pair.
func CompareMarkdown(cmp Comparison) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "## Comparing %s\n\n", termtext.Plural(len(cmp.Cases), "case"))
	if cmp.Story != "" {
		fmt.Fprintf(&b, "%s\n\n", MarkdownText(cmp.Story))
	}
	for _, h := range cmp.Cases {
		fmt.Fprintf(&b, "- **%s** %s (%s): %s", h.Name, MarkdownText(h.Title), MarkdownCode(h.Mission), MarkdownText(SettingsLine(h.Settings)))
		if h.Source != "" {
			fmt.Fprintf(&b, ", from %s", MarkdownCode(h.Source))
		}
		b.WriteByte('\n')
	}
	for _, n := range cmp.Notes {
		fmt.Fprintf(&b, "\n> **Note:** %s\n", MarkdownText(n))
	}
	b.WriteByte('\n')
	header := []string{"attempt", ""}
	all := make([]int, len(cmp.Cases))
	for i, h := range cmp.Cases {
		all[i] = i
		header = append(header, MarkdownText(h.Heading()))
	}
	var rows [][]string
	for _, fr := range fieldRows(cmp, all) {
		label := fr.label
		if strings.HasSuffix(label, " "+DivergeMark) {
			label = "**" + strings.TrimSuffix(label, " "+DivergeMark) + "** " + DivergeMark
		}
		cells := []string{label, MarkdownText(fr.field)}
		for _, v := range fr.values {
			if fr.field == fieldFixture || fr.field == fieldObserved {
				if strings.HasPrefix(v, "(") {
					cells = append(cells, MarkdownText(v))
				} else {
					cells = append(cells, MarkdownCode(v))
				}
				continue
			}
			cells = append(cells, MarkdownText(v))
		}
		rows = append(rows, cells)
	}
	MarkdownTable(&b, header, rows)
	if cmp.Diverge > 0 {
		b.WriteString("\n" + DivergeMark + " marks an attempt where two cases' ledgers first diverge while the agent's words are the same.\n")
	}
	if len(cmp.Pairs) > 0 {
		b.WriteString("\n### What the pairs show\n\n")
		for _, p := range cmp.Ranked() {
			fmt.Fprintf(&b, "- %s\n", MarkdownText(p.Sentence))
		}
	}
	if len(cmp.Sequences) == len(cmp.Cases) && len(cmp.Cases) > 0 {
		b.WriteString("\n### Each case in sequence\n")
		for i, h := range cmp.Cases {
			fmt.Fprintf(&b, "\n**%s**\n\n", MarkdownText(h.Heading()))
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
