package missions

import (
	"errors"
	"fmt"
	"slices"

	"github.com/replaylab/replaylab/internal/termtext"
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

// ExpectationProblem is an expectation a run of its mission does not meet.
type ExpectationProblem struct {
	Expectation Expectation
	// Err says every way the run differs, or why it could not run.
	Err error
}

// CheckExpectations runs the mission under the settings of each of its
// expectations, with run (Run, or a stand-in that counts), and returns
// those the run does not meet, in the file's order. Expectations under
// the same settings share one run: a file may list thousands of them, and
// there are only so many settings.
func (m *Mission) CheckExpectations(run func(*Mission, Settings) (*Case, error)) []ExpectationProblem {
	type result struct {
		c   *Case
		err error
	}
	runs := map[Settings]result{}
	var out []ExpectationProblem
	for _, e := range m.Expect {
		s := m.Settings(e.When)
		r, ok := runs[s]
		if !ok {
			r.c, r.err = run(m, s)
			runs[s] = r
		}
		err := r.err
		if err == nil {
			err = Check(r.c, e)
		}
		if err != nil {
			out = append(out, ExpectationProblem{Expectation: e, Err: err})
		}
	}
	return out
}

// ValidateFile checks the mission file name holds as validate does: that
// it parses, that its id is free in cat by the catalog's own rule (Add),
// and that every outcome it promises is what run gives. It returns the
// mission's id, or its problems, a line each, as name:line: what.
func ValidateFile(name string, data []byte, cat *Catalog, run func(*Mission, Settings) (*Case, error)) (id string, problems []string) {
	m, err := Parse(name, data)
	if err != nil {
		return "", termtext.ErrorLines(err)
	}
	if err := cat.Add(m); err != nil {
		problems = append(problems, err.Error())
	}
	for _, p := range m.CheckExpectations(run) {
		when := p.Expectation.When.String()
		if when == "" {
			when = "the default settings"
		}
		for _, line := range termtext.ErrorLines(p.Err) {
			problems = append(problems, fmt.Sprintf("%s:%d: under %s, %s", name, p.Expectation.Line, when, line))
		}
	}
	if len(problems) > 0 {
		return "", problems
	}
	return m.ID, nil
}
