package lab

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// component is what every panel is: it renders itself into the box the
// root gives it with SetSize and says which keys it answers to. Panels
// that take keys also have an Update that returns their own concrete type,
// so the root needs no type assertions.
type component interface {
	help.KeyMap
	SetSize(width, height int)
	View() string
}

// noKeys is the key help of a panel that answers to no key: the header,
// the goal and the schedule embed it.
type noKeys struct{}

func (noKeys) ShortHelp() []key.Binding  { return nil }
func (noKeys) FullHelp() [][]key.Binding { return nil }

// Compile-time checks that every panel meets the contract.
var (
	_ component = (*header)(nil)
	_ component = (*goalPanel)(nil)
	_ component = (*schedulePanel)(nil)
	_ component = (*timeline)(nil)
	_ component = (*transcript)(nil)
	_ component = (*ledgerPanel)(nil)
	_ component = (*compareView)(nil)
	_ component = (*evidenceView)(nil)
	_ component = (*picker)(nil)
)

// box lays lines into exactly h lines of exactly w cells, so panels placed
// side by side line up.
func box(lines []string, w, h int) string {
	if h <= 0 || w <= 0 {
		return ""
	}
	out := make([]string, h)
	for i := range out {
		line := ""
		if i < len(lines) {
			line = lines[i]
		}
		lw := lipgloss.Width(line)
		if lw > w {
			// Padding that runs past the edge is dropped before any
			// text is cut.
			if t := strings.TrimRight(line, " "); lipgloss.Width(t) <= w {
				line, lw = t, lipgloss.Width(t)
			}
		}
		if lw > w {
			line = ansi.Truncate(line, w, "…")
		} else if lw < w {
			line += strings.Repeat(" ", w-lw)
		}
		out[i] = line
	}
	return strings.Join(out, "\n")
}

// panelTitle renders a panel's title line: the name, a rule to the edge,
// and an optional note on the right.
func panelTitle(st Styles, name, note string, focused bool, w int) string {
	ts := st.PanelTitle
	if focused {
		ts = st.PanelFocus
		name = "▸ " + name
	}
	left := ts.Render(cut(name, w))
	used := lipgloss.Width(left)
	right := ""
	if note != "" && used+3+ansi.StringWidth(note) <= w {
		right = " " + st.Subtle.Render(note)
	}
	ruleW := w - used - lipgloss.Width(right) - 1
	if ruleW < 0 {
		return left
	}
	return left + " " + st.Rule.Render(strings.Repeat("─", ruleW)) + right
}
