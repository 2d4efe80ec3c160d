package missions

import (
	"strings"
	"testing"
)

func TestEdit(t *testing.T) {
	base, err := BuiltIn().Get("timeout-then-success")
	if err != nil {
		t.Fatal(err)
	}
	// Nothing different from the mission: the mission itself.
	if m, err := Edit(base, map[int]Fixture{1: TimeoutAfterCommit}); err != nil || m != base {
		t.Fatalf("an edit to the same fixture: %v, %v", m, err)
	}
	m, err := Edit(base, map[int]Fixture{1: FailureBeforeCommit, 2: FailureBeforeCommit})
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case m.ID != "timeout-then-success-edited" || !strings.HasSuffix(m.Title, "(edited)") || m.Expect != nil:
		t.Errorf("edited mission: id %q, title %q, expect %v", m.ID, m.Title, m.Expect)
	case m.Edited == nil || m.Edited.From != base.ID || m.Edited.Words() != "step 1 timeout_after_commit → failure_before_commit, step 2 success → failure_before_commit":
		t.Errorf("edited: %+v", m.Edited)
	case m.Schedule[0].Fixture != FailureBeforeCommit || base.Schedule[0].Fixture != TimeoutAfterCommit:
		t.Errorf("the edit did not change its copy alone: %v / %v", m.Schedule[0].Fixture, base.Schedule[0].Fixture)
	case !strings.Contains(m.Goal, "Edited in the lab: step 1 timeout_after_commit → failure_before_commit"):
		t.Errorf("goal %q", m.Goal)
	}
	if u := m.Unedited(base); u == nil || u.Digest() != base.Digest() {
		t.Errorf("undone, the edit is not the mission it came from")
	}
	// The engine runs it: both refused, nothing made.
	s := m.Settings(Overrides{})
	r, err := NewRunner(m, s)
	if err != nil {
		t.Fatal(err)
	}
	r.Seek(r.Steps())
	if c := r.Case(); c.Outcome.Effects != 0 || c.Mission.Edited == nil {
		t.Errorf("the edited run: %d effects, edited %v", c.Outcome.Effects, c.Mission.Edited)
	}
	// A late commit or a pending object gets the delay it needs.
	lc, err := Edit(base, map[int]Fixture{2: LateCommit})
	if err != nil || lc.Schedule[1].Delay != EditDelay {
		t.Errorf("late_commit: %v, delay %d", err, lc.Schedule[1].Delay)
	}
	pd, err := Edit(base, map[int]Fixture{2: PendingFixture})
	if err != nil || pd.Schedule[1].Delay != EditDelay || pd.Schedule[1].Resolve != EditResolve {
		t.Errorf("pending: %v, %+v", err, pd.Schedule[1])
	}
	for _, bad := range []map[int]Fixture{{0: Success}, {9: Success}, {3: Success}} {
		if _, err := Edit(base, bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	// The world table's order, round.
	f := Fixtures[0]
	for range Fixtures {
		f = NextFixture(f)
	}
	if f != Fixtures[0] || NextFixture(TimeoutAfterCommit) != Success {
		t.Errorf("NextFixture does not go round the table")
	}
}

// A mission's record of its edit is held to its schedule.
func TestEditedIsValidated(t *testing.T) {
	base, _ := BuiltIn().Get("original-still-running")
	m, err := Edit(base, map[int]Fixture{3: FailureBeforeCommit})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		change func(*Mission)
		want   string
	}{
		"to differs from the step": {func(m *Mission) { m.Edited.Steps[0].To = Success }, "meets failure_before_commit, not success"},
		"a read step":              {func(m *Mission) { m.Edited.Steps[0].Step = 2 }, "only a lone attempt"},
		"past the schedule":        {func(m *Mission) { m.Edited.Steps[0].Step = 40 }, "the schedule has"},
		"from is to":               {func(m *Mission) { m.Edited.Steps[0].From = FailureBeforeCommit }, "a fixture other than"},
		"no step":                  {func(m *Mission) { m.Edited.Steps = nil }, "no step is named"},
		"bad from id":              {func(m *Mission) { m.Edited.From = "Not An ID" }, "is not a mission id"},
	} {
		c := *m
		e := *m.Edited
		e.Steps = append([]StepEdit(nil), m.Edited.Steps...)
		c.Edited = &e
		tc.change(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// Every lone attempt of every built-in mission takes every fixture of the
// world table: the edit gives it what the fixture needs (a late commit
// with a delay went to pending with no status to reach, and was refused).
func TestEveryFixtureOnEveryBuiltInStep(t *testing.T) {
	for _, base := range BuiltIn().Missions {
		for i, st := range base.Schedule {
			if st.Kind() != StepAttempt {
				continue
			}
			for _, f := range Fixtures {
				m, err := Edit(base, map[int]Fixture{i + 1: f})
				if err != nil {
					t.Errorf("%s step %d → %s: %v", base.ID, i+1, f, err)
					continue
				}
				if _, err := Run(m, m.Settings(Overrides{})); err != nil {
					t.Errorf("%s step %d → %s runs: %v", base.ID, i+1, f, err)
				}
			}
		}
	}
}
