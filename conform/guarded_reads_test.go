package conform

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// TestGuardedCallerIsNotFooledByReads: across 3,000 generated schedules,
// the engine's guarded caller meets faults on reads (a 500, no answer, a
// lagging list) and never ends an intent worse for them: where it is
// safe with every read answered, it is safe with the faults.
func TestGuardedCallerIsNotFooledByReads(t *testing.T) {
	unsafe := func(v missions.Verdict) bool {
		return v == missions.Duplicate || v == missions.HiddenEffect || v == missions.Phantom
	}
	guarded, on, own := missions.Guarded, true, missions.KeyPerIntent
	withReads, met := 0, 0
	for i := range 3000 {
		m := Generate(11, i)
		if len(m.Reads) == 0 {
			continue
		}
		withReads++
		s := m.Settings(missions.Overrides{Policy: &guarded, StableKeys: &on, KeySource: &own})
		faulted, err := missions.Run(m, s)
		if err != nil {
			t.Fatal(err)
		}
		clean := *m
		clean.Reads = nil
		plain, err := missions.Run(&clean, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range faulted.Events {
			if ev.Kind == missions.EventRead && strings.Contains(ev.Note, "shows nothing either way") {
				met++
				break
			}
		}
		for k, v := range faulted.Outcome.Verdicts {
			if unsafe(v.Verdict) && !unsafe(plain.Outcome.Verdicts[k].Verdict) {
				t.Fatalf("schedule %d: %s ends %s with its read faults %v, %s without", i, v.Intent, v.Verdict, m.Reads, plain.Outcome.Verdicts[k].Verdict)
			}
		}
	}
	if met < 100 {
		t.Fatalf("only %d schedules had a read fail: the faults are not met", met)
	}
	if withReads < 1000 {
		t.Fatalf("only %d of 3000 schedules had read faults", withReads)
	}
}
