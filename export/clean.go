package export

import (
	"strings"
	"unicode"

	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/missions"
)

// Clean makes text from a file safe to print in a terminal: escape
// sequences are removed, tabs become spaces, and other control characters
// are dropped. Newlines are kept.
func Clean(s string) string {
	s = ansi.Strip(s)
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\t':
			return ' '
		case unicode.IsControl(r), r == '\u2028', r == '\u2029', unicode.Is(unicode.Bidi_Control, r):
			return -1
		}
		return r
	}, s)
}

// CleanLine is Clean for text shown on one line: newlines become spaces.
func CleanLine(s string) string {
	return strings.ReplaceAll(Clean(s), "\n", " ")
}

// Plural renders a count with its noun, e.g. "1 effect", "2 effects".
func Plural(n int, noun string) string { return missions.Plural(n, noun) }
