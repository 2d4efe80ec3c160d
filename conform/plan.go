package conform

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/internal/termtext"
)

// Take is the part of the matrix's scenarios the shard plays, in order.
func (s Shard) Take(scenarios []*Scenario) []*Scenario {
	if s.N <= 1 {
		return scenarios
	}
	var kept []*Scenario
	for i, sc := range scenarios {
		if s.Has(i) {
			kept = append(kept, sc)
		}
	}
	return kept
}

// Recorded names, before the first row runs, every scenario whose session
// a run may record: the matrix's rows, or, for a search whose number of
// schedules is given, the schedules of its shard (a search that runs until
// a time cannot know their names first, and names none).
func Recorded(scenarios []*Scenario, ex *ExploreConfig) []string {
	var ids []string
	if ex == nil {
		for _, sc := range scenarios {
			ids = append(ids, sc.ID())
		}
		return ids
	}
	for i := range ex.Count {
		if ex.Shard.Has(i) {
			ids = append(ids, ScheduleID(ex.Seed, i))
		}
	}
	return ids
}

// Paths are the files Outputs would write for the scenarios of those ids,
// the sessions and their spans (the JUnit file is not among them).
func (o Outputs) Paths(ids []string) []string {
	if o.RecordDir == "" {
		return nil
	}
	var paths []string
	for _, id := range ids {
		paths = append(paths, o.SessionPath(id), o.TracesPath(id))
	}
	return paths
}

// Collision refuses a JUnit file that is in the way of another output: a
// session --record writes, or the client command itself.
func (o Outputs) Collision(command string, ids []string) error {
	if o.JUnit == "" {
		return nil
	}
	for _, path := range o.Paths(ids) {
		if filepath.Clean(path) == filepath.Clean(o.JUnit) {
			return fmt.Errorf("--junit %s is the path of a session --record writes; give the JUnit file another name", o.JUnit)
		}
	}
	if exe, err := exec.LookPath(command); err == nil && atomicfile.SamePath(exe, o.JUnit) {
		return fmt.Errorf("--junit %s is the client command itself; give the JUnit file another path", o.JUnit)
	}
	return nil
}

// JUnitInRecord reports whether the JUnit file goes into the folder
// --record makes, which then need not exist before.
func (o Outputs) JUnitInRecord() bool {
	return o.RecordDir != "" && filepath.Clean(filepath.Dir(o.JUnit)) == filepath.Clean(o.RecordDir)
}

// LabHint is the command that opens in the lab the session of a row that
// did not pass.
type LabHint struct {
	Command string
	Grade   Grade
}

// LabHints are the hints of rep's graded rows that did not pass, each
// session recorded in RecordDir.
func (o Outputs) LabHints(rep *Report) []LabHint {
	var hints []LabHint
	for _, row := range rep.Rows {
		if row.Session != nil && row.Graded() && row.Grade != GradePass {
			hints = append(hints, LabHint{Command: "replaylab lab " + termtext.ShellWord(o.SessionPath(row.Scenario)), Grade: row.Grade})
		}
	}
	return hints
}

// Ending is how a whole run ended, for its exit code.
type Ending int

const (
	// Passed: every row (or schedule) passed.
	Passed Ending = iota
	// Failed: a row or schedule did not pass, or a merged run is not whole.
	Failed
	// Interrupted: the run was stopped before every row ended.
	Interrupted
)

// Ending says how the run ended and, unless it passed, why in words.
// merged is true for the report of conform merge, of shards that ran
// before: one of them interrupted leaves the merge whole but the run not.
func (r *Report) Ending(merged bool) (Ending, error) {
	switch {
	case r.Interrupted && merged:
		return Failed, errors.New("a shard was interrupted: the run is not whole, and its rows that did not end are marked not run")
	case r.Interrupted:
		return Interrupted, errors.New("interrupted: the report above holds the rows that ended; the rest are marked not run")
	case r.Explore != nil:
		x := r.Explore
		if !x.Failed() {
			return Passed, nil
		}
		why := fmt.Sprintf("%s and %d unsettled in %s", termtext.Plural(len(x.Failures), "distinct failure"), len(x.Unsettled), termtext.Plural(x.Ran, "generated schedule"))
		switch {
		case x.HungStop:
			why += "; the client hung until the search stopped"
		case x.Passed == 0:
			why += "; no schedule passed"
		}
		return Failed, errors.New(why)
	case r.Passed < len(r.Rows)-r.NA:
		return Failed, fmt.Errorf("%d of %s did not pass", len(r.Rows)-r.NA-r.Passed, termtext.Plural(len(r.Rows)-r.NA, "scenario"))
	}
	return Passed, nil
}
