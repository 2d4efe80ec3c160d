package compare

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
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
