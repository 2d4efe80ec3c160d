package render

import (
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
