package missions

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/providers"
)

// These tests pin four rules of the guarded caller that the catalog's
// outcomes alone do not tell apart: each fails if its rule is changed.

// oneIntent is a mission of one refund and the given steps, retention ret.
func oneIntent(ret int, steps ...Step) *Mission {
	m := &Mission{ID: "rule", Title: "rule", Goal: "a rule", Contract: ledger.V1, Retention: ret, KeySource: KeyPerIntent,
		Intents: []Intent{{ID: "refund-1", Op: "refund", Principal: "agent", Payload: map[string]string{"order": "1", "amount": "10.00"}}}}
	for _, st := range steps {
		if st.Attempt == "" && st.Fixture != "" {
			st.Attempt = "refund-1"
		}
		m.Schedule = append(m.Schedule, st)
	}
	return m
}

func guardedRun(t *testing.T, m *Mission, stable bool, c ledger.Contract) *Case {
	t.Helper()
	s := m.Settings(Overrides{Policy: ptr(Guarded), StableKeys: &stable, Contract: &c})
	cs, err := Run(m, s)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func sendsAt(c *Case, step int) int {
	n := 0
	for _, ev := range c.Events {
		if ev.Kind == EventAttempt && ev.Step == step {
			n++
		}
	}
	return n
}

// TestGuardedStopsRetryingAReplayedError: once a same-key retry only gets
// the saved 500 back, a third attempt is not sent; the caller reads the
// ledger instead, and settles from what it finds.
func TestGuardedStopsRetryingAReplayedError(t *testing.T) {
	m := oneIntent(100, Step{Fixture: ServerErrorAfterCommit}, Step{Fixture: Success}, Step{Fixture: Success})
	c := guardedRun(t, m, true, ledger.V1)
	if sendsAt(c, 1) != 1 || sendsAt(c, 2) != 1 {
		t.Fatalf("the first two attempts go out: %d, %d", sendsAt(c, 1), sendsAt(c, 2))
	}
	if n := sendsAt(c, 3); n != 0 {
		t.Errorf("a third attempt was sent after the saved error was replayed (%d sends at step 3)", n)
	}
	var hold, read bool
	for _, ev := range c.Events {
		if ev.Step == 3 && ev.Kind == EventHold && strings.Contains(ev.Note, "only replays the saved error") {
			hold = true
		}
		if ev.Step == 3 && ev.Kind == EventRead {
			read = true
		}
	}
	if !hold || !read {
		t.Errorf("step 3 holds (%v) and reads back (%v) instead", hold, read)
	}
	if v := c.Outcome.Verdicts[0]; v.Verdict != ExactlyOnce {
		t.Errorf("the read-back settles it: %s", v.Verdict)
	}
}

// TestGuardedSafeWindowBoundary: the safe retry window closes at its last
// tick. With retention 10 the window is 8 ticks: a same-key resend 7 ticks
// after the first send goes out; 8 ticks after, it does not.
func TestGuardedSafeWindowBoundary(t *testing.T) {
	for _, tc := range []struct {
		wait  int // ticks between the first send's step and the retry's
		sends int
	}{{6, 1}, {7, 0}} {
		// The first send is at t0; its step ends at t1; the wait moves
		// the clock its ticks; the retry is at t1+wait.
		m := oneIntent(10, Step{Fixture: TimeoutBeforeCommit}, Step{Wait: tc.wait}, Step{Fixture: Success})
		c := guardedRun(t, m, true, ledger.V1)
		if n := sendsAt(c, 3); n != tc.sends {
			t.Errorf("retry %d ticks after the first send: %d sends, want %d", 1+tc.wait, n, tc.sends)
		}
	}
}

// scriptedWire is a world for a caller alone: replies and read-backs are
// scripted, and what the caller logs and says is kept. A caller sees the
// wire only, so this is all it needs.
type scriptedWire struct {
	now     int
	replies []Reply
	found   []ObjectView
	events  []Event
	said    []Said
}

func (w *scriptedWire) Now() int                        { return w.now }
func (w *scriptedWire) Profile() (*ledger.Profile, int) { return providers.Builtin("v1"), 100 }
func (w *scriptedWire) ReadBack(string, bool) ([]ObjectView, Observation) {
	return w.found, ObservedSuccess
}
func (w *scriptedWire) Log(ev Event) { w.events = append(w.events, ev) }
func (w *scriptedWire) LogIntent(_ int, kind EventKind, worker int, cp Checkpoint, class Class, why Why) {
	w.Log(Event{Kind: kind, Worker: worker, Checkpoint: cp, Class: class, Why: why})
}
func (w *scriptedWire) Classified(Class)  {}
func (w *scriptedWire) Say(_ int, s Said) { w.said = append(w.said, s) }
func (w *scriptedWire) Recording() bool   { return true }
func (w *scriptedWire) Send(int, string, Turn) Reply {
	r := w.replies[0]
	w.replies = w.replies[1:]
	return r
}

// TestGuardedEscalatesSeveralObjects: a read-back that finds two objects
// for one intent settles nothing, whatever their status: it goes to a
// person, who is told how many there are. (The simulated world rarely
// makes two objects for an intent under the guarded caller; another
// process can, so the caller is tested against the wire directly.)
func TestGuardedEscalatesSeveralObjects(t *testing.T) {
	m := oneIntent(100, Step{Fixture: TimeoutAfterCommit}, Step{Read: "refund-1"})
	s := m.Settings(Overrides{Policy: ptr(Guarded)})
	c := NewCaller(m, s)
	in := c.Intent(0)
	w := &scriptedWire{replies: []Reply{{Attempt: 1}}} // a timeout
	c.Turn(w, 0, Turn{Ahead: 0})
	if in.Belief != BelievesUnknown {
		t.Fatalf("after a timeout the guarded caller believes %s", in.Belief)
	}
	w.now = 1
	mine := ObjectView{Intent: "refund-1", Digest: in.Digest, Payload: in.Payload, Status: ledger.Succeeded}
	a, b := mine, mine
	a.ID, b.ID = 1, 2
	w.found = []ObjectView{a, b}
	c.Read(w, 0)
	if in.Belief != BelievesEscalated || in.Checkpoint != Escalated {
		t.Fatalf("two objects found: belief %s, checkpoint %s; want escalated", in.Belief, in.Checkpoint)
	}
	last := w.events[len(w.events)-1]
	if last.Kind != EventEscalate || last.Why.Code != whyManyObjects || last.Why.N != 2 {
		t.Errorf("the escalation: %+v", last)
	}
	if got := (Words{Mission: m, Settings: s}).Evidence(in).Reason; got != "the read-back found 2 objects for one intent" {
		t.Errorf("the person is told %q", got)
	}
}

// TestEmptyReadBackKeepsTheBeliefUnknown: an empty read-back proves
// nothing while the original could still commit: after it, the caller
// still believes the outcome unknown, not failed.
func TestEmptyReadBackKeepsTheBeliefUnknown(t *testing.T) {
	m := oneIntent(100, Step{Fixture: TimeoutBeforeCommit}, Step{Read: "refund-1"}, Step{Wait: 2})
	c := guardedRun(t, m, true, ledger.V1)
	found := false
	for _, ev := range c.Events {
		if ev.Kind == EventRead && ev.Step == 2 {
			found = true
			if ev.Belief != BelievesUnknown || ev.Class != Unknown {
				t.Errorf("after an empty read-back: belief %s, class %s; want unknown, unknown", ev.Belief, ev.Class)
			}
		}
		if ev.Step == 3 && ev.Belief == BelievesFailed {
			t.Errorf("the caller came to believe the refund failed: %+v", ev)
		}
	}
	if !found {
		t.Fatal("no read-back at step 2")
	}
}

// TestCheckpointsCarryTheirBelief: every checkpoint event, for every
// catalog mission under every setting, carries the belief it records: a
// caller that writes down "unknown" believes the outcome unknown, one that
// writes down "delivered" believes it done.
func TestCheckpointsCarryTheirBelief(t *testing.T) {
	want := map[Checkpoint][]Belief{
		Committed:        {BelievesDone, BelievesPending},
		Reconciled:       {BelievesDone},
		Delivered:        {BelievesDone},
		FailedCheckpoint: {BelievesFailed},
		UnknownState:     {BelievesUnknown},
		Escalated:        {BelievesEscalated},
	}
	for _, m := range BuiltIn().Missions {
		for _, stable := range []bool{true, false} {
			for _, p := range Policies {
				for _, c := range ShortContracts {
					for _, k := range KeySources {
						cs, err := Run(m, m.Settings(Overrides{StableKeys: &stable, Policy: &p, Contract: &c, KeySource: &k}))
						if err != nil {
							t.Fatal(err)
						}
						for _, ev := range cs.Events {
							ok, ws := false, want[ev.Checkpoint]
							if ev.Kind != EventCheckpoint && ev.Kind != EventEscalate || ws == nil {
								continue
							}
							for _, b := range ws {
								ok = ok || ev.Belief == b
							}
							if !ok {
								t.Errorf("%s %s: event %d (%s, %s) carries belief %s", m.ID, SettingsWords(cs.Settings), ev.Seq, ev.Checkpoint, ev.Note, ev.Belief)
							}
						}
					}
				}
			}
		}
	}
}
