package ledger_test

import (
	"fmt"
	"testing"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/providers"
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
	// amount, when set, is what the refund takes from charge ch_1, whose
	// capture is 100.
	amount int64
}

// The built-in profiles the rules are played under, and one field of
// stripe-v1 changed at a time: each row of TestLedgerRules below is one
// value of one field.
var (
	pV1, pV2, pNone = providers.Builtin("stripe-v1"), providers.Builtin("stripe-v2"), providers.Builtin("none")
	captured        = map[string]int64{"ch_1": 100}
	limitStatus     = pV1.RefundLimit.Status
	final           = &ledger.Refusal{Status: 400, Code: "IDEMPOTENCY_PREVIOUS_ATTEMPT_FAILED"}
	inFlight500     = &ledger.Refusal{Status: 500, Code: "idempotency_key_in_use"}
	mismatch422     = &ledger.Refusal{Status: 422, Code: "idempotency_conflict"}
	missingKey      = &ledger.Refusal{Status: 400, Code: "idempotency_key_required"}
)

// v1With is stripe-v1 with one field changed.
func v1With(change func(p *ledger.Profile)) *ledger.Profile {
	p := *pV1
	change(&p)
	return &p
}

// refund is a send of a refund of amount from charge ch_1.
func refund(key, digest string, amount int64, want ledger.Action, code int, obj ledger.ObjectID, effects int) op {
	o := send(key, digest, commit, want, code, obj, effects)
	o.amount = amount
	return o
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
		profile   *ledger.Profile
		retention int
		ops       []op
	}{
		{"none: a repeated key is a new effect", pNone, 100, []op{
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
			send("k1", "d1", commit, ledger.Committed, ok, 2, 2),
			send("k1", "d1", serverError, ledger.Committed, s500, 3, 3),
		}},
		{"v1: no key means no deduplication", pV1, 100, []op{
			send("", "d1", commit, ledger.Committed, ok, 1, 1),
			send("", "d1", commit, ledger.Committed, ok, 2, 2),
		}},
		{"v1: a repeat gets the saved response, no new effect", pV1, 100, []op{
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
			send("k1", "d1", commit, ledger.Replayed, ok, 1, 1),
			send("k1", "d1", reject, ledger.Replayed, ok, 1, 1),
		}},
		{"v1: fresh keys are separate operations", pV1, 100, []op{
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
			send("k2", "d1", commit, ledger.Committed, ok, 2, 2),
		}},
		{"v1: a rejection saves nothing, so a corrected retry runs", pV1, 100, []op{
			send("k1", "d1", reject, ledger.Rejected, bad, 0, 0),
			send("k1", "d1", reject, ledger.Rejected, bad, 0, 0),
			send("k1", "d2", commit, ledger.Committed, ok, 1, 1),
			send("k1", "d2", commit, ledger.Replayed, ok, 1, 1),
		}},
		{"v1: a saved 500 is replayed as a 500", pV1, 100, []op{
			send("k1", "d1", serverError, ledger.Committed, s500, 1, 1),
			send("k1", "d1", commit, ledger.Replayed, s500, 1, 1),
			send("k1", "d1", commit, ledger.Replayed, s500, 1, 1),
		}},
		{"v1: same key while executing is a conflict, not saved", pV1, 100, []op{
			send("k1", "d1", later(3), ledger.Executing, 0, 0, 0),
			send("k1", "d1", commit, ledger.Conflict, conflict, 0, 0),
			advance(2, 0),
			send("k1", "d1", commit, ledger.Conflict, conflict, 0, 0),
			advance(1, 1, ledger.LateCommit),
			send("k1", "d1", commit, ledger.Replayed, ok, 1, 1),
		}},
		{"v1: a saved key with another payload is rejected", pV1, 100, []op{
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
			send("k1", "d2", commit, ledger.Mismatch, mismatch, 0, 1),
			send("k1", "d1", commit, ledger.Replayed, ok, 1, 1),
		}},
		{"v1: a mismatch while executing is still a mismatch", pV1, 100, []op{
			send("k1", "d1", later(2), ledger.Executing, 0, 0, 0),
			send("k1", "d2", commit, ledger.Mismatch, mismatch, 0, 0),
			advance(2, 1, ledger.LateCommit),
		}},
		{"v1: after retention the key is pruned and executes anew", pV1, 5, []op{
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
			advance(4, 1),
			send("k1", "d1", commit, ledger.Replayed, ok, 1, 1),
			advance(1, 1, ledger.Pruned),
			send("k1", "d1", commit, ledger.Committed, ok, 2, 2),
			send("k1", "d2", commit, ledger.Mismatch, mismatch, 0, 2),
		}},
		{"v1: a pending object resolves failed and stops counting; the replay keeps the saved status", pV1, 100, []op{
			{intent: "refund-1", key: "k1", digest: "d1", ex: pending(2, ledger.Failed), want: ledger.Committed, code: ok, object: 1, status: ledger.Pending, effects: 1},
			advance(2, 0, ledger.Resolved),
			{intent: "refund-1", key: "k1", digest: "d1", ex: commit, want: ledger.Replayed, code: ok, object: 1, status: ledger.Pending, effects: 0},
		}},
		{"v2: a pending object resolves; the replay shows the status now", pV2, 100, []op{
			{intent: "refund-1", key: "k1", digest: "d1", ex: pending(2, ledger.Succeeded), want: ledger.Committed, code: ok, object: 1, status: ledger.Pending, effects: 1},
			{intent: "refund-1", key: "k1", digest: "d1", ex: commit, want: ledger.Replayed, code: ok, object: 1, status: ledger.Pending, effects: 1},
			advance(2, 1, ledger.Resolved),
			{intent: "refund-1", key: "k1", digest: "d1", ex: commit, want: ledger.Replayed, code: ok, object: 1, status: ledger.Succeeded, effects: 1},
		}},
		{"v2: a repeat completes a saved 500 without a second effect", pV2, 100, []op{
			send("k1", "d1", serverError, ledger.Committed, s500, 1, 1),
			{intent: "refund-1", key: "k1", digest: "d1", ex: commit, want: ledger.Completed, code: ok, object: 1, status: ledger.Succeeded, effects: 1},
			send("k1", "d1", commit, ledger.Replayed, ok, 1, 1),
		}},
		{"v2: conflicts and mismatches as in v1", pV2, 100, []op{
			send("k1", "d1", later(1), ledger.Executing, 0, 0, 0),
			send("k1", "d1", commit, ledger.Conflict, conflict, 0, 0),
			advance(1, 1, ledger.LateCommit),
			send("k1", "d2", commit, ledger.Mismatch, mismatch, 0, 1),
		}},
		{"none: a late commit saves no record", pNone, 100, []op{
			send("k1", "d1", later(1), ledger.Executing, 0, 0, 0),
			send("k1", "d1", later(1), ledger.Executing, 0, 0, 0),
			advance(1, 2, ledger.LateCommit, ledger.LateCommit),
			send("k1", "d1", commit, ledger.Committed, ok, 3, 3),
		}},

		// saves: which first answers are kept.
		{"saves no_5xx: a 500 frees the key, so the same key executes again", v1With(func(p *ledger.Profile) { p.Saves = ledger.SavesNo5xx }), 100, []op{
			send("k1", "d1", serverError, ledger.Committed, s500, 1, 1),
			send("k1", "d1", commit, ledger.Committed, ok, 2, 2),
			send("k1", "d1", commit, ledger.Replayed, ok, 2, 2),
		}},
		{"saves no_5xx: a 4xx answer of the executing endpoint is kept", v1With(func(p *ledger.Profile) { p.Saves = ledger.SavesNo5xx }), 100, []op{
			refund("k0", "d0", 100, ledger.Committed, ok, 1, 1),
			refund("k1", "d1", 10, ledger.OverLimit, limitStatus, 0, 1),
			refund("k1", "d1", 10, ledger.Replayed, limitStatus, 0, 1),
		}},
		{"saves success: a 4xx answer is not kept; the next request runs anew", v1With(func(p *ledger.Profile) { p.Saves = ledger.SavesSuccess }), 100, []op{
			refund("k0", "d0", 100, ledger.Committed, ok, 1, 1),
			refund("k1", "d1", 10, ledger.OverLimit, limitStatus, 0, 1),
			refund("k1", "d1", 10, ledger.OverLimit, limitStatus, 0, 1),
		}},
		{"saves success: a lost 2xx is kept all the same", v1With(func(p *ledger.Profile) { p.Saves = ledger.SavesSuccess }), 100, []op{
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
			send("k1", "d1", commit, ledger.Replayed, ok, 1, 1),
			send("k1", "d1", serverError, ledger.Replayed, ok, 1, 1),
		}},
		{"saves all: a 4xx answer of the executing endpoint is replayed", pV1, 100, []op{
			refund("k0", "d0", 100, ledger.Committed, ok, 1, 1),
			refund("k1", "d1", 10, ledger.OverLimit, limitStatus, 0, 1),
			refund("k1", "d1", 10, ledger.Replayed, limitStatus, 0, 1),
		}},
		// replay: what a repeat returns.
		{"replay current: a saved 500 comes back as the object now", v1With(func(p *ledger.Profile) { p.Replay = ledger.ReplayCurrent }), 100, []op{
			send("k1", "d1", serverError, ledger.Committed, s500, 1, 1),
			{intent: "refund-1", key: "k1", digest: "d1", ex: commit, want: ledger.Replayed, code: ok, object: 1, status: ledger.Succeeded, effects: 1},
		}},
		{"replay current: a pending refund asked again later shows its end", v1With(func(p *ledger.Profile) { p.Replay = ledger.ReplayCurrent }), 100, []op{
			{intent: "refund-1", key: "k1", digest: "d1", ex: pending(2, ledger.Failed), want: ledger.Committed, code: ok, object: 1, status: ledger.Pending, effects: 1},
			advance(2, 0, ledger.Resolved),
			{intent: "refund-1", key: "k1", digest: "d1", ex: commit, want: ledger.Replayed, code: ok, object: 1, status: ledger.Failed, effects: 0},
		}},
		// failed_key: reusable is v1's rejection row above; final here.
		{"failed_key final: a rejection makes the key refuse every later request", v1With(func(p *ledger.Profile) { p.FailedKey = final }), 100, []op{
			send("k1", "d1", reject, ledger.Rejected, bad, 0, 0),
			send("k1", "d1", commit, ledger.KeyFailed, final.Status, 0, 0),
			send("k1", "d2", commit, ledger.KeyFailed, final.Status, 0, 0),
			send("k2", "d1", commit, ledger.Committed, ok, 1, 1),
		}},
		{"failed_key final: a refund refused by the limit makes its key final", v1With(func(p *ledger.Profile) { p.FailedKey = final }), 100, []op{
			refund("k0", "d0", 100, ledger.Committed, ok, 1, 1),
			refund("k1", "d1", 10, ledger.OverLimit, limitStatus, 0, 1),
			refund("k1", "d1", 10, ledger.KeyFailed, final.Status, 0, 1),
		}},
		{"failed_key final: the final key expires with retention", v1With(func(p *ledger.Profile) { p.FailedKey = final }), 3, []op{
			send("k1", "d1", reject, ledger.Rejected, bad, 0, 0),
			advance(3, 0, ledger.Pruned),
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
		}},
		// mismatch: a refusal (v1's rows above, and another status), or ignored.
		{"mismatch 422: other parameters get the profile's refusal", v1With(func(p *ledger.Profile) { p.Mismatch = mismatch422 }), 100, []op{
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
			send("k1", "d2", commit, ledger.Mismatch, 422, 0, 1),
		}},
		{"mismatch ignored: the old answer comes back for other parameters", v1With(func(p *ledger.Profile) { p.Mismatch = nil }), 100, []op{
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
			send("k1", "d2", commit, ledger.Replayed, ok, 1, 1),
		}},
		// in_flight: a refusal (409 above; a 500 here), or executes.
		{"in_flight 500: a repeat in flight gets a 500", v1With(func(p *ledger.Profile) { p.InFlight = inFlight500 }), 100, []op{
			send("k1", "d1", later(2), ledger.Executing, 0, 0, 0),
			send("k1", "d1", commit, ledger.Conflict, 500, 0, 0),
		}},
		{"in_flight executes: a repeat in flight runs too", v1With(func(p *ledger.Profile) { p.InFlight = nil }), 100, []op{
			send("k1", "d1", later(2), ledger.Executing, 0, 0, 0),
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
			advance(2, 2, ledger.LateCommit),
			send("k1", "d1", commit, ledger.Replayed, ok, 2, 2),
		}},
		// key: required.
		{"key required: a create without a key is refused", v1With(func(p *ledger.Profile) { p.Key.Required, p.Key.Missing = true, missingKey }), 100, []op{
			send("", "d1", commit, ledger.KeyRequired, 400, 0, 0),
			send("k1", "d1", commit, ledger.Committed, ok, 1, 1),
		}},
		// refund_limit: refunds past the capture are refused before they run.
		{"refund_limit: refunds stop at the captured amount", pV1, 100, []op{
			refund("k1", "d1", 60, ledger.Committed, ok, 1, 1),
			refund("k2", "d2", 40, ledger.Committed, ok, 2, 2),
			refund("k3", "d3", 1, ledger.OverLimit, limitStatus, 0, 2),
		}},
		{"refund_limit: a refund still executing counts against the capture", pV1, 100, []op{
			{intent: "refund-1", key: "k1", digest: "d1", ex: later(3), want: ledger.Executing, amount: 100},
			refund("k2", "d2", 100, ledger.OverLimit, limitStatus, 0, 0),
			advance(3, 1, ledger.LateCommit),
		}},
		{"refund_limit: a refund that ended failed gives its amount back", pV1, 100, []op{
			{intent: "refund-1", key: "k1", digest: "d1", ex: pending(1, ledger.Failed), want: ledger.Committed, code: ok, object: 1, effects: 1, amount: 100},
			advance(1, 0, ledger.Resolved),
			refund("k2", "d2", 100, ledger.Committed, ok, 2, 1),
		}},
		{"none: no key contract, yet the refund limit holds", pNone, 100, []op{
			refund("k1", "d1", 100, ledger.Committed, ok, 1, 1),
			refund("k1", "d1", 100, ledger.OverLimit, limitStatus, 0, 1),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ledger.New(ledger.Config{Profile: tt.profile, Retention: tt.retention, Captured: captured})
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
					ex := o.ex
					if o.amount > 0 {
						ex.Refund = &ledger.Refund{Charge: "ch_1", Amount: o.amount}
					}
					res := l.Submit(ledger.Request{Intent: o.intent, Key: o.key, Digest: o.digest, Payload: "amount=1"}, ex)
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
	l, _ := ledger.New(ledger.Config{Profile: pV1, Retention: 10})
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
		{Retention: 10},
		{Profile: &ledger.Profile{ID: "half"}, Retention: 10},
		{Profile: pV1, Retention: 0},
		{Profile: pV1, Retention: 10, Captured: map[string]int64{"ch_1": -1}},
	} {
		if _, err := ledger.New(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
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
	l, err := ledger.New(ledger.Config{Profile: pV1, Retention: 100})
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
	r, _ := ledger.New(ledger.Config{Profile: pV1, Retention: 100})
	if err := r.Restore(l.Snapshot()); err != nil || r.Effects() != 1 || r.Busy() {
		t.Fatalf("restored: %v, %d effects", err, r.Effects())
	}
}
