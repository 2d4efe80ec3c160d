package ledger_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/ledger"
)

// op is one line of a ledger script: either the clock moves (advance > 0)
// or a request is submitted; then the effect count is checked.
type op struct {
	advance int
	changes []ledger.ChangeKind // expected changes from the advance

	intent, key, digest string
	ex                  ledger.Execution
	want                ledger.Action
	code                int
	object              ledger.ObjectID
	status              ledger.Status

	effects int // the ledger's effect count afterwards
}

var (
	commit      = ledger.Execution{Kind: ledger.Commit}
	reject      = ledger.Execution{Kind: ledger.Reject}
	serverError = ledger.Execution{Kind: ledger.CommitServerError}
)

func later(d int) ledger.Execution { return ledger.Execution{Kind: ledger.CommitLater, Delay: d} }

func pending(d int, end ledger.Status) ledger.Execution {
	return ledger.Execution{Kind: ledger.CommitPending, Delay: d, Terminal: end}
}

func send(key, digest string, ex ledger.Execution, want ledger.Action, code int, obj ledger.ObjectID, effects int) op {
	return op{intent: "refund-1", key: key, digest: digest, ex: ex, want: want, code: code, object: obj, effects: effects}
}

func advance(n, effects int, changes ...ledger.ChangeKind) op {
	return op{advance: n, effects: effects, changes: changes}
}

// TestLedgerRules plays one script per rule of the provider contract.
func TestLedgerRules(t *testing.T) {
	const ok, bad, conflict, mismatch, s500 = ledger.CodeOK, ledger.CodeBadRequest, ledger.CodeConflict, ledger.CodeMismatch, ledger.CodeServerError
	tests := []struct {
		name      string
		contract  ledger.Contract
		retention int
		ops       []op
	}{
		{"none: a repeated key is a new effect", ledger.None, 100, []op{
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
			send("k1", "d1", commit, ledger.Committed, ok, 2, 2),
			send("k1", "d1", serverError, ledger.Committed, s500, 3, 3),
		}},
		{"v1: no key means no deduplication", ledger.V1, 100, []op{
			send("", "d1", commit, ledger.Committed, ok, 1, 1),
			send("", "d1", commit, ledger.Committed, ok, 2, 2),
		}},
		{"v1: a repeat gets the saved response, no new effect", ledger.V1, 100, []op{
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
			send("k1", "d1", commit, ledger.Replayed, ok, 1, 1),
			send("k1", "d1", reject, ledger.Replayed, ok, 1, 1),
		}},
		{"v1: fresh keys are separate operations", ledger.V1, 100, []op{
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
			send("k2", "d1", commit, ledger.Committed, ok, 2, 2),
		}},
		{"v1: a rejection saves nothing, so a corrected retry runs", ledger.V1, 100, []op{
			send("k1", "d1", reject, ledger.Rejected, bad, 0, 0),
			send("k1", "d1", reject, ledger.Rejected, bad, 0, 0),
			send("k1", "d2", commit, ledger.Committed, ok, 1, 1),
			send("k1", "d2", commit, ledger.Replayed, ok, 1, 1),
		}},
		{"v1: a saved 500 is replayed as a 500", ledger.V1, 100, []op{
			send("k1", "d1", serverError, ledger.Committed, s500, 1, 1),
			send("k1", "d1", commit, ledger.Replayed, s500, 1, 1),
			send("k1", "d1", commit, ledger.Replayed, s500, 1, 1),
		}},
		{"v1: same key while executing is a conflict, not saved", ledger.V1, 100, []op{
			send("k1", "d1", later(3), ledger.Executing, 0, 0, 0),
			send("k1", "d1", commit, ledger.Conflict, conflict, 0, 0),
			advance(2, 0),
			send("k1", "d1", commit, ledger.Conflict, conflict, 0, 0),
			advance(1, 1, ledger.LateCommit),
			send("k1", "d1", commit, ledger.Replayed, ok, 1, 1),
		}},
		{"v1: a saved key with another payload is rejected", ledger.V1, 100, []op{
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
			send("k1", "d2", commit, ledger.Mismatch, mismatch, 0, 1),
			send("k1", "d1", commit, ledger.Replayed, ok, 1, 1),
		}},
		{"v1: a mismatch while executing is still a mismatch", ledger.V1, 100, []op{
			send("k1", "d1", later(2), ledger.Executing, 0, 0, 0),
			send("k1", "d2", commit, ledger.Mismatch, mismatch, 0, 0),
			advance(2, 1, ledger.LateCommit),
		}},
		{"v1: after retention the key is pruned and executes anew", ledger.V1, 5, []op{
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
			advance(4, 1),
			send("k1", "d1", commit, ledger.Replayed, ok, 1, 1),
			advance(1, 1, ledger.Pruned),
			send("k1", "d1", commit, ledger.Committed, ok, 2, 2),
			send("k1", "d2", commit, ledger.Mismatch, mismatch, 0, 2),
		}},
		{"v1: a pending object resolves failed and stops counting; the replay keeps the saved status", ledger.V1, 100, []op{
			{intent: "refund-1", key: "k1", digest: "d1", ex: pending(2, ledger.Failed), want: ledger.Committed, code: ok, object: 1, status: ledger.Pending, effects: 1},
			advance(2, 0, ledger.Resolved),
			{intent: "refund-1", key: "k1", digest: "d1", ex: commit, want: ledger.Replayed, code: ok, object: 1, status: ledger.Pending, effects: 0},
		}},
		{"v2: a pending object resolves; the replay shows the status now", ledger.V2, 100, []op{
			{intent: "refund-1", key: "k1", digest: "d1", ex: pending(2, ledger.Succeeded), want: ledger.Committed, code: ok, object: 1, status: ledger.Pending, effects: 1},
			{intent: "refund-1", key: "k1", digest: "d1", ex: commit, want: ledger.Replayed, code: ok, object: 1, status: ledger.Pending, effects: 1},
			advance(2, 1, ledger.Resolved),
			{intent: "refund-1", key: "k1", digest: "d1", ex: commit, want: ledger.Replayed, code: ok, object: 1, status: ledger.Succeeded, effects: 1},
		}},
		{"v2: a repeat completes a saved 500 without a second effect", ledger.V2, 100, []op{
			send("k1", "d1", serverError, ledger.Committed, s500, 1, 1),
			{intent: "refund-1", key: "k1", digest: "d1", ex: commit, want: ledger.Completed, code: ok, object: 1, status: ledger.Succeeded, effects: 1},
			send("k1", "d1", commit, ledger.Replayed, ok, 1, 1),
		}},
		{"v2: conflicts and mismatches as in v1", ledger.V2, 100, []op{
			send("k1", "d1", later(1), ledger.Executing, 0, 0, 0),
			send("k1", "d1", commit, ledger.Conflict, conflict, 0, 0),
			advance(1, 1, ledger.LateCommit),
			send("k1", "d2", commit, ledger.Mismatch, mismatch, 0, 1),
		}},
		{"none: a late commit saves no record", ledger.None, 100, []op{
			send("k1", "d1", later(1), ledger.Executing, 0, 0, 0),
			send("k1", "d1", later(1), ledger.Executing, 0, 0, 0),
			advance(1, 2, ledger.LateCommit, ledger.LateCommit),
			send("k1", "d1", commit, ledger.Committed, ok, 3, 3),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ledger.New(ledger.Config{Contract: tt.contract, Retention: tt.retention})
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range tt.ops {
				where := fmt.Sprintf("op %d", i+1)
				if o.advance > 0 {
					var kinds []ledger.ChangeKind
					for _, ch := range l.Advance(o.advance) {
						kinds = append(kinds, ch.Kind)
					}
					if fmt.Sprint(kinds) != fmt.Sprint(o.changes) {
						t.Errorf("%s: advance %d: changes %v, want %v", where, o.advance, kinds, o.changes)
					}
				} else {
					res := l.Submit(ledger.Request{Intent: o.intent, Key: o.key, Digest: o.digest, Payload: "amount=1"}, o.ex)
					if res.Action != o.want || res.Response.Code != o.code || res.Response.Object != o.object {
						t.Errorf("%s: got %s %d %q, want %s %d %q", where, res.Action, res.Response.Code, res.Response.Object, o.want, o.code, o.object)
					}
					if o.status != 0 && res.Response.Status != o.status {
						t.Errorf("%s: status %q, want %q", where, res.Response.Status, o.status)
					}
				}
				if got := l.Effects(); got != o.effects {
					t.Errorf("%s: %d effects, want %d", where, got, o.effects)
				}
				if snap := l.Snapshot(); snap.Effects != l.Effects() || standing(snap.Objects) != snap.Effects {
					t.Errorf("%s: snapshot says %d effects and %d standing objects; the ledger %d", where, snap.Effects, standing(snap.Objects), l.Effects())
				}
			}
		})
	}
}

func TestRecordsAndSnapshot(t *testing.T) {
	l, _ := ledger.New(ledger.Config{Contract: ledger.V1, Retention: 10})
	l.Submit(ledger.Request{Intent: "a", Key: "k1", Digest: "d1"}, reject)
	l.Submit(ledger.Request{Intent: "a", Key: "k2", Digest: "d1"}, commit)
	l.Advance(1)
	l.Submit(ledger.Request{Intent: "b", Key: "k3", Digest: "d3"}, later(4))
	snap := l.Snapshot()
	if len(snap.Records) != 2 {
		t.Fatalf("records %+v: the rejected request must save nothing", snap.Records)
	}
	if r := snap.Records[0]; r.Key != "k2" || r.State != ledger.RecordSaved || r.ExpiresAt != 10 || r.Response.Object != 1 {
		t.Errorf("first record %+v", r)
	}
	if r := snap.Records[1]; r.Key != "k3" || r.State != ledger.RecordExecuting {
		t.Errorf("second record %+v", r)
	}
	if !l.Busy() {
		t.Error("a request still executing: the ledger should be busy")
	}
	// The snapshot is a copy.
	snap.Objects[0].Status = ledger.Failed
	if o, _ := l.Object(1); o.Status != ledger.Succeeded {
		t.Error("changing a snapshot changed the ledger")
	}
	l.Advance(4)
	if l.Busy() || l.Effects() != 2 {
		t.Errorf("after the late commit: busy %v, effects %d", l.Busy(), l.Effects())
	}
	if got := l.Find("b"); len(got) != 1 || got[0].ID != 2 || got[0].Tick != 5 {
		t.Errorf("find b: %+v", got)
	}
	if got := l.Find("nobody"); len(got) != 0 {
		t.Errorf("find nobody: %+v", got)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, cfg := range []ledger.Config{
		{Contract: "v3", Retention: 10},
		{Contract: "", Retention: 10},
		{Contract: ledger.V1, Retention: 0},
	} {
		if _, err := ledger.New(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	_, err := ledger.ParseContract("v3")
	if err == nil || !strings.Contains(err.Error(), "accepted: v1, v2, none") {
		t.Errorf("ParseContract(v3): %v", err)
	}
}

func TestObjectIDText(t *testing.T) {
	for _, id := range []ledger.ObjectID{1, 42, 12345} {
		b, _ := id.MarshalText()
		var back ledger.ObjectID
		if err := back.UnmarshalText(b); err != nil || back != id {
			t.Errorf("%d → %s → %d, %v", id, b, back, err)
		}
	}
	for _, s := range []string{"1", "re_", "re_x", "re_0000", "rf_0001", "re_-1"} {
		var id ledger.ObjectID
		if err := id.UnmarshalText([]byte(s)); err == nil {
			t.Errorf("%q accepted as %d", s, id)
		}
	}
}

// standing counts the objects whose mutation stands: all but those that
// ended failed.
func standing(objs []ledger.Object) int {
	n := 0
	for _, o := range objs {
		if o.Status != ledger.Failed {
			n++
		}
	}
	return n
}

// A pending object canceled before it resolves is no effect, and the
// clock does not resolve it later; only a pending object can be canceled.
// Amend changes what describes an object, not the effects.
func TestCancelAndAmend(t *testing.T) {
	l, err := ledger.New(ledger.Config{Contract: ledger.V1, Retention: 100})
	if err != nil {
		t.Fatal(err)
	}
	l.Submit(ledger.Request{Intent: "a", Key: "ka", Digest: "d", Payload: "p"}, ledger.Execution{Kind: ledger.CommitPending, Delay: 3, Terminal: ledger.Succeeded})
	l.Submit(ledger.Request{Intent: "b", Key: "kb", Digest: "d", Payload: "p"}, ledger.Execution{Kind: ledger.Commit})
	if l.Effects() != 2 || !l.Busy() {
		t.Fatalf("before: %d effects, busy %v", l.Effects(), l.Busy())
	}
	if l.Cancel(2) || l.Cancel(3) || l.Cancel(0) {
		t.Fatal("a succeeded or missing object was canceled")
	}
	if !l.Cancel(1) {
		t.Fatal("the pending object was not canceled")
	}
	if l.Effects() != 1 || l.Busy() {
		t.Fatalf("after the cancel: %d effects, busy %v", l.Effects(), l.Busy())
	}
	if ch := l.Advance(10); len(ch) != 0 {
		t.Fatalf("the clock did %+v to a canceled object", ch)
	}
	if o, _ := l.Object(1); o.Status != ledger.Canceled || o.ResolvesTo != 0 {
		t.Fatalf("the canceled object: %+v", o)
	}
	if !l.Amend(2, "q") || l.Amend(9, "q") {
		t.Fatal("Amend took a missing object or refused a present one")
	}
	if o, _ := l.Object(2); o.Payload != "q" || l.Effects() != 1 {
		t.Fatalf("after Amend: %+v, %d effects", o, l.Effects())
	}
	// A snapshot with a canceled object restores to the same counts.
	r, _ := ledger.New(ledger.Config{Contract: ledger.V1, Retention: 100})
	if err := r.Restore(l.Snapshot()); err != nil || r.Effects() != 1 || r.Busy() {
		t.Fatalf("restored: %v, %d effects", err, r.Effects())
	}
}
