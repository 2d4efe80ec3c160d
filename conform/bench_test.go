package conform

import (
	"context"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// BenchmarkMatrixGuarded is the whole matrix against the guarded example,
// every scenario at once, as conform runs it by default: the goal
// is at most 5 s of wall time a run on a 2-core machine.
//
//	go test -run='^$' -bench=Matrix -benchtime=5x ./conform/
func BenchmarkMatrixGuarded(b *testing.B) {
	cfg := Config{Command: []string{example(b, "guarded-refund")}}
	scenarios := Scenarios(missions.BuiltIn())
	b.ResetTimer()
	for b.Loop() {
		rep := run(b, context.Background(), cfg, scenarios)
		if rep.Passed != len(rep.Rows) {
			b.Fatalf("%d of %d pass", rep.Passed, len(rep.Rows))
		}
	}
}
