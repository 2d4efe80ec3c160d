package missions

import (
	"fmt"
	"testing"

	"github.com/replaylab/replaylab/ledger"
)

func scratchBig(n int) *Mission {
	m := &Mission{ID: fmt.Sprintf("big-%d", n), Title: "Big", Goal: "Many steps.", Contract: ledger.V1, Retention: 100, KeySource: KeyPerIntent}
	for i := range 10 {
		m.Intents = append(m.Intents, Intent{ID: fmt.Sprintf("r%d", i), Op: "refund", Principal: "agent", Payload: map[string]string{"order": fmt.Sprint(i)}})
	}
	var faults []Fixture
	for _, f := range Fixtures {
		if f != Success {
			faults = append(faults, f)
		}
	}
	for i := range n {
		f := faults[(i/10)%len(faults)]
		st := Step{Attempt: m.Intents[i%10].ID, Fixture: f}
		switch f {
		case LateCommit:
			st.Delay = 3
		case PendingFixture:
			st.Delay, st.Resolve = 3, ledger.Succeeded
		}
		m.Schedule = append(m.Schedule, st)
	}
	m.Expect = []Expectation{{Effects: 0}}
	return m
}

func BenchmarkScratch(b *testing.B) {
	m := scratchBig(19990)
	off := false
	s := m.Settings(Overrides{StableKeys: &off})
	base, _ := NewRunner(m, s)
	b.Run("quiet", func(b *testing.B) {
		for b.Loop() {
			r, _ := base.Under(s)
			r.quiet = true
			for r.Step() {
			}
		}
	})
	b.Run("record", func(b *testing.B) {
		for b.Loop() {
			r, _ := base.Under(s)
			for r.Step() {
			}
		}
	})
	b.Run("seek", func(b *testing.B) {
		for b.Loop() {
			r, _ := base.Under(s)
			r.Seek(r.Steps())
		}
	})
	b.Run("seek+case", func(b *testing.B) {
		for b.Loop() {
			r, _ := base.Under(s)
			r.Seek(r.Steps())
			r.Case()
		}
	})
}
