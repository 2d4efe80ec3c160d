package missions

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/replaylab/replaylab/ledger"
)

// Edited records that a mission's schedule was changed from another
// mission's, as the lab's f key does (the source article's "replace both
// outcomes"): the mission it came from, and each step whose fixture was
// replaced. A case of an edited mission carries it, so the edit is
// shown wherever the case goes, and the rest of the mission can be
// checked against the one it came from.
type Edited struct {
	// From is the id of the mission before the edit.
	From  string     `json:"from"`
	Steps []StepEdit `json:"steps"`
}

// StepEdit is one attempt step whose fixture was replaced.
type StepEdit struct {
	// Step is the schedule step, from 1.
	Step int     `json:"step"`
	From Fixture `json:"from"`
	To   Fixture `json:"to"`
}

// EditDelay and EditResolve are what an edit to late_commit or pending
// gives a step that had no delay: the commit lands, or the object
// resolves (succeeded), this many ticks later.
const (
	EditDelay   = 3
	EditResolve = ledger.Succeeded
)

// editedSuffix marks an edited mission's id and title.
const editedSuffix = "-edited"

// NextFixture is the fixture after f in the world table's order, the
// first after the last: the order the lab's f key cycles a step through.
func NextFixture(f Fixture) Fixture {
	i := slices.Index(Fixtures, f)
	return Fixtures[(i+1)%len(Fixtures)]
}

// Edit is base with the fixture of each attempt step in to (step from 1)
// replaced; base itself when nothing differs from it. The edited mission
// has its own id (base's with "-edited") and says what changed in its
// title, goal and Edited; it promises no outcome, since base's
// expectations were for base's schedule. A step of workers sending
// together, a wait or a read cannot be edited.
func Edit(base *Mission, to map[int]Fixture) (*Mission, error) {
	var edits []StepEdit
	for _, n := range slices.Sorted(maps.Keys(to)) {
		if n < 1 || n > len(base.Schedule) {
			return nil, fmt.Errorf("step %d: the schedule has steps 1 to %d", n, len(base.Schedule))
		}
		st := base.Schedule[n-1]
		if st.Kind() != StepAttempt {
			return nil, fmt.Errorf("step %d is %s; only a lone attempt's fixture can be replaced", n, st.Phrase(func(Step) string { return "" }))
		}
		if to[n] != st.Fixture {
			edits = append(edits, StepEdit{Step: n, From: st.Fixture, To: to[n]})
		}
	}
	if len(edits) == 0 {
		return base, nil
	}
	m := *base
	m.Schedule = slices.Clone(base.Schedule)
	m.Expect = nil
	m.ID = strings.TrimRight(base.ID[:min(len(base.ID), 64-len(editedSuffix))], "-") + editedSuffix
	m.Title = base.Title + " (edited)"
	m.Edited = &Edited{From: base.ID, Steps: edits}
	var words []string
	for _, e := range edits {
		st := &m.Schedule[e.Step-1]
		st.Fixture = e.To
		// What the new fixture needs and the old one may not have had:
		// a delay for a late commit or a pending object, the status a
		// pending object reaches; what it does not take, dropped.
		switch e.To {
		case LateCommit, PendingFixture:
			if st.Delay == 0 {
				st.Delay = EditDelay
			}
		default:
			st.Delay = 0
		}
		switch {
		case e.To != PendingFixture:
			st.Resolve = 0
		case !st.Resolve.Terminal():
			st.Resolve = EditResolve
		}
		words = append(words, e.String())
	}
	m.Goal = fmt.Sprintf("%s Edited in the lab: %s.", strings.TrimSpace(base.Goal), strings.Join(words, "; "))
	// Lines of the file the mission came from say nothing of a schedule
	// the lab made; a problem is named by its step alone.
	for i := range m.Schedule {
		m.Schedule[i].Line = 0
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// String is the edit in a few words: "step 2 success → failure_before_commit".
func (e StepEdit) String() string {
	return fmt.Sprintf("step %d %s → %s", e.Step, e.From, e.To)
}

// Words is the whole edit in a few words, every step's.
func (e *Edited) Words() string {
	if e == nil {
		return ""
	}
	parts := make([]string, len(e.Steps))
	for i, s := range e.Steps {
		parts[i] = s.String()
	}
	return strings.Join(parts, ", ")
}

// Unedited is m with its edits undone, as the mission it came from was,
// for holding the rest of m to it; nil when m was not edited. The id,
// title and goal are the ones from is given.
func (m *Mission) Unedited(from *Mission) *Mission {
	if m.Edited == nil {
		return nil
	}
	u := *m
	u.Schedule = slices.Clone(m.Schedule)
	for _, e := range m.Edited.Steps {
		if e.Step >= 1 && e.Step <= len(u.Schedule) {
			u.Schedule[e.Step-1].Fixture = e.From
			if fs := from.Schedule; e.Step <= len(fs) {
				u.Schedule[e.Step-1].Delay, u.Schedule[e.Step-1].Resolve = fs[e.Step-1].Delay, fs[e.Step-1].Resolve
			}
		}
	}
	u.ID, u.Title, u.Goal, u.Expect, u.Edited = from.ID, from.Title, from.Goal, from.Expect, nil
	return &u
}
