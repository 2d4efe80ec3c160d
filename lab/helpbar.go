package lab

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
)

// helpBar is the bottom line: the screen's keys as bubbles' help draws
// them, the bindings that do not fit left out whole, and the key to the
// full list always at the right.
func helpBar(st *Styles, bindings []key.Binding, more key.Binding, w int) string {
	right := ""
	if more.Enabled() {
		right = st.Help.ShortKey.Render(more.Help().Key) + " " + st.Help.ShortDesc.Render(more.Help().Desc)
	}
	h := help.New()
	h.Styles = st.Help
	h.ShortSeparator = " • "
	// The bindings that fit, whole and in order; help's own cut adds
	// every binding after one that fills the width exactly. A key left
	// out is in the full list, which the right end of the bar offers.
	room := w - lipgloss.Width(right) - 2
	sep := lipgloss.Width(h.ShortSeparator)
	var fits []key.Binding
	used := 0
	for _, b := range bindings {
		if !b.Enabled() {
			continue
		}
		bw := lipgloss.Width(b.Help().Key) + 1 + lipgloss.Width(b.Help().Desc)
		if used > 0 {
			bw += sep
		}
		if used+bw > room {
			break
		}
		fits, used = append(fits, b), used+bw
	}
	left := h.ShortHelpView(fits)
	return left + strings.Repeat(" ", max(1, w-lipgloss.Width(left)-lipgloss.Width(right))) + right
}

// fullHelpLines lays groups of bindings out as columns, starting a new row
// of columns when the next group would not fit, so no key is cut off
// however narrow the terminal. bubbles' full help view would cut them.
func fullHelpLines(st *Styles, groups [][]key.Binding, w int) []string {
	hs := st.Help
	const colGap = "    "
	var out, row []string
	rowW := 0
	flush := func() {
		if len(row) == 0 {
			return
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, row...)
		row, rowW = nil, 0
	}
	for _, group := range groups {
		var keys, descs []string
		kw := 0
		for _, b := range group {
			if !b.Enabled() {
				continue
			}
			keys = append(keys, b.Help().Key)
			descs = append(descs, b.Help().Desc)
			kw = max(kw, lipgloss.Width(b.Help().Key))
		}
		if len(keys) == 0 {
			continue
		}
		col := make([]string, len(keys))
		cw := 0
		for i := range keys {
			col[i] = hs.FullKey.Render(fit(keys[i], kw)) + " " + hs.FullDesc.Render(descs[i])
			cw = max(cw, lipgloss.Width(col[i]))
		}
		if rowW > 0 && rowW+len(colGap)+cw > w {
			flush()
		}
		sep := ""
		if rowW > 0 {
			sep = colGap
		}
		// Pad the row so the new column starts at the same place on every
		// line, then add it.
		for len(row) < len(col) {
			row = append(row, strings.Repeat(" ", rowW))
		}
		for i := range row {
			line := row[i]
			line += strings.Repeat(" ", max(0, rowW-lipgloss.Width(line)))
			if i < len(col) {
				line += sep + col[i]
			}
			row[i] = line
		}
		rowW += len(sep) + cw
	}
	flush()
	return out
}
