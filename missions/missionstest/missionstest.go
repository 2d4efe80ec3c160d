// Package missionstest runs catalog missions for the tests of the packages
// that render, compare and reproduce cases, as net/http/httptest serves
// the tests of HTTP code.
package missionstest

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// Run runs the built-in mission id under its own settings with the
// overrides given, failing the test when it cannot.
func Run(t testing.TB, id string, o missions.Overrides) *missions.Case {
	t.Helper()
	c, err := missions.BuiltIn().Run(id, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Seed runs the seed lab's three cases: a timeout that committed and
// then a success, with stable keys on and then off, and a failure before
// commit twice.
func Seed(t testing.TB) []*missions.Case {
	t.Helper()
	on, off := true, false
	return []*missions.Case{
		Run(t, "timeout-then-success", missions.Overrides{StableKeys: &on}),
		Run(t, "timeout-then-success", missions.Overrides{StableKeys: &off}),
		Run(t, "failure-then-failure", missions.Overrides{StableKeys: &on}),
	}
}

// Hostile returns a copy of c whose file-borne text tries to break the
// output: escape sequences, bars, newlines, Markdown, wide characters and
// a word longer than any column; the agent's words become say.
func Hostile(c *missions.Case, say string) *missions.Case {
	h := *c
	h.Mission.Title = "Evil | title\n# heading \x1b[31mred\x1b[0m"
	h.Events = append([]missions.Event(nil), c.Events...)
	for i := range h.Events {
		if h.Events[i].Say != "" {
			h.Events[i].Say = say
		}
	}
	return &h
}

// Edited runs the built-in mission id with the fixtures of its steps
// replaced as the lab's f does (step from 1), under its own settings,
// failing the test when it cannot.
func Edited(t testing.TB, id string, to map[int]missions.Fixture) *missions.Case {
	t.Helper()
	base, err := missions.BuiltIn().Get(id)
	if err != nil {
		t.Fatal(err)
	}
	m, err := missions.Edit(base, to)
	if err != nil {
		t.Fatal(err)
	}
	c, err := missions.Run(m, m.Settings(missions.Overrides{}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ManyAttempts is the text of a mission file whose one intent is sent n
// times, each attempt committing and timing out: a long run, for the
// tests of how work grows with it.
func ManyAttempts(n int) string {
	var b strings.Builder
	b.WriteString("id: many\ntitle: Many\ngoal: Many.\nintents:\n  - id: a\n    op: refund\n    principal: p\n    payload: {o: \"1\"}\nschedule:\n")
	for range n {
		b.WriteString("  - attempt: a\n    fixture: timeout_after_commit\n")
	}
	b.WriteString("expect:\n  - effects: 1\n")
	return b.String()
}
