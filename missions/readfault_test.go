package missions

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/ledger"
)

const readsMission = `id: reads
title: Reads that fail and lag
goal: A read-back meets each read fault in turn.
intents:
  - id: refund-1
    op: refund
    principal: agent
    payload: {order: "1", amount: "1.00"}
schedule:
  - attempt: refund-1
    fixture: timeout_after_commit
  - read: refund-1
  - read: refund-1
  - read: refund-1
  - read: refund-1
reads:
  - {fault: read_lagging, lag: 5}
  - {fault: read_server_error}
  - {fault: read_timeout}
expect:
  - when: {policy: guarded}
    effects: 1
    verdicts: {refund-1: exactly_once}
`

// TestReadFaultsInTheEngine: the guarded caller's reads meet the
// mission's read faults in order. A lagging read does not show the
// refund committed since; a 500 and a read that never answers show
// nothing and settle nothing; the first clean read settles the intent.
func TestReadFaultsInTheEngine(t *testing.T) {
	m, err := Parse("reads.yaml", []byte(readsMission))
	if err != nil {
		t.Fatal(err)
	}
	guarded := Guarded
	c, err := Run(m, m.Settings(Overrides{Policy: &guarded}))
	if err != nil {
		t.Fatal(err)
	}
	var reads []Event
	for _, ev := range c.Events {
		if ev.Kind == EventRead && ev.Step >= 2 && ev.Step <= 5 {
			reads = append(reads, ev)
		}
	}
	if len(reads) < 4 {
		t.Fatalf("%d read events at steps 2-5: %+v", len(reads), reads)
	}
	for i, want := range []string{"no objects (a lagging read: it showed the ledger as it was 5 ticks earlier)", "answered 500", "no answer before", "re_0001 succeeded"} {
		if !strings.Contains(reads[i].Note, want) {
			t.Errorf("read %d: %q, want it to say %q", i+1, reads[i].Note, want)
		}
	}
	if v := c.Outcome.Verdicts[0]; v.Verdict != ExactlyOnce {
		t.Errorf("verdict %s, want exactly_once once a clean read shows the refund", v.Verdict)
	}
	// Every read failing: the guarded caller hands the intent to a
	// person, saying the read failed, and never sends again.
	all := *m
	all.Reads = []ReadStep{{Fault: ReadServerError}, {Fault: ReadServerError}, {Fault: ReadServerError}, {Fault: ReadServerError}, {Fault: ReadServerError}, {Fault: ReadServerError}}
	c, err = Run(&all, all.Settings(Overrides{Policy: &guarded}))
	if err != nil {
		t.Fatal(err)
	}
	if v := c.Outcome.Verdicts[0]; v.Verdict != EscalatedV || c.Outcome.Effects != 1 {
		t.Fatalf("every read failing: %s with %d effects, want escalated with 1", v.Verdict, c.Outcome.Effects)
	}
	if ev := c.Outcome.Evidence; len(ev) != 1 || !strings.Contains(ev[0].Reason, "read-back failed") {
		t.Fatalf("the evidence's reason: %+v", ev)
	}
}

// TestObjectAsOf: a lagging read sees an object only from its commit
// on, and pending until the tick it resolved.
func TestObjectAsOf(t *testing.T) {
	o := ledger.Object{ID: 1, Tick: 5, Status: ledger.Failed, ResolveAt: 9}
	if _, ok := o.AsOf(4); ok {
		t.Error("seen before its commit")
	}
	if got, ok := o.AsOf(7); !ok || got.Status != ledger.Pending || got.ResolvesTo != ledger.Failed {
		t.Errorf("at 7: %+v %v, want pending bound for failed", got, ok)
	}
	if got, _ := o.AsOf(9); got.Status != ledger.Failed {
		t.Errorf("at 9: %s, want failed", got.Status)
	}
}

// TestReadsRefusedInMissionFiles: each mistake in reads is named at its
// line, with what would be accepted.
func TestReadsRefusedInMissionFiles(t *testing.T) {
	base := strings.Split(readsMission, "reads:\n")[0]
	tail := "expect:\n  - when: {policy: guarded}\n    effects: 1\n"
	for _, tc := range []struct{ reads, want string }{
		{"reads: 3\n", "reads must be a list"},
		{"reads:\n  - {fault: read_laging, lag: 2}\n", `did you mean read_lagging`},
		{"reads:\n  - {fault: read_lagging}\n", "needs lag"},
		{"reads:\n  - {fault: read_ok, lag: 2}\n", "lag belongs to read_lagging only"},
		{"reads:\n  - {lag: 2}\n", "needs its fault"},
		{"reads:\n  - {fault: read_timeout, when: 3}\n", "when"},
	} {
		_, err := Parse("m.yaml", []byte(base+tc.reads+tail))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "m.yaml:") {
			t.Errorf("%q: %v, want an error at a line saying %q", tc.reads, err, tc.want)
		}
	}
}
