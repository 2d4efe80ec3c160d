package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
)

// send is one request with any headers, its body form-encoded.
func (g *rig) send(method, path, body string, header ...string) answer {
	g.t.Helper()
	req, err := http.NewRequest(method, g.http.URL+path, strings.NewReader(body))
	if err != nil {
		g.t.Fatal(err)
	}
	req.SetBasicAuth("sk_test_rig", "")
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := g.quick.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

var requestIDPattern = regexp.MustCompile(`^req_[0-9]+(_[0-9]+)?$`)

// Every reply carries a Request-Id of its own and the Stripe-Version it
// answers in: creates, replays, fetches, lists, updates, cancels and every
// error, 400, 401, 404 and 405 included.
func TestEveryReplyCarriesRequestIDAndVersion(t *testing.T) {
	g := newRig(t, Options{Faults: []missions.Fixture{missions.Success, missions.PendingFixture}, Delay: 50})
	first := g.create("k1")
	replies := map[string]answer{
		"create":        first,
		"replay":        g.create("k1"),
		"retrieve":      g.send("GET", "/v1/refunds/re_0001", ""),
		"list":          g.send("GET", "/v1/refunds?limit=3", ""),
		"update":        g.send("POST", "/v1/refunds/re_0001", "metadata[note]=x"),
		"cancel 400":    g.send("POST", "/v1/refunds/re_0001/cancel", ""),
		"400":           g.send("POST", "/v1/refunds", "amount=1"),
		"404":           g.send("GET", "/v1/refunds/re_9999", ""),
		"405":           g.send("DELETE", "/v1/refunds", ""),
		"unknown route": g.send("GET", "/v1/charges", ""),
	}
	noAuth, _ := http.NewRequest("GET", g.http.URL+"/v1/refunds", nil)
	resp, err := g.quick.Do(noAuth)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	replies["401"] = answer{status: resp.StatusCode, header: resp.Header}
	seen := map[string]string{}
	for what, a := range replies {
		if a.err != nil {
			t.Fatalf("%s: %v", what, a.err)
		}
		id := a.header.Get("Request-Id")
		if !requestIDPattern.MatchString(id) {
			t.Errorf("%s (%d): Request-Id %q, want req_N", what, a.status, id)
		}
		if other, dup := seen[id]; dup {
			t.Errorf("%s and %s share Request-Id %s", what, other, id)
		}
		seen[id] = what
		if v := a.header.Get("Stripe-Version"); v != StripeVersion {
			t.Errorf("%s (%d): Stripe-Version %q, want %q", what, a.status, v, StripeVersion)
		}
	}
	if replies["401"].status != 401 || replies["405"].status != 405 || replies["404"].status != 404 {
		t.Fatalf("statuses: 401→%d 405→%d 404→%d", replies["401"].status, replies["405"].status, replies["404"].status)
	}
	// A client that names its version gets it back: stripe-go pins
	// another than stripe-node.
	if v := g.send("GET", "/v1/refunds/re_0001", "", "Stripe-Version", "2025-08-27.basil").header.Get("Stripe-Version"); v != "2025-08-27.basil" {
		t.Errorf("a request for 2025-08-27.basil was answered in %q", v)
	}
}

// A keyed create names the request whose reply it carries: its own the
// first time, the first request's on a replay, with Idempotent-Replayed.
func TestOriginalRequestNamesTheFirstRequest(t *testing.T) {
	g := newRig(t, Options{})
	first := g.create("k1")
	second := g.create("k1")
	id := first.header.Get("Request-Id")
	if first.header.Get("Original-Request") != id || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the first reply: Request-Id %s, Original-Request %q, Idempotent-Replayed %q", id, first.header.Get("Original-Request"), first.header.Get("Idempotent-Replayed"))
	}
	if second.header.Get("Original-Request") != id || second.header.Get("Request-Id") == id || second.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the replay: Request-Id %s, Original-Request %q (want %s), Idempotent-Replayed %q",
			second.header.Get("Request-Id"), second.header.Get("Original-Request"), id, second.header.Get("Idempotent-Replayed"))
	}
	if k := g.do(g.quick, http.MethodPost, "/v1/refunds", "", refund1042()); k.header.Get("Original-Request") != "" {
		t.Errorf("a create without a key names an original request: %q", k.header.Get("Original-Request"))
	}
}

// Stripe-Should-Retry says by default what Stripe says for each reply,
// and --should-retry forces it: stripe-node's retry of a 409 or a 5xx
// rests on it.
func TestShouldRetry(t *testing.T) {
	// The refused create with other parameters meets a fault of its own.
	auto := newRig(t, Options{Faults: []missions.Fixture{missions.ServerErrorAfterCommit, missions.Success, missions.LateCommit}, Delay: 100})
	got := map[string]string{}
	at := func(what string, a answer) {
		if a.err != nil {
			t.Fatalf("%s: %v", what, a.err)
		}
		v, ok := a.header["Stripe-Should-Retry"]
		got[what] = strings.Join(v, ",")
		if !ok {
			got[what] = "(none)"
		}
	}
	at("500 saved", auto.create("k500"))
	other := refund1042()
	other.Set("amount", "1")
	at("400 key with other parameters", auto.do(auto.quick, http.MethodPost, "/v1/refunds", "k500", other))
	auto.create("klate") // held: executing under klate
	at("409 key in use", auto.create("klate"))
	at("200 create", auto.do(auto.quick, http.MethodPost, "/v1/refunds", "k200", url.Values{"charge": {"ch_2"}, "amount": {"100"}, "metadata[intent]": {"i2"}}))
	at("200 fetch", auto.send("GET", "/v1/refunds/re_0001", ""))
	at("400 malformed", auto.send("POST", "/v1/refunds", "amount=1"))
	at("404", auto.send("GET", "/v1/refunds/re_9999", ""))
	want := map[string]string{
		"500 saved": "false", "400 key with other parameters": "false", "409 key in use": "true",
		"200 create": "false", "200 fetch": "(none)", "400 malformed": "(none)", "404": "(none)",
	}
	for what, w := range want {
		if got[what] != w {
			t.Errorf("auto, %s: Stripe-Should-Retry %s, want %s", what, got[what], w)
		}
	}
	for _, mode := range []string{"true", "false", ShouldRetryOmit} {
		g := newRig(t, Options{ShouldRetry: mode, Faults: []missions.Fixture{missions.ServerErrorAfterCommit}})
		for _, a := range []answer{g.create("k"), g.send("GET", "/v1/refunds/re_9999", ""), g.send("GET", "/v1/refunds", "")} {
			v, ok := a.header["Stripe-Should-Retry"]
			switch {
			case mode == ShouldRetryOmit && ok:
				t.Errorf("omit: a %d carries Stripe-Should-Retry %v", a.status, v)
			case mode != ShouldRetryOmit && strings.Join(v, ",") != mode:
				t.Errorf("%s: a %d carries Stripe-Should-Retry %v", mode, a.status, v)
			}
		}
	}
	if _, err := New(Options{ShouldRetry: "maybe"}); err == nil || !strings.Contains(err.Error(), "auto") {
		t.Errorf("should-retry maybe: %v", err)
	}
}

// A lost reply is held until the client gives up, however long it waits
// under the cap: the client reads a timeout, never a reset. The cap is
// documented, and far longer than the 80 s stripe-node and stripe-go wait.
func TestLostReplyHeldUntilTheClientLeaves(t *testing.T) {
	if DefaultHold < 5*80*time.Second {
		t.Fatalf("DefaultHold %v: a client waiting its default 80 s would meet a closed connection", DefaultHold)
	}
	g := newRig(t, Options{Hold: DefaultHold, Faults: []missions.Fixture{missions.TimeoutAfterCommit}})
	g.quick.Timeout = 600 * time.Millisecond
	a := g.create("k1")
	if !a.timedOut() {
		t.Fatalf("the client got %d %q (%v), want its own timeout", a.status, a.body, a.err)
	}
	s := g.srv.Finish()
	if r := s.Requests[0]; r.Wire != export.WireHeld || s.Ledger.Effects != 1 {
		t.Fatalf("the held create: wire %s, %d effects", r.Wire, s.Ledger.Effects)
	}
	// The cap ends a hold no client ends: the connection closes then.
	capped := newRig(t, Options{Hold: 50 * time.Millisecond, Faults: []missions.Fixture{missions.TimeoutAfterCommit}})
	capped.quick.Timeout = 5 * time.Second
	if b := capped.create("k1"); b.err == nil || b.timedOut() {
		t.Fatalf("past the cap the client got %d %q (%v), want the connection closed", b.status, b.body, b.err)
	}
}

// Stripe compares every parameter of a repeated request, metadata
// included: a key reused with other metadata is refused, nothing runs.
// A blank Idempotency-Key is refused, not taken as no key.
func TestIdempotencyComparesMetadata(t *testing.T) {
	g := newRig(t, Options{})
	a := url.Values{"charge": {"ch_1"}, "amount": {"1500"}, "metadata[intent]": {"refund-a"}}
	b := url.Values{"charge": {"ch_1"}, "amount": {"1500"}, "metadata[intent]": {"refund-b"}}
	note := url.Values{"charge": {"ch_1"}, "amount": {"1500"}, "metadata[intent]": {"refund-a"}, "metadata[note]": {"retry"}}
	g.do(g.quick, http.MethodPost, "/v1/refunds", "shared", a)
	for what, form := range map[string]url.Values{"another intent": b, "another note": note} {
		r := g.do(g.quick, http.MethodPost, "/v1/refunds", "shared", form)
		if e := r.apiError(t); r.status != 400 || e.Type != ledger.ErrorIdempotency {
			t.Errorf("%s under the same key: %d %+v, want 400 idempotency_error", what, r.status, e)
		}
	}
	if r := g.do(g.quick, http.MethodPost, "/v1/refunds", "shared", a); r.status != 200 || r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the same parameters again: %d, replayed %q", r.status, r.header.Get("Idempotent-Replayed"))
	}
	for _, blank := range []string{"", "   "} {
		r := g.send("POST", "/v1/refunds", "charge=ch_1&amount=1&metadata%5Bintent%5D=refund-c", "Idempotency-Key", blank)
		if e := r.apiError(t); r.status != 400 || e.Param != "Idempotency-Key" || !strings.Contains(e.Message, "empty") {
			t.Errorf("Idempotency-Key %q: %d %+v", blank, r.status, e)
		}
	}
	s := g.srv.Finish()
	if s.Ledger.Effects != 1 || len(s.Outcome.Verdicts) != 2 {
		t.Fatalf("%d effects, verdicts %+v", s.Ledger.Effects, s.Outcome.Verdicts)
	}
}

// A refund carries every field stripe-node's Refund type declares, null
// where unset.
func TestRefundHasEveryField(t *testing.T) {
	g := newRig(t, Options{})
	var r map[string]json.RawMessage
	if err := json.Unmarshal(g.create("k1").body, &r); err != nil {
		t.Fatal(err)
	}
	fields := []string{"id", "object", "amount", "balance_transaction", "charge", "created", "currency", "customer",
		"customer_account", "description", "destination_details", "failure_balance_transaction", "failure_reason",
		"instructions_email", "metadata", "next_action", "payment_intent", "payment_method", "pending_reason",
		"presentment_details", "reason", "receipt_number", "source_transfer_reversal", "status", "transfer_reversal"}
	for _, f := range fields {
		if _, ok := r[f]; !ok {
			t.Errorf("the refund has no %s", f)
		}
	}
	for _, f := range []string{"customer", "description", "destination_details", "failure_reason", "next_action", "payment_method", "receipt_number", "transfer_reversal"} {
		if string(r[f]) != "null" {
			t.Errorf("%s is %s, want null", f, r[f])
		}
	}
	if len(r) != len(fields) {
		t.Errorf("the refund has %d fields, want %d", len(r), len(fields))
	}
}

// POST /v1/refunds/{id} sets and clears metadata; the change is kept, in
// a replay of the session too.
func TestUpdateMetadata(t *testing.T) {
	g := newRig(t, Options{})
	g.create("k1")
	if a := g.send("POST", "/v1/refunds/re_0001", "metadata[ticket]=T-9&metadata[intent]=refund-1042"); a.status != 200 || a.refund(t).Metadata["ticket"] != "T-9" {
		t.Fatalf("update: %d %q", a.status, a.body)
	}
	if a := g.send("GET", "/v1/refunds/re_0001", ""); a.refund(t).Metadata["ticket"] != "T-9" {
		t.Fatalf("the update did not stay: %q", a.body)
	}
	if a := g.send("POST", "/v1/refunds/re_0001", "metadata[ticket]="); a.status != 200 || len(a.refund(t).Metadata) != 1 {
		t.Fatalf("clearing one field: %d %q", a.status, a.body)
	}
	for what, body := range map[string]string{
		"an amount":     "amount=5",
		"expand":        "expand[]=charge",
		"51 fields":     manyMetadata(51),
		"a 41-char key": "metadata[" + strings.Repeat("k", 41) + "]=v",
	} {
		if a := g.send("POST", "/v1/refunds/re_0001", body); a.status != 400 {
			t.Errorf("update with %s: %d %q", what, a.status, a.body)
		}
	}
	if a := g.send("POST", "/v1/refunds/re_0404", "metadata[a]=b"); a.status != 404 {
		t.Errorf("update of an unknown refund: %d", a.status)
	}
	// The intent field links the refund to its intent: it is kept.
	for _, body := range []string{"metadata=", "metadata[intent]=other", "metadata[intent]="} {
		if a := g.send("POST", "/v1/refunds/re_0001", body); a.status != 400 || a.apiError(t).Param != "metadata[intent]" {
			t.Fatalf("update %s: %d %q", body, a.status, a.body)
		}
	}
	if a := g.send("POST", "/v1/refunds/re_0001", "metadata=&metadata[intent]=refund-1042"); a.status != 200 || len(a.refund(t).Metadata) != 1 {
		t.Fatalf("clearing every field but the intent's: %d %q", a.status, a.body)
	}
	// An id with a question mark in it finds no refund, and the session
	// still replays.
	if a := g.send("POST", "/v1/refunds/re_0001%3Fx", "metadata[a]=b"); a.status != 404 {
		t.Fatalf("update of re_0001?x: %d %q", a.status, a.body)
	}
	s := g.srv.Finish()
	if why, err := replayDiff(s); err != nil || why != "" {
		t.Fatalf("the session with updates does not replay: %v %s", err, why)
	}
	if v := verdictOf(t, s, "refund-1042"); v.Verdict != missions.ExactlyOnce {
		t.Errorf("verdict %s: clearing metadata must not unlink a refund from its intent", v.Verdict)
	}
}

func manyMetadata(n int) string {
	v := url.Values{}
	for i := range n {
		v.Set("metadata[k"+strconv.Itoa(i)+"]", "v")
	}
	return v.Encode()
}

// A pending refund can be canceled: no effect stands, the client was
// told, and a replay of the session agrees. A refund that is not pending
// cannot be.
func TestCancelPending(t *testing.T) {
	g := newRig(t, Options{Faults: []missions.Fixture{missions.PendingFixture, missions.Success}, Delay: 50})
	if r := g.create("k1").refund(t); r.Status != "pending" || r.PendingReason == nil {
		t.Fatalf("the pending create: %+v", r)
	}
	a := g.send("POST", "/v1/refunds/re_0001/cancel", "")
	if a.status != 200 || a.refund(t).Status != "canceled" {
		t.Fatalf("cancel: %d %q", a.status, a.body)
	}
	if b := g.send("POST", "/v1/refunds/re_0001/cancel", ""); b.status != 400 || !strings.Contains(b.apiError(t).Message, "canceled") {
		t.Fatalf("a second cancel: %d %q", b.status, b.body)
	}
	if r := g.create("k1").refund(t); r.ID != "re_0001" {
		t.Fatalf("a replay of the key named %s", r.ID)
	}
	g.do(g.quick, http.MethodPost, "/v1/refunds", "k2", url.Values{"charge": {"ch_2"}, "amount": {"100"}, "metadata[intent]": {"other"}})
	if b := g.send("POST", "/v1/refunds/re_0002/cancel", ""); b.status != 400 || !strings.Contains(b.apiError(t).Message, "succeeded") {
		t.Fatalf("cancel of a succeeded refund: %d %q", b.status, b.body)
	}
	if b := g.send("POST", "/v1/refunds/re_0001/cancel", "amount=1"); b.status != 400 || b.apiError(t).Code != "parameter_unknown" {
		t.Fatalf("cancel with a parameter: %d %q", b.status, b.body)
	}
	g.clock.Add(100 * time.Second)
	s := g.srv.Finish()
	if s.Ledger.Effects != 1 || s.Ledger.Objects[0].Status != ledger.Canceled {
		t.Fatalf("after the cancel the ledger holds %d effects, the first refund %s", s.Ledger.Effects, s.Ledger.Objects[0].Status)
	}
	if v := verdictOf(t, s, "refund-1042"); v.Verdict != missions.FailedCleanly {
		t.Errorf("the canceled intent: %s, want failed_cleanly", v.Verdict)
	}
	if why, err := replayDiff(s); err != nil || why != "" {
		t.Fatalf("the session with a cancel does not replay: %v %s", err, why)
	}
	if !strings.Contains(render.SessionText(s), "3 cancels") {
		t.Errorf("the report does not count the cancel:\n%s", render.SessionText(s))
	}
	if !strings.Contains(render.SessionText(s), "shown its refund pending, then canceled") {
		t.Errorf("the report does not say what the client was shown:\n%s", render.SessionText(s))
	}
}

// The list filters by created time, as created[gt|gte|lt|lte] or a time.
func TestListByCreated(t *testing.T) {
	g := newRig(t, Options{})
	start := g.clock.Now().Unix()
	for i := range 3 {
		g.do(g.quick, http.MethodPost, "/v1/refunds", "", url.Values{"charge": {"ch_" + strconv.Itoa(i)}, "amount": {"100"}, "metadata[intent]": {"i" + strconv.Itoa(i)}})
		g.clock.Add(10 * time.Second)
	}
	ids := func(q string) []string {
		a := g.send("GET", "/v1/refunds?"+q, "")
		var l listJSON
		if a.status != 200 || json.Unmarshal(a.body, &l) != nil {
			t.Fatalf("%s: %d %q", q, a.status, a.body)
		}
		var out []string
		for _, r := range l.Data {
			out = append(out, r.ID)
		}
		return out
	}
	t0, t1, t2 := start, start+10, start+20
	cases := map[string][]string{
		"created[gt]=" + strconv.FormatInt(t0, 10):                                               {"re_0003", "re_0002"},
		"created[gte]=" + strconv.FormatInt(t1, 10):                                              {"re_0003", "re_0002"},
		"created[lt]=" + strconv.FormatInt(t2, 10):                                               {"re_0002", "re_0001"},
		"created[lte]=" + strconv.FormatInt(t0, 10):                                              {"re_0001"},
		"created=" + strconv.FormatInt(t1, 10):                                                   {"re_0002"},
		"created[gt]=" + strconv.FormatInt(t0, 10) + "&created[lt]=" + strconv.FormatInt(t2, 10): {"re_0002"},
	}
	for q, want := range cases {
		if got := ids(q); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	for _, q := range []string{"created[gt]=yesterday", "created[between]=1", "created[gt]=-5"} {
		if a := g.send("GET", "/v1/refunds?"+q, ""); a.status != 400 {
			t.Errorf("%s: %d %q", q, a.status, a.body)
		}
	}
	if why, err := replayDiff(g.srv.Finish()); err != nil || why != "" {
		t.Fatalf("the session with created filters does not replay: %v %s", err, why)
	}
}

// What Stripe refuses is refused with a 400 that names it: expand on any
// route, metadata over its limits, a string over 5000 characters, charge
// and payment_intent together, a query string that does not parse.
func TestStripeRefusals(t *testing.T) {
	g := newRig(t, Options{})
	g.create("k1")
	good := "charge=ch_1&amount=100&metadata%5Bintent%5D=i"
	cases := []struct {
		name, method, path, body string
		param, words             string
	}{
		{"expand on create", "POST", "/v1/refunds", good + "&expand[]=charge", "expand[]", "cannot be expanded"},
		{"expand on retrieve", "GET", "/v1/refunds/re_0001?expand[]=charge", "", "expand[]", "cannot be expanded"},
		{"expand on list", "GET", "/v1/refunds?expand[]=data.charge", "", "expand[]", "cannot be expanded"},
		{"expand on cancel", "POST", "/v1/refunds/re_0001/cancel", "expand[]=charge", "expand[]", "cannot be expanded"},
		{"a parameter on retrieve", "GET", "/v1/refunds/re_0001?amount=1", "", "amount", "unknown parameter"},
		{"51 metadata keys", "POST", "/v1/refunds", good + "&" + manyMetadata(50), "metadata", "up to 50 keys"},
		{"a 41-character key", "POST", "/v1/refunds", good + "&metadata[" + strings.Repeat("k", 41) + "]=v", "metadata", "Invalid key"},
		{"a 501-character value", "POST", "/v1/refunds", good + "&metadata[note]=" + strings.Repeat("v", 501), "metadata", "Invalid val"},
		{"a 5001-character charge", "POST", "/v1/refunds", "amount=100&metadata%5Bintent%5D=i&charge=" + strings.Repeat("c", 5001), "charge", "at most 5000"},
		{"charge and payment_intent", "POST", "/v1/refunds", good + "&payment_intent=pi_1", "payment_intent", "not both"},
		{"a bad query", "GET", "/v1/refunds?limit=%zz", "", "", "does not parse"},
		{"a bad query on retrieve", "GET", "/v1/refunds/re_0001?%zz", "", "", "does not parse"},
		{"charge and payment_intent in a list", "GET", "/v1/refunds?charge=ch_1&payment_intent=pi_1", "", "payment_intent", "not both"},
	}
	for _, tc := range cases {
		a := g.send(tc.method, tc.path, tc.body)
		if a.err != nil {
			t.Fatalf("%s: %v", tc.name, a.err)
		}
		e := a.apiError(t)
		if a.status != 400 || e.Param != tc.param || !strings.Contains(e.Message, tc.words) {
			t.Errorf("%s: %d param %q %q, want 400 param %q saying %q", tc.name, a.status, e.Param, e.Message, tc.param, tc.words)
		}
	}
	// At the limits, each is accepted.
	if a := g.send("POST", "/v1/refunds", "charge=ch_1&amount=100&metadata%5Bintent%5D=j&"+manyMetadata(48)+"&metadata["+strings.Repeat("k", 40)+"]="+strings.Repeat("v", 500)); a.status != 200 {
		t.Errorf("50 keys, a 40-character key, a 500-character value: %d %q", a.status, a.body)
	}
	if s := g.srv.Finish(); s.Ledger.Effects != 2 {
		t.Fatalf("refused requests touched the ledger: %d effects", s.Ledger.Effects)
	}
}

// The report says what happened: creates without a key are said to be
// without one, a pending refund that failed is said to have been shown
// pending then failed, and intents that differ by a hidden character are
// shown apart.
func TestSessionWords(t *testing.T) {
	g := newRig(t, Options{Faults: []missions.Fixture{missions.TimeoutAfterCommit, missions.Success, missions.PendingFixture}, Delay: 2, Resolve: ledger.Failed})
	g.do(g.quick, http.MethodPost, "/v1/refunds", "", refund1042())
	g.do(g.quick, http.MethodPost, "/v1/refunds", "", refund1042())
	esc := url.Values{"charge": {"ch_9"}, "amount": {"100"}, "metadata[intent]": {"refund\x1b[31m-9"}}
	g.do(g.quick, http.MethodPost, "/v1/refunds", "kp", esc)
	g.clock.Add(5 * time.Second)
	g.send("GET", "/v1/refunds/re_0003", "")
	text := render.SessionText(g.srv.Finish())
	for _, want := range []string{"2 creates without a key", `refund\x1b[31m-9`, "shown its refund pending, then failed"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "under 1 key; 2 refunds") {
		t.Errorf("keyless creates reported under a key:\n%s", text)
	}
}

// --db never starts quietly on less than it had: an empty file is
// refused, and so is a file whose newest meta page does not check, which
// bbolt would otherwise pass over for the older one, dropping the last
// write.
func TestStoreRefusesLessThanItHad(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(Options{}, empty); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("an empty file: %v", err)
	}
	db := filepath.Join(dir, "p.db")
	clock := newFakeClock()
	g, _ := openRig(t, Options{}, db, clock)
	g.create("k1")
	g.do(g.quick, http.MethodPost, "/v1/refunds", "k2", url.Values{"charge": {"ch_2"}, "amount": {"100"}, "metadata[intent]": {"i2"}})
	g.stop()
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	// The newest meta page is the one with the higher transaction id.
	size := int(readU32(data[16+8:]))
	newest := 0
	if readU64(data[size+16+48:]) > readU64(data[16+48:]) {
		newest = size
	}
	for _, field := range []struct {
		name string
		at   int
	}{{"checksum", 16 + 56}, {"transaction id", 16 + 48}, {"root", 16 + 16}, {"magic", 16}} {
		bad := slices.Clone(data)
		bad[newest+field.at] ^= 0x04
		path := filepath.Join(dir, "flipped-"+strings.ReplaceAll(field.name, " ", "-")+".db")
		if err := os.WriteFile(path, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := Open(Options{}, path)
		if err == nil || !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "does not match its checksum") || !strings.Contains(err.Error(), "start anew with --db naming a new file") {
			t.Errorf("a flipped bit in the newest meta page's %s: %v", field.name, err)
		}
	}
	// A flipped bit in the older meta page is refused too: a page that
	// fails its checksum cannot say it is the older one (a flipped bit in
	// the newest's transaction id makes it read as the older).
	older := size - newest
	bad := slices.Clone(data)
	bad[older+16+56] ^= 0x04
	olderPath := filepath.Join(dir, "older-flipped.db")
	if err := os.WriteFile(olderPath, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(Options{}, olderPath); !errors.Is(err, ErrDamaged) {
		t.Errorf("a flipped bit in the older meta page: %v", err)
	}
	if after, _ := os.ReadFile(olderPath); !bytes.Equal(after, bad) {
		t.Error("a refused file was changed")
	}
	// The untouched file still opens, with both refunds.
	g2, rec := openRig(t, Options{}, db, clock)
	if rec == nil || rec.Refunds != 2 {
		t.Fatalf("the file itself recovered %+v", rec)
	}
	g2.stop()
}

func readU32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func readU64(b []byte) uint64 { return uint64(readU32(b)) | uint64(readU32(b[4:]))<<32 }

// A restart that names no faults goes on with the database's, those used
// up staying used; settings that differ are named as a person types them.
func TestStoreRestartKeepsItsFaults(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	clock := newFakeClock()
	g, _ := openRig(t, Options{Faults: []missions.Fixture{missions.FailureBeforeCommit, missions.ServerErrorAfterCommit}, Delay: 7}, db, clock)
	g.create("k1")
	g.stop()
	g2, _ := openRig(t, Options{}, db, clock)
	if d := g2.srv.Options().Delay; d != 7 {
		t.Fatalf("after a restart without --delay the delay is %d, want the database's 7", d)
	}
	if left := g2.srv.FaultsLeft()[""]; !slices.Equal(left, []missions.Fixture{missions.ServerErrorAfterCommit}) {
		t.Fatalf("after a restart without --faults the faults left are %v", left)
	}
	if a := g2.create("k2"); a.status != 500 {
		t.Fatalf("the next create met %d, want the database's server_error_after_commit", a.status)
	}
	g2.stop()
	_, _, err := Open(Options{Faults: []missions.Fixture{missions.Success}}, db)
	if err == nil || !strings.Contains(err.Error(), "--faults failure_before_commit,server_error_after_commit, not success") {
		t.Fatalf("other faults: %v", err)
	}
	if _, _, err := Open(Options{MetadataOutsideDigest: true}, db); err == nil || !strings.Contains(err.Error(), "--compare-metadata true, not false") {
		t.Fatalf("another --compare-metadata: %v", err)
	}
}

// An update and a cancel are durable: a provider reopened on its
// database holds the refund as they left it.
func TestStoreKeepsUpdatesAndCancels(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	clock := newFakeClock()
	o := Options{Faults: []missions.Fixture{missions.PendingFixture, missions.Success}, Delay: 50}
	g, _ := openRig(t, o, db, clock)
	g.create("k1")
	g.do(g.quick, http.MethodPost, "/v1/refunds", "k2", url.Values{"charge": {"ch_2"}, "amount": {"100"}, "metadata[intent]": {"i2"}})
	if a := g.send("POST", "/v1/refunds/re_0001/cancel", ""); a.status != 200 {
		t.Fatalf("cancel: %d %q", a.status, a.body)
	}
	if a := g.send("POST", "/v1/refunds/re_0002", "metadata[ticket]=T-1"); a.status != 200 {
		t.Fatalf("update: %d %q", a.status, a.body)
	}
	g.stop()
	g2, rec := openRig(t, o, db, clock)
	if rec == nil || rec.Refunds != 2 {
		t.Fatalf("recovered %+v", rec)
	}
	if r := g2.send("GET", "/v1/refunds/re_0001", "").refund(t); r.Status != "canceled" {
		t.Errorf("after a restart the canceled refund is %s", r.Status)
	}
	if r := g2.send("GET", "/v1/refunds/re_0002", "").refund(t); r.Metadata["ticket"] != "T-1" {
		t.Errorf("after a restart the updated refund has metadata %v", r.Metadata)
	}
	clock.Add(100 * time.Second)
	if s := g2.srv.Finish(); s.Ledger.Effects != 1 {
		t.Errorf("after a restart the ledger holds %d effects, want 1", s.Ledger.Effects)
	}
}

// A read of a refund whose intent is longer than a read keeps replays as
// it was served, and so does a list by a long intent.
func TestLongIntentReadsReplay(t *testing.T) {
	g := newRig(t, Options{})
	long := strings.Repeat("i", 300)
	g.do(g.quick, http.MethodPost, "/v1/refunds", "k", url.Values{"charge": {"ch_1"}, "amount": {"100"}, "metadata[intent]": {long}})
	if a := g.send("GET", "/v1/refunds/re_0001", ""); a.status != 200 {
		t.Fatalf("retrieve: %d", a.status)
	}
	if a := g.send("GET", "/v1/refunds?metadata[intent]="+long, ""); a.status != 200 {
		t.Fatalf("list: %d", a.status)
	}
	s := g.srv.Finish()
	if r := s.Requests[1]; !r.Cut || len(r.Intent) > MaxReadPayload+len("…") {
		t.Fatalf("the retrieve was kept as %+v", r)
	}
	if why, err := replayDiff(s); err != nil || why != "" {
		t.Fatalf("reads of a long intent do not replay: %v %s", err, why)
	}
}

// From an adversarial pass: what a client sends is kept bounded however
// it is refused, legal multi-byte metadata fits the body cap, a path not
// in its clean form is a 404 in Stripe's shape, and an update checks its
// Idempotency-Key.
func TestRefusalsKeepLittle(t *testing.T) {
	g := newRig(t, Options{})
	g.create("k1")
	big := strings.Repeat("x", 60_000)
	if a := g.send("POST", "/v1/refunds", "charge=ch_1&amount=x&metadata%5Bintent%5D="+big); a.status != 400 {
		t.Fatalf("a create with a 60 KB intent: %d", a.status)
	}
	many := url.Values{}
	for i := range 50 {
		many.Set(fmt.Sprintf("metadata[k%02d]", i), strings.Repeat("v", 500))
	}
	for what, path := range map[string]string{"404": "/v1/refunds/re_9999", "400": "/v1/refunds/re_0001"} {
		if a := g.send("POST", path, many.Encode()); a.status != map[string]int{"404": 404, "400": 400}[what] {
			t.Fatalf("an update answered %s: %d %q", what, a.status, a.body)
		}
	}
	// 49 fields of 500 three-byte characters: legal, and over 64 KiB
	// once form-encoded.
	wide := url.Values{"charge": {"ch_9"}, "amount": {"100"}, "metadata[intent]": {"wide"}}
	for i := range 49 {
		wide.Set(fmt.Sprintf("metadata[k%02d]", i), strings.Repeat("日", 500))
	}
	if a := g.do(g.quick, http.MethodPost, "/v1/refunds", "kw", wide); a.status != 200 {
		t.Fatalf("legal multi-byte metadata (%d bytes of form): %d %q", len(wide.Encode()), a.status, a.body)
	}
	for _, p := range []string{"//v1/refunds", "/v1//refunds", "/v1/refunds/./re_0001", "/v1/refunds//cancel"} {
		a := g.send("POST", p, "metadata[a]=b")
		if a.status != 404 || a.header.Get("Request-Id") == "" || a.apiError(t).Type == "" {
			t.Errorf("POST %s: %d, Request-Id %q", p, a.status, a.header.Get("Request-Id"))
		}
	}
	if a := g.send("POST", "/v1/refunds/re_0001", "metadata[a]=b", "Idempotency-Key", " "); a.status != 400 || a.apiError(t).Param != "Idempotency-Key" {
		t.Errorf("an update with a blank key: %d %q", a.status, a.body)
	}
	if a := g.send("POST", "/v1/refunds", "charge=ch_5&amount=5&metadata=&metadata%5Bintent%5D=e&metadata%5Bgone%5D="); a.status != 200 || len(a.refund(t).Metadata) != 1 {
		t.Errorf("metadata= and an empty field on a create: %d %q", a.status, a.body)
	}
	s := g.srv.Finish()
	for _, r := range s.Requests {
		if len(r.Intent) > MaxReadPayload+len("…") || (r.Kind != export.RequestCreate && len(r.Payload) > 2*MaxReadPayload) {
			t.Errorf("request %d (%s) keeps %d bytes of intent, %d of payload", r.Seq, r.Kind, len(r.Intent), len(r.Payload))
		}
	}
	if why, err := replayDiff(s); err != nil || why != "" {
		t.Fatalf("the session does not replay: %v %s", err, why)
	}
	if text := render.SessionText(s); !strings.Contains(text, "refused") {
		t.Errorf("the report:\n%s", text)
	}
}

// A provider that served nothing records its requests as [], not null.
func TestEmptySessionHasRequests(t *testing.T) {
	g := newRig(t, Options{})
	s := g.srv.Finish()
	data, err := export.MarshalSession(s)
	if err != nil || s.Requests == nil || !strings.Contains(string(data), `"requests": []`) {
		t.Fatalf("an empty session: %v %s", err, data)
	}
}

// A session file's requests are checked to be what serve records: an
// HTTP status, a delay in range, an error's type and code. A file with a
// status of 70000 or an error of another shape is refused, not kept as
// something else.
func TestSessionFileFieldsChecked(t *testing.T) {
	g := newRig(t, Options{})
	g.send("GET", "/v1/refunds/re_9999", "")
	data, err := export.MarshalSession(g.srv.Finish())
	if err != nil {
		t.Fatal(err)
	}
	for what, edit := range map[string][2]string{
		"status": {`"status": 404`, `"status": 70000`},
		"error":  {`"error": "invalid_request_error/resource_missing"`, `"error": "Not Found!"`},
		"again":  {`"kind": "retrieve",`, `"kind": "retrieve", "again": -1,`},
	} {
		bad := strings.Replace(string(data), edit[0], edit[1], 1)
		if bad == string(data) {
			t.Fatalf("%s: the session has no %s", what, edit[0])
		}
		if _, err := export.UnmarshalSession("s.json", []byte(bad)); err == nil || !strings.Contains(err.Error(), what) {
			t.Errorf("a session with %s: %v", edit[1], err)
		}
	}
}
