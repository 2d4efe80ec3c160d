package conform

import (
	"context"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// TestGradesDoNotDependOnTheLoad: the whole matrix, run ten times with
// every row's Node client started at once on this machine, gives the same
// grade to every row every time: a row's budget counts from its client's
// first request, not from a start that the load delays.
func TestGradesDoNotDependOnTheLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 150 Node processes")
	}
	scenarios := Scenarios(missions.BuiltIn())
	cfg := Config{Command: nodeClient(t), Parallel: len(scenarios)}
	var first []Grade
	for round := range 10 {
		rep := run(t, context.Background(), cfg, scenarios)
		for i, row := range rep.Rows {
			if round == 0 {
				first = append(first, row.Grade)
				if row.Grade != GradePass {
					t.Errorf("round 1: %s: %s: %s", row.Scenario, row.Grade, row.Why)
				}
				continue
			}
			if row.Grade != first[i] {
				t.Errorf("round %d: %s is %s (%s); round 1 graded it %s", round+1, row.Scenario, row.Grade, row.Why, first[i])
			}
		}
		if t.Failed() {
			return
		}
	}
}
