// Package fileerr holds the one shape of a mistake in a file people
// write (a mission, a provider profile): the file, the line where there
// is one, and what is wrong and what would be accepted. It imports
// nothing else of the repository.
package fileerr

import (
	"errors"
	"fmt"
)

// Error is one problem in a file, at a line.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// ValidID says whether s is an id a person writes in such a file:
// ^[a-z0-9][a-z0-9-]{0,63}$, checked without the regexp machinery, which
// every run would pay for at start-up.
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// LineOf is the line of err where it is an *Error, 0 otherwise: for
// sorting a file's problems in the order of its lines.
func LineOf(err error) int {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Line
	}
	return 0
}
