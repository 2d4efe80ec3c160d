package missions

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/ledger"
)

func runCatalog(t *testing.T, id string, o Overrides) *Case {
	t.Helper()
	m, err := BuiltIn().Get(id)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Run(m, m.Settings(o))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

// An escalation carries the evidence a person needs: the intent, the key,
// every attempt with its tick and error, every read-back, and the objects.
func TestEscalationCarriesEvidence(t *testing.T) {
	c := runCatalog(t, "changed-parameters", Overrides{Policy: ptr(Guarded)})
	if len(c.Outcome.Evidence) != 1 {
		t.Fatalf("want one evidence bundle, got %d", len(c.Outcome.Evidence))
	}
	ev := c.Outcome.Evidence[0]
	if ev.Intent != "refund-1042" || ev.Key == "" || ev.Reason == "" {
		t.Errorf("bundle lacks intent, key or reason: %+v", ev)
	}
	if len(ev.Attempts) != 2 {
		t.Fatalf("want both attempts in the evidence, got %d", len(ev.Attempts))
	}
	if ev.Attempts[0].Observed != ObservedTimeout || ev.Attempts[1].Observed != ObservedMismatch {
		t.Errorf("attempts observed %s, %s; want timeout, mismatch", ev.Attempts[0].Observed, ev.Attempts[1].Observed)
	}
	if !strings.Contains(ev.Attempts[0].Payload, "amount=45.00") || !strings.Contains(ev.Attempts[1].Payload, "amount=40.00") {
		t.Errorf("evidence must hold both requests' payloads: %q, %q", ev.Attempts[0].Payload, ev.Attempts[1].Payload)
	}
	if ev.Attempts[1].Tick <= ev.Attempts[0].Tick {
		t.Errorf("attempt ticks not increasing: %d, %d", ev.Attempts[0].Tick, ev.Attempts[1].Tick)
	}
	if len(ev.Objects) != 1 || ev.Objects[0].Object.String() != "re_0001" {
		t.Errorf("evidence objects: %+v", ev.Objects)
	}
}

// Without a key contract, the guarded caller reads back for the evidence and
// escalates instead of retrying.
func TestNoContractEscalatesWithReadBack(t *testing.T) {
	c := runCatalog(t, "no-idempotency-contract", Overrides{Policy: ptr(Guarded)})
	ev := c.Outcome.Evidence
	if len(ev) != 1 || len(ev[0].Reads) != 1 || len(ev[0].Reads[0].Found) != 1 {
		t.Fatalf("want one bundle with one read-back finding one object: %+v", ev)
	}
	if ev[0].Key != "" {
		t.Errorf("no key is sent to a provider without a contract, evidence has %q", ev[0].Key)
	}
	for _, e := range c.Events {
		if e.Kind == EventAttempt && e.Attempt > 1 {
			t.Errorf("the guarded caller resent without a contract: %+v", e)
		}
	}
}

// An empty read-back while the original is still running must not mark
// the intent failed.
func TestEmptyReadBackIsNotFailure(t *testing.T) {
	c := runCatalog(t, "original-still-running", Overrides{Policy: ptr(Guarded)})
	for _, e := range c.Events {
		if e.Kind == EventRead && e.Effects == 0 {
			if e.Checkpoint == FailedCheckpoint || e.Class != Unknown {
				t.Errorf("empty read-back recorded %s/%s; want unknown", e.Checkpoint, e.Class)
			}
		}
	}
	if v := c.Outcome.Verdicts[0]; v.Verdict != ExactlyOnce || v.Belief != BelievesDone {
		t.Errorf("verdict %+v; want exactly_once after reconciling the late commit", v)
	}
}

// A restarted guarded caller reconciles before it sends anything.
func TestRestartReconcilesBeforeSending(t *testing.T) {
	c := runCatalog(t, "crash-after-send", Overrides{Policy: ptr(Guarded)})
	restart := -1
	for i, e := range c.Events {
		if e.Kind == EventRestart {
			restart = i
		}
	}
	if restart < 0 || restart+1 >= len(c.Events) || c.Events[restart+1].Kind != EventRead {
		t.Fatalf("the event after the restart must be a read-back:\n%s", dumpEvents(c))
	}
	for _, e := range c.Events[restart:] {
		if e.Kind == EventAttempt {
			t.Errorf("sent again after the read-back settled it: %+v", e)
		}
	}
}

// The lesson of the seed lab: after the first attempt the naive agent says
// the same words in all three missions, while the ledgers differ.
func TestSameWordsDifferentLedgers(t *testing.T) {
	words := map[string]bool{}
	effects := map[int]bool{}
	for _, id := range []string{"timeout-then-success", "failure-then-failure", "timeout-before-commit"} {
		c := runCatalog(t, id, Overrides{})
		say, eff := "", -1
		for _, e := range c.Events {
			if e.Attempt == 2 {
				break
			}
			if e.Say != "" {
				say = e.Say
			}
			if e.Kind == EventAttempt {
				eff = e.Effects
			}
		}
		words[say] = true
		effects[eff] = true
	}
	if len(words) != 1 {
		t.Errorf("the agent's words after attempt 1 differ: %v", words)
	}
	if len(effects) != 2 {
		t.Errorf("want ledgers of 0 and 1 effects after attempt 1, got %v", effects)
	}
}

// v2 completes a saved server error on the retry; v1 replays it.
func TestSavedServerErrorByContract(t *testing.T) {
	v1 := runCatalog(t, "saved-server-error", Overrides{})
	v2 := runCatalog(t, "saved-server-error", Overrides{Contract: ptr(ledger.V2)})
	last := func(c *Case) Event {
		var out Event
		for _, e := range c.Events {
			if e.Kind == EventAttempt {
				out = e
			}
		}
		return out
	}
	if e := last(v1); e.Provider != "replayed" || e.Response.Code != 500 {
		t.Errorf("v1 retry: %s %d; want the saved 500 replayed", e.Provider, e.Response.Code)
	}
	if e := last(v2); e.Provider != "completed" || e.Response.Code != 200 {
		t.Errorf("v2 retry: %s %d; want the work completed with 200", e.Provider, e.Response.Code)
	}
}

// With fresh keys the evidence names the key a person can look up: the last
// one actually sent.
func TestEvidenceKeyIsTheLastSent(t *testing.T) {
	c := runCatalog(t, "timeout-before-commit", Overrides{Policy: ptr(Guarded), StableKeys: ptr(false)})
	if len(c.Outcome.Evidence) != 1 {
		t.Fatalf("want one escalation, got %d", len(c.Outcome.Evidence))
	}
	ev := c.Outcome.Evidence[0]
	if n := len(ev.Attempts); n == 0 || ev.Key != ev.Attempts[n-1].Key {
		t.Errorf("evidence key %q; the attempts sent %+v", ev.Key, ev.Attempts)
	}
}

// A read-back that finds an object with other parameters than the intent's
// (here a 40.00 refund for a 45.00 intent) does not settle the intent: the
// guarded caller escalates instead of reporting the refund done.
func TestGuardedRefusesAnObjectWithOtherParameters(t *testing.T) {
	m, err := BuiltIn().Get("timeout-then-success")
	if err != nil {
		t.Fatal(err)
	}
	wrong := *m
	wrong.Schedule = append([]Step{}, m.Schedule...)
	wrong.Schedule[0].Payload = map[string]string{"amount": "40.00"}
	c, err := Run(&wrong, wrong.Settings(Overrides{Policy: ptr(Guarded), StableKeys: ptr(false)}))
	if err != nil {
		t.Fatal(err)
	}
	v := c.Outcome.Verdicts[0]
	if v.Verdict != EscalatedV || len(c.Outcome.Evidence) != 1 || !strings.Contains(c.Outcome.Evidence[0].Reason, "other parameters") {
		t.Fatalf("verdict %s, evidence %+v; want an escalation naming the other parameters:\n%s", v.Verdict, c.Outcome.Evidence, dumpEvents(c))
	}
}

// Without a key contract a refund the caller heard about (pending, then
// read back succeeded) is settled by reading; only an unknown outcome goes
// to a person.
func TestNoContractSettlesARecordedRefund(t *testing.T) {
	c := runCatalog(t, "refund-still-pending", Overrides{Policy: ptr(Guarded), Contract: ptr(ledger.None)})
	if v := c.Outcome.Verdicts[0]; v.Verdict != ExactlyOnce {
		t.Fatalf("verdict %s; want exactly_once:\n%s", v.Verdict, dumpEvents(c))
	}
}

// A timeout leaves nothing heard in the evidence: the bundle must not tell
// apart the two timeouts the caller cannot tell apart.
func TestEvidenceRecordsOnlyWhatWasHeard(t *testing.T) {
	c := runCatalog(t, "changed-parameters", Overrides{Policy: ptr(Guarded)})
	a := c.Outcome.Evidence[0].Attempts
	if a[0].Observed != ObservedTimeout || a[0].Response != nil {
		t.Errorf("a timed-out attempt carries a response: %+v", a[0])
	}
	if a[1].Response == nil || a[1].Response.Code != ledger.CodeMismatch {
		t.Errorf("the mismatch the caller heard is missing: %+v", a[1])
	}
}

// A send the guarded caller holds back in a together step is the send of
// one worker, and its hold event names that worker.
func TestHoldInATogetherStepNamesItsWorker(t *testing.T) {
	c := runCatalog(t, "concurrent-duplicates", Overrides{Policy: ptr(Guarded), StableKeys: ptr(false)})
	holds := 0
	for _, ev := range c.Events {
		if ev.Kind == EventHold && ev.Step == 1 {
			holds++
			if ev.Worker != 2 {
				t.Errorf("the hold of step 1 names worker %d, want 2 (worker 1 sent)", ev.Worker)
			}
		}
	}
	if holds != 1 {
		t.Fatalf("want one hold in step 1, got %d", holds)
	}
}
