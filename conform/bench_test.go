package conform

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

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

// BenchmarkExploreGuarded measures the search against guarded-refund
// beside the matrix, in one run: schedules a second (the goal is
// at least 10 on a 2-core machine) and the matrix's cost per row, both
// at --tick 20ms.
//
//	go test -run='^$' -bench=ExploreGuarded -benchtime=1x ./conform/
//	REPLAYLAB_EXPLORE_N=500 go test -run='^$' -bench=ExploreGuarded -benchtime=1x ./conform/
func BenchmarkExploreGuarded(b *testing.B) {
	cfg := Config{Command: []string{example(b, "guarded-refund")}, Tick: 20 * time.Millisecond}
	n := 100
	if v, err := strconv.Atoi(os.Getenv("REPLAYLAB_EXPLORE_N")); err == nil && v > 0 {
		n = v
	}
	scenarios := Scenarios(missions.BuiltIn())
	for b.Loop() {
		t0 := time.Now()
		matrix := run(b, context.Background(), cfg, scenarios)
		perRow := time.Since(t0) / time.Duration(len(matrix.Rows))
		t1 := time.Now()
		rep, err := Explore(context.Background(), cfg, ExploreConfig{Count: n, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(rep.Explore.PerSecond, "schedules/s")
		b.ReportMetric(time.Since(t1).Seconds(), "search-s")
		b.ReportMetric(perRow.Seconds()*1000, "matrix-ms/row")
		b.ReportMetric(float64(len(rep.Explore.Failures)), "unsafe")
	}
}
