package lab

import (
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// A key in the lab at the end of the largest mission beside the same key
// in a three-step one, in one run:
//
//	go test -run=^$ -bench=Lab -benchmem ./lab/
//
// The step and step-back keys are measured at the end of the run (a step
// from the next-to-last position, a step back from the last), the toggle
// at the last position: one whole run under the new settings, from the
// case the name says to the other. The step back after a toggle is the
// first one the new run takes.

// bigMission has n attempt steps over ten intents, the fixtures of the
// test matrix in turn but success: a naive caller never believes it done,
// so it sends at every step, and with fresh keys the ledger grows by most
// of them.
func bigMission(n int) *missions.Mission {
	m := &missions.Mission{ID: fmt.Sprintf("big-%d", n), Title: "Big", Goal: "Many steps.", Contract: ledger.V1, Retention: 100, KeySource: missions.KeyPerIntent}
	for i := range 10 {
		m.Intents = append(m.Intents, missions.Intent{ID: fmt.Sprintf("r%d", i), Op: "refund", Principal: "agent", Payload: map[string]string{"order": fmt.Sprint(i)}})
	}
	var faults []missions.Fixture
	for _, f := range missions.Fixtures {
		if f != missions.Success {
			faults = append(faults, f)
		}
	}
	for i := range n {
		f := faults[(i/10)%len(faults)]
		st := missions.Step{Attempt: m.Intents[i%10].ID, Fixture: f}
		switch f {
		case missions.LateCommit:
			st.Delay = 3
		case missions.PendingFixture:
			st.Delay, st.Resolve = 3, ledger.Succeeded
		}
		m.Schedule = append(m.Schedule, st)
	}
	m.Expect = []missions.Expectation{{Effects: 0}}
	return m
}

func benchLab(b *testing.B, steps int, stable bool) Model {
	cat := missions.BuiltIn()
	var id string
	if steps == 3 {
		id = "timeout-then-success"
	} else {
		m := bigMission(steps)
		data, err := missions.Format(m)
		if err != nil {
			b.Fatal(err)
		}
		if err := cat.AddFS(fstest.MapFS{"big.yaml": {Data: data}}, "bench"); err != nil {
			b.Fatal(err)
		}
		id = m.ID
	}
	return newLab(b, Options{Catalog: cat, Mission: id, Dir: b.TempDir(), Overrides: missions.Overrides{StableKeys: &stable}}, 100, 30)
}

func BenchmarkLabKey(b *testing.B) {
	for _, tc := range []struct {
		n      int
		stable bool
	}{{3, true}, {19990, true}, {3, false}, {19990, false}} {
		n := tc.n
		m := benchLab(b, n, tc.stable)
		m = press(b, m, "r") // run to the end
		if m.pos != m.steps {
			b.Fatalf("at %d of %d", m.pos, m.steps)
		}
		keys := "stable-keys-" + missions.OnOff(tc.stable)
		b.Logf("%d steps, %s: %d objects in the ledger at the end", n, keys, len(m.full.Ledger.Objects))
		b.Run(fmt.Sprintf("step/%d-steps/%s", n, keys), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				m.moveTo(m.steps - 1)
				b.StartTimer()
				m = press(b, m, "n")
			}
		})
		b.Run(fmt.Sprintf("step-back/%d-steps/%s", n, keys), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				m.moveTo(m.steps)
				b.StartTimer()
				m = press(b, m, "b")
			}
		})
		// toggles times k at the end of the run, one way: back to the
		// case the name says, untimed, so each direction of the toggle is
		// measured on its own.
		toggles := func(b *testing.B) {
			m.moveTo(m.steps)
			for b.Loop() {
				m = press(b, m, "k")
				b.StopTimer()
				m = press(b, m, "k")
				b.StartTimer()
			}
		}
		b.Run(fmt.Sprintf("toggle/%d-steps/%s", n, keys), func(b *testing.B) {
			toggles(b)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6/(float64(n)/1000), "ms/1000-attempts")
		})
		// The same toggle with the checkpoints hidden, as a first-timer
		// sees the timeline: the rows shown are listed anew.
		b.Run(fmt.Sprintf("toggle-checkpoints-hidden/%d-steps/%s", n, keys), func(b *testing.B) {
			m = press(b, m, "h")
			if !m.timeline.hideCP {
				b.Fatal("h did not hide the checkpoints")
			}
			toggles(b)
			m = press(b, m, "h")
		})
		// The first step back after a toggle: a run keeps few marks
		// where it has not been moved back before, so this step pays
		// for filling them in.
		b.Run(fmt.Sprintf("step-back-after-toggle/%d-steps/%s", n, keys), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				m.moveTo(m.steps)
				m = press(b, m, "k", "k")
				b.StartTimer()
				m = press(b, m, "b")
			}
		})
	}
}
