package missions_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// coreFixtures are the fixtures of the seed lab's missions.
var coreFixtures = []missions.Fixture{
	missions.FailureBeforeCommit,
	missions.TimeoutAfterCommit,
	missions.Success,
	missions.TimeoutBeforeCommit,
}

// commits reports whether an attempt meeting the fixture reaches the
// provider and executes (unless the ledger deduplicates it).
func commits(f missions.Fixture) bool {
	return f == missions.TimeoutAfterCommit || f == missions.Success
}

// genCoreMission draws a mission of one to three intents and a schedule of
// attempts meeting the core fixtures, with an occasional wait.
func genCoreMission(t *rapid.T) *missions.Mission {
	m := &missions.Mission{
		ID: "generated", Title: "generated", Goal: "generated",
		Contract: ledger.V1, Retention: ledger.DefaultRetention, KeySource: missions.KeyPerIntent,
	}
	n := rapid.IntRange(1, 3).Draw(t, "intents")
	for i := range n {
		m.Intents = append(m.Intents, missions.Intent{
			ID: fmt.Sprintf("refund-%d", i+1), Op: "refund", Principal: "agent",
			Payload: map[string]string{"order": fmt.Sprint(1040 + i), "amount": "45.00"},
		})
	}
	steps := rapid.IntRange(1, 12).Draw(t, "steps")
	for i := range steps {
		if i > 0 && rapid.IntRange(0, 6).Draw(t, fmt.Sprintf("wait%d?", i)) == 0 {
			m.Schedule = append(m.Schedule, missions.Step{Wait: rapid.IntRange(1, 5).Draw(t, fmt.Sprintf("wait%d", i))})
			continue
		}
		m.Schedule = append(m.Schedule, missions.Step{
			Attempt: m.Intents[rapid.IntRange(0, n-1).Draw(t, fmt.Sprintf("intent%d", i))].ID,
			Fixture: rapid.SampledFrom(coreFixtures).Draw(t, fmt.Sprintf("fixture%d", i)),
		})
	}
	// A mission attempts every intent it declares.
	for _, in := range m.Intents {
		if !attempts(m, in.ID) {
			m.Schedule = append(m.Schedule, missions.Step{Attempt: in.ID, Fixture: rapid.SampledFrom(coreFixtures).Draw(t, in.ID+"-last")})
		}
	}
	return m
}

func attempts(m *missions.Mission, intent string) bool {
	for _, st := range m.Schedule {
		if st.Attempt == intent {
			return true
		}
	}
	return false
}

func naive(stable bool, seed uint64) missions.Settings {
	return missions.Settings{StableKeys: stable, Policy: missions.Naive, Contract: ledger.V1, KeySource: missions.KeyPerIntent, Seed: seed}
}

// effectsByIntent counts the ledger's objects per intent.
func effectsByIntent(c *missions.Case) map[string]int {
	n := map[string]int{}
	for _, o := range c.Ledger.Objects {
		n[o.Intent]++
	}
	return n
}

// With stable keys, each intent has at most one effect: exactly one if any
// attempt it sent met a committing fixture, none otherwise.
func TestPropertyStableKeysAtMostOneEffectPerIntent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genCoreMission(t)
		c, err := missions.Run(m, naive(true, rapid.Uint64().Draw(t, "seed")))
		if err != nil {
			t.Fatal(err)
		}
		committed := map[string]bool{}
		for _, ev := range c.Events {
			if ev.Kind == missions.EventAttempt && commits(ev.Fixture) {
				committed[ev.Intent] = true
			}
		}
		got := effectsByIntent(c)
		for _, in := range m.Intents {
			want := 0
			if committed[in.ID] {
				want = 1
			}
			if got[in.ID] != want {
				t.Fatalf("intent %s: %d effects, want %d\n%s", in.ID, got[in.ID], want, eventLines(c))
			}
			if got[in.ID] > 1 {
				t.Fatalf("intent %s: %d effects with a stable key", in.ID, got[in.ID])
			}
		}
		for _, v := range c.Outcome.Verdicts {
			if v.Verdict == missions.Duplicate {
				t.Fatalf("a duplicate with stable keys: %+v", v)
			}
		}
	})
}

// Without stable keys, every attempt that reached the provider and met a
// committing fixture is an effect of its own.
func TestPropertyFreshKeysEffectPerCommittedAttempt(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genCoreMission(t)
		c, err := missions.Run(m, naive(false, rapid.Uint64().Draw(t, "seed")))
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, ev := range c.Events {
			if ev.Kind == missions.EventAttempt && commits(ev.Fixture) {
				want++
			}
		}
		if c.Outcome.Effects != want || c.Ledger.Effects != want {
			t.Fatalf("%d effects (ledger %d), want %d: one per committed attempt\n%s", c.Outcome.Effects, c.Ledger.Effects, want, eventLines(c))
		}
	})
}

// Stepping the runner: after every event the effect count it carries is
// the ledger's at that point, and at the end of each step the last event
// agrees with the ledger snapshot.
func TestPropertyEventEffectsMatchLedger(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genCoreMission(t)
		s := naive(rapid.Bool().Draw(t, "stable"), rapid.Uint64().Draw(t, "seed"))
		r, err := missions.NewRunner(m, s)
		if err != nil {
			t.Fatal(err)
		}
		count, seen := 0, 0
		for r.Step() {
			c := r.Case()
			for _, ev := range c.Events[seen:] {
				if ev.Provider == string(ledger.Committed) || ev.Provider == string(ledger.LateCommit) {
					count++
				}
				if ev.Effects != count {
					t.Fatalf("event %d (%s %s): effects %d, the ledger holds %d\n%s", ev.Seq, ev.Kind, ev.Provider, ev.Effects, count, eventLines(c))
				}
			}
			seen = len(c.Events)
			if c.Ledger.Effects != count {
				t.Fatalf("after step %d: the snapshot holds %d effects, the events say %d", r.Position(), c.Ledger.Effects, count)
			}
		}
		if !r.Done() || r.Position() != r.Steps() {
			t.Fatalf("runner stopped at %d of %d steps", r.Position(), r.Steps())
		}
	})
}

// The same mission, settings and seed give byte-identical exports, whether
// run at once or stepped.
func TestPropertyDeterministicBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genCoreMission(t)
		s := naive(rapid.Bool().Draw(t, "stable"), rapid.Uint64().Draw(t, "seed"))
		a, err := missions.Run(m, s)
		if err != nil {
			t.Fatal(err)
		}
		b, err := missions.Run(m, s)
		if err != nil {
			t.Fatal(err)
		}
		r, err := missions.NewRunner(m, s)
		if err != nil {
			t.Fatal(err)
		}
		for r.Step() {
		}
		// (The export package's encoding sits above this one; the plain
		// JSON of a case holds every field it writes.)
		ab, errA := json.Marshal(a)
		bb, errB := json.Marshal(b)
		rb, errR := json.Marshal(r.Case())
		if err := errors.Join(errA, errB, errR); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ab, bb) {
			t.Fatal("two runs give different bytes")
		}
		if !bytes.Equal(ab, rb) {
			t.Fatal("stepping gives different bytes from Run")
		}
	})
}

func eventLines(c *missions.Case) string {
	var b bytes.Buffer
	for _, ev := range c.Events {
		fmt.Fprintf(&b, "  t%d %s %s %s %s %s effects=%d\n", ev.Tick, ev.Kind, ev.Intent, ev.Key, ev.Fixture, ev.Provider, ev.Effects)
	}
	return b.String()
}
