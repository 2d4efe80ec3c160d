package lab

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/internal/termtext"
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

// leftCut cuts plain text to width w from the left, marking the cut with
// "…", so its end stays in sight.
func leftCut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if n := ansi.StringWidth(s); n > w {
		return ansi.TruncateLeft(s, n-w+1, "…")
	}
	return s
}

// wrap breaks plain text into lines of at most w cells.
func wrap(s string, w int) []string {
	switch {
	case w <= 0:
		return nil
	case s == "":
		return []string{""}
	}
	return termtext.Wrap(s, w)
}

// firstLines keeps at most n lines; when it drops some, the last one kept
// ends with mark, cut to w cells, to say that more was there.
func firstLines(lines []string, n, w int, mark string) []string {
	n = max(n, 0)
	if len(lines) <= n {
		return lines
	}
	lines = append([]string(nil), lines[:n]...)
	if n > 0 {
		lines[n-1] = withMark(lines[n-1], mark, w)
	}
	return lines
}

// withMark ends line with mark in at most w cells, dropping whole words
// from its end to make room: a word is never cut in two.
func withMark(line, mark string, w int) string {
	if mark == "" || ansi.StringWidth(line+mark) <= w {
		return cut(line+mark, w)
	}
	words := strings.Fields(line)
	for len(words) > 1 {
		words = words[:len(words)-1]
		if s := strings.Join(words, " ") + mark; ansi.StringWidth(s) <= w {
			// The line's own indentation stays.
			lead := line[:len(line)-len(strings.TrimLeft(line, " "))]
			return cut(lead+s, w)
		}
	}
	return cut(line+mark, w)
}

// paragraph is text from a file as one line of words, one space apart,
// safe to print.
func paragraph(s string) string {
	return strings.Join(strings.Fields(termtext.CleanLine(s)), " ")
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
// after the other: len(flowBreak(spans, room)), counted without laying a
// word out, for measuring every row of a long run.
func flowCount(spans []span, room int) int {
	if room <= 0 {
		return 0
	}
	lines, used, open := 0, 0, false
	place := func(pw int) {
		if open && used+1+pw > room {
			lines, used, open = lines+1, 0, false
		}
		if open {
			used++
		}
		open, used = true, used+pw
	}
	for _, sp := range spans {
		if sp.whole {
			n, joined := 0, -1
			for word := range strings.FieldsSeq(sp.text) {
				n, joined = n+1, joined+1+cells(word)
			}
			if n > 1 && joined <= room {
				place(joined)
				continue
			}
		}
		for word := range strings.FieldsSeq(sp.text) {
			ww := cells(word)
			switch {
			case ww <= room:
				place(ww)
			case plain(word):
				for ; ww > room; ww -= room {
					place(room)
				}
				place(ww)
			default:
				for _, piece := range strings.Split(ansi.Hardwrap(word, room, false), "\n") {
					place(ansi.StringWidth(piece))
				}
			}
		}
	}
	if open {
		lines++
	}
	return lines
}

// plain: s is printable ASCII, one cell a byte.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// cells is the width of s in cells.
func cells(s string) int {
	if plain(s) {
		return len(s)
	}
	return ansi.StringWidth(s)
}

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
