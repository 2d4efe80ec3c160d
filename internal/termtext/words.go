package termtext

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Plural counts a noun: "1 attempt", "2 attempts".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// AndList joins words as a sentence lists them: "A", "A and B",
// "A, B and C"; "" for none.
func AndList(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// Thousands writes n with its thousands separated: 1,000,000.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Plural64 is Plural for a large count, with thousands separated.
func Plural64(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return Thousands(n) + " " + word + "s"
}

// Wrap breaks text into lines at most width columns wide.
func Wrap(s string, width int) []string {
	if s == "" {
		return nil
	}
	return strings.Split(ansi.Wrap(s, width, ""), "\n")
}

// WrapWords breaks text into lines at most width columns wide at spaces
// only, never inside a word (a word wider than width has a line of its
// own), with runs of white space, newlines included, taken as one space.
// Wrap is for prose on screen; WrapWords is for text whose words must
// stay whole: ids, commands, YAML.
func WrapWords(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case ansi.StringWidth(line)+1+ansi.StringWidth(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// ErrorLines turns an error, joined ones included, into one line per
// problem.
func ErrorLines(err error) []string {
	var out []string
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, ErrorLines(e)...)
		}
		return out
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}
