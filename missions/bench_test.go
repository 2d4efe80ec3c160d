package missions_test

import (
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// A whole mission run beside its baseline, in one invocation:
//
//	go test -run=^$ -bench=. -benchmem ./missions/
//
// The baseline does, per attempt the mission makes, what a bare Go map does
// for one attempt: an insert and a lookup. The gap is the price of what the
// run records: events, transcript, snapshots and verdicts.

var runSink int

// BenchmarkRunMission replays timeout-then-success from a fresh ledger per op.
func BenchmarkRunMission(b *testing.B) {
	m, err := missions.BuiltIn().Get("timeout-then-success")
	if err != nil {
		b.Fatal(err)
	}
	for _, stable := range []bool{true, false} {
		s := m.Settings(missions.Overrides{StableKeys: &stable})
		b.Run("stable-keys-"+missions.OnOff(stable), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c, err := missions.Run(m, s)
				if err != nil {
					b.Fatal(err)
				}
				runSink += c.Outcome.Effects
			}
		})
	}
}

// BenchmarkBaselineMapMission is the floor for BenchmarkRunMission: a new
// map per op and one insert and one lookup per attempt of the mission.
func BenchmarkBaselineMapMission(b *testing.B) {
	m, err := missions.BuiltIn().Get("timeout-then-success")
	if err != nil {
		b.Fatal(err)
	}
	var attempts []string
	for _, st := range m.Schedule {
		if st.Attempt != "" {
			attempts = append(attempts, "ik_"+st.Attempt)
		}
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ledger := map[string]int{}
		for j, k := range attempts {
			if _, ok := ledger[k]; !ok {
				ledger[k] = j
			}
			runSink += ledger[k]
		}
	}
}
