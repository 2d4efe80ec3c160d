package reproduce

import (
	"fmt"
	"strings"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/termtext"
)

// Problems says what is untrue in the case or session file name holds: it
// does not reproduce (the first difference), or it names a built-in
// mission while carrying another. Nil when the file is true to its
// inputs; validate and compare refuse a file with problems.
func Problems(name string, d export.Document) []string {
	diff, err := Document(d)
	var out []string
	switch {
	case err != nil:
		out = append(out, fmt.Sprintf("%s: %v", termtext.CleanLine(name), err))
	case diff != "":
		out = append(out, fmt.Sprintf("%s: differs from its replay; first difference: %s", termtext.CleanLine(name), termtext.CleanLine(diff)))
	}
	if m := d.Mission(); m != nil {
		if c := BuiltInClaim(m); c != "" {
			out = append(out, termtext.CleanLine(name)+": "+c)
		}
	}
	return out
}

// Holds says what a true case or session file holds, for validate's "ok"
// line; or, where it is untrue, its Problems.
func Holds(name string, d export.Document) (string, []string) {
	if p := Problems(name, d); len(p) > 0 {
		return "", p
	}
	if d.Session != nil {
		return fmt.Sprintf("a serve session: %s, it replays", termtext.Plural(len(d.Session.Requests), "request")), nil
	}
	c := d.Case
	return fmt.Sprintf("case of mission %s, %s", termtext.CleanLine(c.Mission.ID), termtext.CleanLine(strings.Join(c.Settings.Flags(&c.Mission), " "))), nil
}

// Report is replay's report of a file: whether a case's mission run again,
// or a session's requests re-submitted to a fresh ledger, give the file,
// in a line or two.
func Report(name string, d export.Document) (report string, same bool, err error) {
	diff, err := Document(d)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", name, err)
	}
	if diff != "" {
		return fmt.Sprintf("%s: differs from its replay\n  first difference: %s\n", termtext.CleanLine(name), termtext.CleanLine(diff)), false, nil
	}
	if d.Session != nil {
		return fmt.Sprintf("%s: identical (%s re-submitted to a fresh ledger)\n", termtext.CleanLine(name), termtext.Plural(len(d.Session.Requests), "request")), true, nil
	}
	return fmt.Sprintf("%s: identical\n", termtext.CleanLine(name)), true, nil
}
