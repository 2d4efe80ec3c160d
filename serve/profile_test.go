package serve

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
)

// createWith posts a refund with the key in the header named.
func (g *rig) createWith(header, key string) answer {
	g.t.Helper()
	req, err := http.NewRequest("POST", g.http.URL+"/v1/refunds", strings.NewReader(url.Values{"charge": {"ch_1"}, "amount": {"4500"}, "metadata[intent]": {"refund-1"}}.Encode()))
	if err != nil {
		g.t.Fatal(err)
	}
	req.SetBasicAuth("sk_test_rig", "")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if key != "" {
		req.Header.Set(header, key)
	}
	resp, err := g.quick.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

// Under a profile, serve reads the key from the header the profile names
// and answers with the profile's rules: Checkout.com keeps no 500, so the
// same key after a saved-and-lost 500 runs again.
func TestServeReadsTheProfilesKeyAndKeepsWhatItKeeps(t *testing.T) {
	p := providers.Builtin("checkout")
	g := newRig(t, Options{Profile: p, Wire: WireStripe, Faults: []missions.Fixture{missions.ServerErrorAfterCommit}})
	if a := g.createWith("Cko-Idempotency-Key", "k-1"); a.status != 500 {
		t.Fatalf("first: %d %s", a.status, a.body)
	}
	if a := g.createWith("Cko-Idempotency-Key", "k-1"); a.status != 200 {
		t.Fatalf("second: %d %s", a.status, a.body)
	}
	s := g.srv.Session()
	if s.Settings.Contract != "checkout" || s.Settings.Profile == nil || s.Settings.Profile.ID != "checkout" {
		t.Fatalf("the session names %s and carries %v", s.Settings.Contract, s.Settings.Profile)
	}
	keyed := 0
	for _, r := range s.Requests {
		if r.Key == "k-1" {
			keyed++
		}
	}
	if keyed != 2 || s.Outcome.Effects != 2 {
		t.Fatalf("%d requests under k-1 and %d effects; want 2 and 2 (the 500 freed the key)", keyed, s.Outcome.Effects)
	}
}

// A documented refusal with a status Stripe never uses is answered with
// the profile's status and code, not a panic.
func TestServeAnswersAProfilesRefusal(t *testing.T) {
	p := *providers.Builtin("stripe-v1")
	p.ID = "strict"
	p.Key.Required = true
	p.Key.Missing = &ledger.Refusal{Status: 422, Code: "key_required", Message: "Send an Idempotency-Key."}
	g := newRig(t, Options{Profile: &p})
	a := g.createWith("Idempotency-Key", "")
	if a.status != 422 {
		t.Fatalf("a create without a key: %d %s", a.status, a.body)
	}
	if e := a.apiError(t); e.Code != "key_required" || e.Message != "Send an Idempotency-Key." {
		t.Fatalf("the refusal: %+v", e)
	}
}
