package lab

import "github.com/replaylab/replaylab/missions"

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
}

// load opens a mission at its first step; on an error the run it had
// stays.
func (r *runController) load(ms *missions.Mission) error {
	prev := *r
	r.mission, r.pos, r.full, r.runner = ms, 0, nil, nil
	if _, err := r.rerun(); err != nil {
		*r = prev
		return err
	}
	r.defaults = ms.Settings(missions.Overrides{})
	return nil
}

// rerun brings the run to the current overrides and position. Under new
// settings it runs the mission once, to the end, for the whole run the
// panels are sized by, then rewinds to the position; under the same
// settings it only moves the runner it holds. resized says the whole run
// is new, so the panels are laid out anew.
func (r *runController) rerun() (resized bool, err error) {
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
	if r.mission == nil {
		return false
	}
	if r.settings.KeySource != missions.KeyPerIntent || r.defaults.KeySource != missions.KeyPerIntent {
		return true
	}
	for _, e := range r.mission.Expect {
		if e.When.KeySource != nil {
			return true
		}
	}
	return false
}
