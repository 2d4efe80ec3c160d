package missions

import (
	"errors"
	"fmt"
	"slices"
)

// Check compares a case with an expectation and reports every difference.
func Check(c *Case, e Expectation) error {
	var errs []error
	if c.Outcome.Effects != e.Effects {
		errs = append(errs, fmt.Errorf("effects: got %d, expected %d", c.Outcome.Effects, e.Effects))
	}
	if e.Succeeded != nil && c.Outcome.Succeeded != *e.Succeeded {
		errs = append(errs, fmt.Errorf("succeeded: got %d, expected %d", c.Outcome.Succeeded, *e.Succeeded))
	}
	ids := make([]string, 0, len(e.Verdicts))
	for id := range e.Verdicts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		want := e.Verdicts[id]
		got := Verdict("")
		for _, v := range c.Outcome.Verdicts {
			if v.Intent == id {
				got = v.Verdict
			}
		}
		if got != want {
			errs = append(errs, fmt.Errorf("verdict for %s: got %s, expected %s", id, got, want))
		}
	}
	return errors.Join(errs...)
}
