package lab

import (
	"errors"

	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/reproduce"
)

// runController holds the run the lab screen shows: the mission, the
// settings chosen, and the engine's runner moved to the position. It
// decides nothing the engine decides; it only moves the runner, forward by
// stepping and back by the runner's own saved marks, and keeps its case.
type runController struct {
	mission  *missions.Mission
	over     missions.Overrides
	settings missions.Settings
	// defaults are the mission's own settings, so that the ones changed
	// stand out.
	defaults missions.Settings
	pos      int
	steps    int
	// runner is the run under the current settings, held at pos: a step
	// moves it on, a step back or a restart rewinds it to a saved mark.
	runner *missions.Runner
	cas    *missions.Case
	// full is the whole run under the current settings, whatever the
	// position: the panels are sized for it, so stepping fills them
	// without moving them, and it is what pinning and exporting keep.
	full *missions.Case
	// base is the mission as opened, before any edit; edits are the
	// fixtures the f key gave its steps (step from 1), and mission is
	// base with them.
	base  *missions.Mission
	edits map[int]missions.Fixture
	// every is the fixture F last gave every attempt, "" when the
	// schedule is not F's: the next F starts from failure_before_commit.
	every missions.Fixture
	// rec, when set, is a recorded client's run (a session): its steps
	// are the client's requests, each view the run as it stood after
	// one. Nothing the lab sets changes what a real client did. recName
	// is the file it came from.
	rec     *reproduce.SessionRun
	recName string
}

// errRecorded is the answer of every key that would change the caller or
// the schedule of a recorded client's run.
var errRecorded = errors.New("a recorded client's run is what it did: its keys, its policy and the faults it met are its own, so k, p, c, s, f and F cannot change it; " +
	"m pins it, then v and a set a mission's case beside it")

// load opens a mission at its first step; on an error the run it had
// stays.
func (r *runController) load(ms *missions.Mission) error {
	prev := *r
	r.mission, r.base, r.edits, r.rec, r.recName, r.every = ms, ms, nil, nil, "", ""
	r.pos, r.full, r.runner = 0, nil, nil
	if _, err := r.rerun(); err != nil {
		*r = prev
		return err
	}
	r.defaults = ms.Settings(missions.Overrides{})
	return nil
}

// loadRecorded opens a recorded client's run at its start.
func (r *runController) loadRecorded(run *reproduce.SessionRun, name string) {
	whole := run.Views[len(run.Views)-1]
	r.rec, r.recName = run, name
	r.mission, r.base, r.edits, r.runner = &whole.Mission, &whole.Mission, nil, nil
	r.full, r.cas = whole, run.Views[0]
	r.pos, r.steps = 0, len(run.Views)-1
	r.settings, r.defaults = whole.Settings, whole.Settings
}

// setEdits runs the mission as opened with the fixtures in edits, at the
// same position.
func (r *runController) setEdits(edits map[int]missions.Fixture) error {
	m, err := missions.Edit(r.base, edits)
	if err != nil {
		return err
	}
	prev := *r
	r.mission, r.edits, r.runner = m, edits, nil
	if _, err := r.rerun(); err != nil {
		*r = prev
		return err
	}
	return nil
}

// rerun brings the run to the current overrides and position. Under new
// settings it runs the mission once, to the end, for the whole run the
// panels are sized by, then rewinds to the position; under the same
// settings it only moves the runner it holds. resized says the whole run
// is new, so the panels are laid out anew.
func (r *runController) rerun() (resized bool, err error) {
	if r.rec != nil {
		r.cas = r.rec.Views[r.pos]
		return false, nil
	}
	s := r.mission.Settings(r.over)
	if r.runner == nil || r.runner.Settings() != s {
		var runner *missions.Runner
		if r.runner == nil {
			runner, err = missions.NewRunner(r.mission, s)
		} else {
			// The same mission under other settings: what comes of
			// the mission alone is not made again.
			runner, err = r.runner.Under(s)
		}
		if err != nil {
			return false, err
		}
		runner.Seek(runner.Steps())
		// The whole run reads its events from the runner's records,
		// which it writes again, the same, as it moves back and forth;
		// the panels make whole events of those they draw, and what
		// leaves the screen (a pin, an export) is made whole, by kept.
		r.runner, r.full, resized = runner, runner.Logged(), true
	}
	r.runner.Seek(r.pos)
	r.settings, r.steps, r.pos, r.cas = s, r.runner.Steps(), r.runner.Position(), r.runner.View()
	return resized, nil
}

// kept is the whole run with events of its own, for what outlives the
// runner or is read away from the screen's goroutine: a pin, an export.
func (r *runController) kept() *missions.Case { return r.full.Whole() }

// seek moves the run to position pos, within the run.
func (r *runController) seek(pos int) (resized bool, err error) {
	r.pos = clamp(pos, 0, r.steps)
	return r.rerun()
}

// change applies a change of the overrides and replays to the same
// position; on an error the settings before it stay.
func (r *runController) change(f func(*missions.Overrides)) (resized bool, err error) {
	if r.rec != nil {
		return false, errRecorded
	}
	old := r.over
	f(&r.over)
	resized, err = r.rerun()
	if err != nil {
		r.over = old
	}
	return resized, err
}

// hasEvidence reports whether the run at the current position has handed
// an intent to a person.
func (r *runController) hasEvidence() bool {
	return r.cas != nil && len(r.cas.Outcome.Evidence) > 0
}

// keySourceMatters reports whether the open mission is one where the key
// source is part of the lesson: it is not the per-intent default now or by
// the mission's own settings, or the mission's expectations name it.
func (r *runController) keySourceMatters() bool {
	if r.mission == nil || r.base == nil {
		return false
	}
	if r.settings.KeySource != missions.KeyPerIntent || r.defaults.KeySource != missions.KeyPerIntent {
		return true
	}
	// The mission as opened: an edit promises no outcome, yet the lesson
	// is the same.
	for _, e := range r.base.Expect {
		if e.When.KeySource != nil {
			return true
		}
	}
	return false
}
