package lab

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/help"
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

// fit cuts plain text to width w, marking a cut with "…", and pads it with
// spaces to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	if pad := w - ansi.StringWidth(s); pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	return s
}

// cut cuts plain text to width w without padding it.
func cut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s
}

// wrap breaks plain text into lines of at most w cells.
func wrap(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	return strings.Split(ansi.Wrap(s, w, ""), "\n")
}

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

// clamp keeps v within [lo, hi].
func clamp(v, lo, hi int) int {
	if v > hi {
		v = hi
	}
	if v < lo {
		v = lo
	}
	return v
}

// plural renders a count with its noun, e.g. "1 effect", "2 effects".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// span is a run of plain text drawn in one style. A whole span is kept on
// one line when it fits on one, like a single word.
type span struct {
	text  string
	style lipgloss.Style
	whole bool
}

// flowWord is one word of a span, as laid out by flowBreak.
type flowWord struct {
	s    string
	part int
	w    int
}

// flowBreak lays the words of spans into lines of at most room cells,
// greedily; a word wider than a line is cut into pieces that fit.
func flowBreak(spans []span, room int) [][]flowWord {
	if room <= 0 {
		return nil
	}
	var lines [][]flowWord
	var cur []flowWord
	used := 0
	for p, sp := range spans {
		words := strings.Fields(sp.text)
		if sp.whole && len(words) > 1 && ansi.StringWidth(strings.Join(words, " ")) <= room {
			words = []string{strings.Join(words, " ")}
		}
		for _, word := range words {
			pieces := []string{word}
			if ansi.StringWidth(word) > room {
				pieces = strings.Split(ansi.Hardwrap(word, room, false), "\n")
			}
			for _, piece := range pieces {
				pw := ansi.StringWidth(piece)
				if len(cur) > 0 && used+1+pw > room {
					lines, cur, used = append(lines, cur), nil, 0
				}
				if len(cur) > 0 {
					used++
				}
				cur = append(cur, flowWord{piece, p, pw})
				used += pw
			}
		}
	}
	if len(cur) > 0 {
		lines = append(lines, cur)
	}
	return lines
}

// flowCount is how many lines of room cells the spans fill, flowed one
// after the other.
func flowCount(spans []span, room int) int { return len(flowBreak(spans, room)) }

// flow renders spans as one paragraph in at most h lines of width w, each
// span's words in its own style, the first line after lead and the others
// after indent (both the same width). Words that do not fit in h lines are
// left out and the last line ends with "…".
func flow(spans []span, w, h int, lead, indent string) []string {
	room := w - lipgloss.Width(indent)
	broken := flowBreak(spans, room)
	more := len(broken) > h
	if more {
		broken = broken[:h]
	}
	out := make([]string, 0, len(broken))
	for i, line := range broken {
		if more && i == len(broken)-1 {
			// Make room for the mark, dropping words from the end.
			used := -1
			for _, fw := range line {
				used += 1 + fw.w
			}
			for len(line) > 1 && used+2 > room {
				used -= 1 + line[len(line)-1].w
				line = line[:len(line)-1]
			}
			if used+2 > room {
				line[0].s = ansi.Truncate(line[0].s, max(0, room-1), "")
			}
			line[len(line)-1].s += "…"
		}
		var b strings.Builder
		if i == 0 {
			b.WriteString(lead)
		} else {
			b.WriteString(indent)
		}
		for j := 0; j < len(line); {
			k := j
			words := make([]string, 0, len(line))
			for ; k < len(line) && line[k].part == line[j].part; k++ {
				words = append(words, line[k].s)
			}
			if j > 0 {
				b.WriteString(" ")
			}
			b.WriteString(spans[line[j].part].style.Render(strings.Join(words, " ")))
			j = k
		}
		out = append(out, b.String())
	}
	return out
}
