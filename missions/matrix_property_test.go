package missions

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/replaylab/replaylab/ledger"
)

// genMission draws a mission mixing every fixture and step kind.
func genMission(t *rapid.T) *Mission {
	nIntents := rapid.IntRange(1, 2).Draw(t, "intents")
	m := &Mission{
		ID:        "generated",
		Title:     "generated",
		Goal:      "generated",
		Contract:  ledger.V1,
		Retention: rapid.IntRange(3, 20).Draw(t, "retention"),
		KeySource: KeyPerIntent,
	}
	for i := range nIntents {
		m.Intents = append(m.Intents, Intent{
			ID: fmt.Sprintf("refund-%d", i), Op: "refund", Principal: "agent",
			Payload: map[string]string{"order": "1042", "amount": rapid.SampledFrom([]string{"20.00", "45.00"}).Draw(t, "amount")},
		})
	}
	attempt := func(label string) Step {
		st := Step{
			Attempt: m.Intents[rapid.IntRange(0, nIntents-1).Draw(t, label+"-intent")].ID,
			Fixture: rapid.SampledFrom(Fixtures).Draw(t, label+"-fixture"),
		}
		switch st.Fixture {
		case LateCommit:
			st.Delay = rapid.IntRange(1, 6).Draw(t, label+"-delay")
		case PendingFixture:
			st.Delay = rapid.IntRange(1, 6).Draw(t, label+"-delay")
			st.Resolve = rapid.SampledFrom([]ledger.Status{ledger.Succeeded, ledger.Failed}).Draw(t, label+"-resolve")
		}
		if rapid.IntRange(0, 5).Draw(t, label+"-changed") == 0 {
			st.Payload = map[string]string{"amount": "40.00"}
		}
		return st
	}
	m.Schedule = append(m.Schedule, attempt("first"))
	n := rapid.IntRange(0, 8).Draw(t, "steps")
	for i := range n {
		label := fmt.Sprintf("step%d", i)
		switch rapid.IntRange(0, 9).Draw(t, label+"-kind") {
		case 0:
			m.Schedule = append(m.Schedule, Step{Wait: rapid.IntRange(1, 25).Draw(t, label+"-wait")})
		case 1:
			m.Schedule = append(m.Schedule, Step{Read: m.Intents[rapid.IntRange(0, nIntents-1).Draw(t, label+"-read")].ID})
		case 2:
			m.Schedule = append(m.Schedule, Step{Restart: true})
		case 3:
			m.Schedule = append(m.Schedule, Step{Together: []Step{attempt(label + "a"), attempt(label + "b")}})
		default:
			m.Schedule = append(m.Schedule, attempt(label))
		}
	}
	// A mission attempts every intent it declares.
	offered := offeredAttempts(m.Schedule)
	for _, in := range m.Intents {
		if offered[in.ID] == 0 {
			m.Schedule = append(m.Schedule, Step{Attempt: in.ID, Fixture: rapid.SampledFrom(Fixtures[:3]).Draw(t, in.ID+"-last")})
		}
	}
	return m
}

func genSettings(t *rapid.T, m *Mission) Settings {
	return Settings{
		StableKeys: rapid.Bool().Draw(t, "stable"),
		Policy:     rapid.SampledFrom(Policies).Draw(t, "policy"),
		Contract:   rapid.SampledFrom(ShortContracts).Draw(t, "contract"),
		KeySource:  rapid.SampledFrom(KeySources).Draw(t, "key_source"),
		Seed:       rapid.Uint64().Draw(t, "seed"),
	}
}

// Under every setting: the effect count in each event is the ledger's, and
// it never goes down, except by one when a pending object ends failed (its
// mutation never took hold); no effect ever vanishes.
func TestPropertyEffectsNeverVanish(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genMission(t)
		s := genSettings(t, m)
		r, err := NewRunner(m, s)
		if err != nil {
			t.Fatal(err)
		}
		prev := 0
		seen := 0
		for r.Step() {
			c := r.Case()
			for _, ev := range c.Events[seen:] {
				failedNow := ev.Kind == EventResolve && strings.HasSuffix(ev.Note, "turns failed")
				if ev.Effects < prev && !(failedNow && ev.Effects == prev-1) {
					t.Fatalf("event %d (%s: %s): effects fell from %d to %d", ev.Seq, ev.Kind, ev.Note, prev, ev.Effects)
				}
				prev = ev.Effects
			}
			seen = len(c.Events)
			if seen > 0 && c.Events[seen-1].Effects != c.Ledger.Effects {
				t.Fatalf("after step %d: last event says %d effects, the ledger holds %d", r.Position(), c.Events[seen-1].Effects, c.Ledger.Effects)
			}
			standing := 0
			for _, o := range c.Ledger.Objects {
				if o.Status != ledger.Failed {
					standing++
				}
			}
			if c.Ledger.Effects != standing {
				t.Fatalf("ledger counts %d effects but holds %d objects that did not end failed", c.Ledger.Effects, standing)
			}
		}
		c := r.Case()
		if c.Outcome.Effects != c.Ledger.Effects {
			t.Fatalf("outcome says %d effects, ledger %d", c.Outcome.Effects, c.Ledger.Effects)
		}
	})
}

// The guarded caller with stable per-intent keys under a key contract never
// makes a second effect for one intent: it only resends with the same key,
// and only inside its safe window, which closes before retention ends.
func TestPropertyGuardedAtMostOneEffectPerIntent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genMission(t)
		s := genSettings(t, m)
		s.Policy = Guarded
		s.StableKeys = true
		s.KeySource = KeyPerIntent
		s.Contract = rapid.SampledFrom([]ledger.Contract{ledger.V1, ledger.V2}).Draw(t, "keyed-contract")
		c, err := Run(m, s)
		if err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for _, o := range c.Ledger.Objects {
			per[o.Intent]++
			if per[o.Intent] > 1 {
				t.Fatalf("intent %s has %d effects:\n%s", o.Intent, per[o.Intent], dumpEvents(c))
			}
		}
	})
}

// The guarded caller never reports a clean failure, or believes failed,
// when the ledger holds a live effect for the intent (a late commit
// included).
func TestPropertyGuardedNeverHidesAnEffect(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genMission(t)
		s := genSettings(t, m)
		s.Policy = Guarded
		c, err := Run(m, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range c.Outcome.Verdicts {
			if v.Effects > 0 && (v.Verdict == FailedCleanly || v.Verdict == HiddenEffect) {
				t.Fatalf("intent %s: verdict %s with %d live effects:\n%s", v.Intent, v.Verdict, v.Effects, dumpEvents(c))
			}
			if v.Verdict == FailedCleanly && v.Effects != 0 {
				t.Fatalf("intent %s: failed_cleanly with effects", v.Intent)
			}
		}
	})
}

func dumpEvents(c *Case) string {
	s := fmt.Sprintf("settings %+v\n", c.Settings)
	for _, st := range c.Mission.Schedule {
		s += "  step: " + st.String() + "\n"
	}
	for _, ev := range c.Events {
		s += fmt.Sprintf("  t%d %s %s %s %s eff=%d %s\n", ev.Tick, ev.Kind, ev.Intent, ev.Fixture, ev.Observed, ev.Effects, ev.Note)
	}
	return s
}
