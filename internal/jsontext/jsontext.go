// Package jsontext checks JSON text as bytes, before any decoder reads
// it: an escape that names no character, and where a value ends. A
// decoder reads a lone surrogate escape (\ud800) as U+FFFD, as it reads
// every other such escape, so two ids that differ only there would read
// as one; these checks see the escapes themselves. It imports nothing of
// the repository. It also writes a string as encoding/json writes one
// (AppendString), for what builds JSON by hand.
package jsontext

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// LoneSurrogate is the offset of the first \u escape in data that is half
// of a surrogate pair without its other half, or -1 when there is none.
// An escaped backslash before a u (\\u) is no escape. (Outside strings a
// backslash is no JSON at all, which a decoder refuses.) It jumps from
// one \u to the next, so that text without them costs a search.
func LoneSurrogate(data []byte) int {
	for i := 0; ; {
		k := bytes.Index(data[i:], []byte(`\u`))
		if k < 0 {
			return -1
		}
		at := i + k
		i = at + 2
		if escaped(data, at) {
			continue // \\u: a backslash, then a u
		}
		hi, ok := hex4(data, at+2)
		switch {
		case !ok:
		case hi >= 0xd800 && hi < 0xdc00:
			lo, ok := hex4(data, at+8)
			if at+7 >= len(data) || data[at+6] != '\\' || data[at+7] != 'u' || !ok || lo < 0xdc00 || lo >= 0xe000 {
				return at
			}
			i = at + 12
		case hi >= 0xdc00 && hi < 0xe000:
			return at
		}
	}
}

// escaped: the byte at data[i] follows an odd run of backslashes, so is
// itself escaped.
func escaped(data []byte, i int) bool {
	n := 0
	for p := i - 1; p >= 0 && data[p] == '\\'; p-- {
		n++
	}
	return n%2 == 1
}

// hex4 reads the four hex digits at data[i:].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// ObjectEnd is the offset just past the JSON object that starts data
// (after spaces), found by its brackets outside strings, or -1 when data
// does not start with an object or the object does not close. It jumps
// through each string to its closing quote.
func ObjectEnd(data []byte) int {
	i := 0
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	if i >= len(data) || data[i] != '{' {
		return -1
	}
	depth := 0
	for ; i < len(data); i++ {
		switch data[i] {
		case '"':
			j := i + 1
			for {
				k := bytes.IndexByte(data[j:], '"')
				if k < 0 {
					return -1
				}
				j += k
				if !escaped(data, j) {
					break
				}
				j++
			}
			i = j
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// Problem says what makes data, JSON text, hold something that is no
// text: bytes that are not UTF-8, or an escape that names no character
// (half of a surrogate pair). A decoder reads either as U+FFFD, so two
// ids that differ only there would read as one. It returns the offset
// and the words, or -1 and "" when the text is sound. Every surface that
// takes text as JSON (MCP arguments, history and trace lines, lists of
// refunds, conform's belief lines) refuses what it names, alike.
func Problem(data []byte) (int, string) {
	if at := invalidUTF8(data); at >= 0 {
		return at, "bytes that are not UTF-8 (byte " + itoa(at+1) + ")"
	}
	if at := LoneSurrogate(data); at >= 0 {
		return at, "an escape that is no character (" + string(data[at:min(at+6, len(data))]) + " at byte " + itoa(at+1) + ", half of a surrogate pair); write the character itself"
	}
	return -1, ""
}

// invalidUTF8 is the offset of the first byte of data that is not UTF-8,
// or -1.
func invalidUTF8(data []byte) int {
	if utf8.Valid(data) {
		return -1
	}
	for at := 0; at < len(data); {
		r, n := utf8.DecodeRune(data[at:])
		if r == utf8.RuneError && n == 1 {
			return at
		}
		at += n
	}
	return -1
}

func itoa(n int) string { return strconv.Itoa(n) }

// AppendString appends s as encoding/json writes a string, with its
// default HTML escaping (<, > and & escaped), U+2028 and U+2029 escaped,
// and invalid UTF-8 as U+FFFD: a payload's digest, and a body written by
// hand, must not change with how they are made.
func AppendString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
