// Package termtext makes text safe and tidy for a terminal: hidden
// characters shown as escapes, lines cut and wrapped by display width,
// counts with their nouns. It imports nothing else of this repository.
package termtext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Clean makes text from a file safe to print in a terminal, and true to
// what it says: escape sequences are removed and tabs become spaces, and
// every other character a person could not see, or that would reorder what
// they see (control characters, zero-width and other format characters,
// bidi controls, line and paragraph separators), is shown as a visible
// escape such as \u200b, so "45.0\u200b0" never reads as 45.00. Newlines
// are kept.
func Clean(s string) string {
	if plain(s) {
		return s
	}
	s = ansi.Strip(s)
	if !hasHidden(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteRune(r)
		case r == '\t':
			b.WriteByte(' ')
		case Hidden(r):
			b.WriteString(runeEscape(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Hidden reports whether r is a character a person cannot see or that
// changes how the text around it is shown: a control character (but
// newline and tab), a format character (zero-width space and joiners,
// soft hyphen, byte-order mark, bidi controls, tags), or a line or
// paragraph separator.
func Hidden(r rune) bool {
	switch {
	case r == '\n', r == '\t':
		return false
	case r == utf8.RuneError:
		return true
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r < 0x80:
		return false
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029' || unicode.IsControl(r)
}

func hasHidden(s string) bool {
	for _, r := range s {
		if Hidden(r) || r == '\t' {
			return true
		}
	}
	return false
}

// runeEscape writes r as Go and JSON write an escape: \u200b, or
// \U0001d173 beyond the basic plane.
func runeEscape(r rune) string {
	if r > 0xffff {
		return fmt.Sprintf("\\U%08x", r)
	}
	return fmt.Sprintf("\\u%04x", r)
}

// EscapeHidden rewrites the hidden characters (see Hidden) in JSON text as
// \u escapes: the same JSON value, but one a terminal shows as it is. JSON
// text holds such characters only inside strings, where an escape means
// the character itself.
func EscapeHidden(data []byte) []byte {
	hidden := false
	for _, r := range string(data) {
		if r != '\n' && r != '\t' && Hidden(r) {
			hidden = true
			break
		}
	}
	if !hidden {
		return data
	}
	out := make([]byte, 0, len(data)+32)
	for _, r := range string(data) {
		if r == '\n' || r == '\t' || !Hidden(r) {
			out = utf8.AppendRune(out, r)
			continue
		}
		if r > 0xffff {
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, "\\u%04x\\u%04x", hi, lo)
			continue
		}
		out = fmt.Appendf(out, "\\u%04x", r)
	}
	return out
}

// plain: s is printable ASCII only, which Clean leaves as it is.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// CleanLine is Clean for text shown on one line: newlines become spaces.
func CleanLine(s string) string {
	return strings.ReplaceAll(Clean(s), "\n", " ")
}

// Escaped is a name (an intent, a key) shown on one line so that two
// different names never look the same: printable text as it is, and
// every other character (a newline, an escape sequence's ESC, a
// zero-width or bidi character) as its Go escape, \n, \x1b or \u200b.
func Escaped(s string) string {
	if plain(s) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// Shorten cuts s to at most n bytes, on a rune boundary, and marks a cut
// with "…": for input quoted back in a message, however long it came.
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
