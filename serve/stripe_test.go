package serve

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	stripe "github.com/stripe/stripe-go/v82"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// stripeClient is stripe-go, unchanged, pointed at the rig: its HTTP
// client gives up after timeout, and it retries on its own up to retries
// times. Its sleep between retries is turned off to keep the test short;
// that changes when it retries, not whether.
func (g *rig) stripeClient(timeout time.Duration, retries int64) *stripe.Client {
	b := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL:               stripe.String(g.http.URL),
		HTTPClient:        &http.Client{Timeout: timeout},
		MaxNetworkRetries: stripe.Int64(retries),
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
	})
	if impl, ok := b.(*stripe.BackendImplementation); ok {
		impl.SetNetworkRetriesSleep(false)
	}
	backends := &stripe.Backends{API: b, Connect: b, Uploads: b, MeterEvents: b}
	return stripe.NewClient("sk_test_stripego", stripe.WithBackends(backends))
}

func refundParams1042() *stripe.RefundCreateParams {
	p := &stripe.RefundCreateParams{Charge: stripe.String("ch_1042"), Amount: stripe.Int64(4500)}
	p.AddMetadata("intent", "refund-1042")
	return p
}

func creates(s *export.Session) []export.SessionRequest {
	var out []export.SessionRequest
	for _, r := range s.Requests {
		if r.Kind == export.RequestCreate {
			out = append(out, r)
		}
	}
	return out
}

// After timeout_after_commit, stripe-go's own network retry sends the
// Idempotency-Key it generated again, and the provider replays the saved
// refund: one refund.
func TestStripeGoNetworkRetryReusesItsKey(t *testing.T) {
	g := newRig(t, Options{Faults: []missions.Fixture{missions.TimeoutAfterCommit}})
	sc := g.stripeClient(200*time.Millisecond, 2)
	r, err := sc.V1Refunds.Create(context.Background(), refundParams1042())
	if err != nil {
		t.Fatalf("stripe-go did not recover from the lost reply: %v", err)
	}
	s := g.srv.Finish()
	cs := creates(s)
	if len(cs) != 2 || cs[0].Key == "" || cs[0].Key != cs[1].Key {
		t.Fatalf("stripe-go sent %d creates with keys %v, want 2 with one generated key", len(cs), keysOf(cs))
	}
	if s.Ledger.Effects != 1 || r.ID != s.Ledger.Objects[0].ID.String() || r.LastResponse.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("%d effects; stripe-go got %s (replayed %q)", s.Ledger.Effects, r.ID, r.LastResponse.Header.Get("Idempotent-Replayed"))
	}
	if v := verdictOf(t, s, "refund-1042"); v.Verdict != missions.ExactlyOnce {
		t.Errorf("verdict %s", v.Verdict)
	}
	t.Logf("found: stripe-go retried the timed-out create once with its own key %s; the ledger holds 1 refund", cs[0].Key)
}

func keysOf(rs []export.SessionRequest) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Key)
	}
	return out
}

// Calling Create again after the error is a new request to stripe-go: it
// mints a new key, and the provider makes a second refund.
func TestStripeGoApplicationRetryMintsANewKey(t *testing.T) {
	g := newRig(t, Options{Faults: []missions.Fixture{missions.TimeoutAfterCommit}})
	sc := g.stripeClient(200*time.Millisecond, 0)
	if _, err := sc.V1Refunds.Create(context.Background(), refundParams1042()); err == nil {
		t.Fatal("the lost reply did not reach stripe-go as an error")
	}
	if _, err := sc.V1Refunds.Create(context.Background(), refundParams1042()); err != nil {
		t.Fatalf("the application's retry failed: %v", err)
	}
	s := g.srv.Finish()
	cs := creates(s)
	if len(cs) != 2 || cs[0].Key == cs[1].Key {
		t.Fatalf("keys %v, want two different keys", keysOf(cs))
	}
	if s.Ledger.Effects != 2 || verdictOf(t, s, "refund-1042").Verdict != missions.Duplicate {
		t.Fatalf("%d effects, verdict %s; want 2, duplicate", s.Ledger.Effects, verdictOf(t, s, "refund-1042").Verdict)
	}
	t.Logf("found: a second Create after the timeout sent key %s after %s: 2 refunds, duplicate", cs[1].Key, cs[0].Key)
}

// A context deadline ends stripe-go's request and its retries with it.
func TestStripeGoContextDeadlineTurnsRetriesOff(t *testing.T) {
	g := newRig(t, Options{Faults: []missions.Fixture{missions.TimeoutAfterCommit}})
	sc := g.stripeClient(5*time.Second, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	p := refundParams1042()
	p.Context = ctx
	_, err := sc.V1Refunds.Create(ctx, p)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the context's deadline", err)
	}
	s := g.srv.Finish()
	if n := len(creates(s)); n != 1 {
		t.Fatalf("stripe-go sent %d creates under a context deadline, want 1 (no retry)", n)
	}
	if v := verdictOf(t, s, "refund-1042"); v.Verdict != missions.HiddenEffect {
		t.Errorf("verdict %s, want hidden_effect: the refund committed and the client never heard", v.Verdict)
	}
	t.Log("found: with a context deadline stripe-go sent once and did not retry; the committed refund stayed hidden")
}

// stripe-go's shouldRetry would retry a bare 409 or 500, but a reply with
// a well-formed Stripe error body becomes a *stripe.Error, whose
// canRetry is false (only a 429 lock_timeout is retried). So neither the
// in-flight conflict nor the saved 500 is retried.
func TestStripeGoDoesNotRetryConflictOrSaved500(t *testing.T) {
	t.Run("409 in flight", func(t *testing.T) {
		g := newRig(t, Options{Faults: []missions.Fixture{missions.LateCommit}, Delay: 1000})
		p := refundParams1042()
		p.SetIdempotencyKey("intent-refund-1042")
		if _, err := g.stripeClient(200*time.Millisecond, 0).V1Refunds.Create(context.Background(), p); err == nil {
			t.Fatal("late_commit answered")
		}
		p = refundParams1042()
		p.SetIdempotencyKey("intent-refund-1042")
		_, err := g.stripeClient(2*time.Second, 2).V1Refunds.Create(context.Background(), p)
		var se *stripe.Error
		if !errors.As(err, &se) || se.HTTPStatusCode != http.StatusConflict || se.Type != stripe.ErrorTypeIdempotency || se.Code != "idempotency_key_in_use" {
			t.Fatalf("err %v, want a 409 idempotency_error", err)
		}
		s := g.srv.Finish()
		if n := len(creates(s)); n != 2 {
			t.Fatalf("%d creates: stripe-go retried the 409 %d times", n, n-2)
		}
		if s.Ledger.Effects != 1 {
			t.Errorf("%d effects, want the late commit's 1", s.Ledger.Effects)
		}
		t.Log("found: stripe-go returned the 409 idempotency_key_in_use at once, without a retry (MaxNetworkRetries 2)")
	})
	t.Run("saved 500", func(t *testing.T) {
		g := newRig(t, Options{Faults: []missions.Fixture{missions.ServerErrorAfterCommit}})
		_, err := g.stripeClient(2*time.Second, 2).V1Refunds.Create(context.Background(), refundParams1042())
		var se *stripe.Error
		if !errors.As(err, &se) || se.HTTPStatusCode != http.StatusInternalServerError || se.Type != stripe.ErrorTypeAPI {
			t.Fatalf("err %v, want a 500 api_error", err)
		}
		s := g.srv.Finish()
		if n := len(creates(s)); n != 1 {
			t.Fatalf("%d creates: stripe-go retried the saved 500", n)
		}
		if s.Ledger.Effects != 1 || s.Ledger.Records[0].Response.Code != ledger.CodeServerError {
			t.Fatalf("ledger %+v", s.Ledger)
		}
		if v := verdictOf(t, s, "refund-1042"); v.Verdict != missions.HiddenEffect {
			t.Errorf("verdict %s, want hidden_effect: the 500 hid a committed refund", v.Verdict)
		}
		t.Log("found: stripe-go returned the saved 500 at once, without a retry; the refund it hides committed")
	})
}

// A read-back through stripe-go's list call tells the client of the
// refund the lost reply hid, so the provider judges it exactly once.
func TestStripeGoReadBack(t *testing.T) {
	g := newRig(t, Options{Faults: []missions.Fixture{missions.TimeoutAfterCommit}})
	sc := g.stripeClient(200*time.Millisecond, 0)
	if _, err := sc.V1Refunds.Create(context.Background(), refundParams1042()); err == nil {
		t.Fatal("the lost reply reached stripe-go")
	}
	var found []*stripe.Refund
	for r, err := range sc.V1Refunds.List(context.Background(), &stripe.RefundListParams{Charge: stripe.String("ch_1042")}) {
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, r)
	}
	if len(found) != 1 || found[0].Status != stripe.RefundStatusSucceeded || found[0].Metadata["intent"] != "refund-1042" {
		t.Fatalf("the read-back found %+v", found)
	}
	got, err := sc.V1Refunds.Retrieve(context.Background(), found[0].ID, nil)
	if err != nil || got.Amount != 4500 {
		t.Fatalf("retrieve: %+v %v", got, err)
	}
	s := g.srv.Finish()
	if v := verdictOf(t, s, "refund-1042"); v.Verdict != missions.ExactlyOnce {
		t.Errorf("verdict %s, want exactly_once once the read told the client", v.Verdict)
	}
}

// stripe-go's update, cancel and created filter reach the same routes
// stripe-node's do: a pending refund is canceled (no effect stands), a
// refund's metadata updated, the list filtered by created; an expand is
// refused with Stripe's words, and every error carries its Request-Id.
func TestStripeGoUpdateCancelAndCreated(t *testing.T) {
	g := newRig(t, Options{Faults: []missions.Fixture{missions.PendingFixture, missions.Success}, Delay: 1000})
	sc := g.stripeClient(2*time.Second, 0)
	ctx := context.Background()
	pending, err := sc.V1Refunds.Create(ctx, refundParams1042())
	if err != nil || pending.Status != stripe.RefundStatusPending || pending.PendingReason != stripe.RefundPendingReasonProcessing {
		t.Fatalf("the pending create: %+v %v", pending, err)
	}
	canceled, err := sc.V1Refunds.Cancel(ctx, pending.ID, nil)
	if err != nil || canceled.Status != stripe.RefundStatusCanceled {
		t.Fatalf("cancel: %+v %v", canceled, err)
	}
	other := &stripe.RefundCreateParams{Charge: stripe.String("ch_2"), Amount: stripe.Int64(100)}
	other.AddMetadata("intent", "refund-2")
	r2, err := sc.V1Refunds.Create(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	up := &stripe.RefundUpdateParams{}
	up.AddMetadata("ticket", "T-9")
	if u, err := sc.V1Refunds.Update(ctx, r2.ID, up); err != nil || u.Metadata["ticket"] != "T-9" || u.Metadata["intent"] != "refund-2" {
		t.Fatalf("update: %+v %v", u, err)
	}
	var listed []string
	for r, err := range sc.V1Refunds.List(ctx, &stripe.RefundListParams{CreatedRange: &stripe.RangeQueryParams{GreaterThanOrEqual: pending.Created}}) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, r.ID)
	}
	if len(listed) != 2 {
		t.Fatalf("created[gte] listed %v", listed)
	}
	rp := &stripe.RefundRetrieveParams{}
	rp.AddExpand("charge")
	_, err = sc.V1Refunds.Retrieve(ctx, r2.ID, rp)
	var se *stripe.Error
	if !errors.As(err, &se) || se.HTTPStatusCode != 400 || se.RequestID == "" {
		t.Fatalf("expand: %v, want a 400 with its Request-Id", err)
	}
	s := g.srv.Finish()
	if s.Ledger.Effects != 1 || verdictOf(t, s, "refund-1042").Verdict != missions.FailedCleanly {
		t.Fatalf("%d effects, refund-1042 %s", s.Ledger.Effects, verdictOf(t, s, "refund-1042").Verdict)
	}
}
