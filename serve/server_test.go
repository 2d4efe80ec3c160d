package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
)

// fakeClock is a wall clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// rig is a provider on a loopback test server with a clock of its own.
type rig struct {
	t     *testing.T
	srv   *Server
	http  *httptest.Server
	clock *fakeClock
	// quick gives up on a reply after a short while, as a client with a
	// short timeout does.
	quick *http.Client
}

func newRig(t *testing.T, o Options) *rig {
	t.Helper()
	g := newToolRig(t, o)
	// Through serve's own HTTPServer, so that every test meets its gate.
	hs := NewHTTPServer(g.srv)
	g.http = httptest.NewUnstartedServer(nil)
	g.http.Config = hs.Server
	g.http.Start()
	t.Cleanup(func() {
		// Held replies end first, so that closing the server waits for none.
		g.srv.Release()
		g.http.Close()
	})
	g.quick = &http.Client{Timeout: 150 * time.Millisecond}
	return g
}

// answer is one reply, or the error the client got instead.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

func (a answer) timedOut() bool {
	var ne net.Error
	return a.err != nil && errors.As(a.err, &ne) && ne.Timeout()
}

func (a answer) apiError(t *testing.T) apiError {
	t.Helper()
	var e struct {
		Error *apiError `json:"error"`
	}
	if err := json.Unmarshal(a.body, &e); err != nil || e.Error == nil || e.Error.Type == "" || e.Error.Message == "" {
		t.Fatalf("reply %d %q is not a Stripe-shaped error (%v)", a.status, a.body, err)
	}
	return *e.Error
}

func (a answer) refund(t *testing.T) refundJSON {
	t.Helper()
	var r refundJSON
	if err := json.Unmarshal(a.body, &r); err != nil || r.Object != "refund" || r.ID == "" {
		t.Fatalf("reply %d %q is not a refund (%v)", a.status, a.body, err)
	}
	return r
}

func (g *rig) do(c *http.Client, method, path, key string, form url.Values) answer {
	g.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, g.http.URL+path, body)
	if err != nil {
		g.t.Fatal(err)
	}
	req.SetBasicAuth("sk_test_rig", "")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

// refund1042 is the source exercise's refund: 45.00 on order 1042.
func refund1042() url.Values {
	return url.Values{"charge": {"ch_1042"}, "amount": {"4500"}, "metadata[intent]": {"refund-1042"}}
}

func (g *rig) create(key string) answer {
	return g.do(g.quick, http.MethodPost, "/v1/refunds", key, refund1042())
}

func verdictOf(t *testing.T, s *export.Session, intent string) missions.IntentVerdict {
	t.Helper()
	for _, v := range s.Outcome.Verdicts {
		if v.Intent == intent {
			return v
		}
	}
	t.Fatalf("no verdict for %s in %+v", intent, s.Outcome.Verdicts)
	return missions.IntentVerdict{}
}

// The source exercise on the wire: a timeout after commit then success is
// one refund with one key, two with a fresh key each time, and two
// failures before commit are none.
func TestSourceExercise(t *testing.T) {
	cases := []struct {
		name    string
		faults  []missions.Fixture
		keys    []string
		effects int
		verdict missions.Verdict
	}{
		{"stable key", []missions.Fixture{missions.TimeoutAfterCommit, missions.Success}, []string{"k-1042", "k-1042"}, 1, missions.ExactlyOnce},
		{"fresh keys", []missions.Fixture{missions.TimeoutAfterCommit, missions.Success}, []string{"k-a", "k-b"}, 2, missions.Duplicate},
		{"two failures before commit", []missions.Fixture{missions.FailureBeforeCommit, missions.FailureBeforeCommit}, []string{"k-1042", "k-1042"}, 0, missions.FailedCleanly},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newRig(t, Options{Faults: tc.faults})
			first := g.create(tc.keys[0])
			second := g.create(tc.keys[1])
			switch tc.faults[0] {
			case missions.TimeoutAfterCommit:
				if !first.timedOut() {
					t.Fatalf("timeout_after_commit: the client got %d %q (%v), want a timeout", first.status, first.body, first.err)
				}
				if second.status != http.StatusOK {
					t.Fatalf("the retry got %d %q", second.status, second.body)
				}
				r := second.refund(t)
				if r.Amount != 4500 || r.Metadata["intent"] != "refund-1042" || r.Status != "succeeded" {
					t.Errorf("the refund reads %+v", r)
				}
				replayed := second.header.Get("Idempotent-Replayed") == "true"
				if replayed != (tc.effects == 1) {
					t.Errorf("Idempotent-Replayed is %q with %d effects", second.header.Get("Idempotent-Replayed"), tc.effects)
				}
			case missions.FailureBeforeCommit:
				for _, a := range []answer{first, second} {
					if a.status != http.StatusBadRequest || a.apiError(t).Type != "invalid_request_error" {
						t.Fatalf("failure_before_commit answered %d %q", a.status, a.body)
					}
				}
			}
			s := g.srv.Finish()
			if s.Ledger.Effects != tc.effects || len(s.Ledger.Objects) != tc.effects {
				t.Fatalf("the ledger holds %d effects (%d objects), want %d", s.Ledger.Effects, len(s.Ledger.Objects), tc.effects)
			}
			if v := verdictOf(t, s, "refund-1042"); v.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s", v.Verdict, tc.verdict)
			}
			if got := s.Requests[0].Wire; tc.faults[0] == missions.TimeoutAfterCommit && got != export.WireHeld {
				t.Errorf("the first reply's wire is %q, want held", got)
			}
		})
	}
}

// Every fault does on the wire what the fixture table says.
func TestFaultsOnTheWire(t *testing.T) {
	t.Run("timeout_before_commit never executes", func(t *testing.T) {
		g := newRig(t, Options{Faults: []missions.Fixture{missions.TimeoutBeforeCommit}})
		if a := g.create("k"); !a.timedOut() {
			t.Fatalf("got %d %q (%v), want a timeout", a.status, a.body, a.err)
		}
		s := g.srv.Finish()
		if s.Ledger.Effects != 0 || len(s.Ledger.Records) != 0 || s.Requests[0].Provider != "not_reached" {
			t.Fatalf("the provider saw the request: %+v, ledger %+v", s.Requests[0], s.Ledger)
		}
		if v := verdictOf(t, s, "refund-1042"); v.Verdict != missions.FailedCleanly {
			t.Errorf("verdict %s", v.Verdict)
		}
	})
	t.Run("server_error_after_commit saves the 500 under v1, completes it under v2", func(t *testing.T) {
		for _, c := range []ledger.Contract{ledger.V1, ledger.V2} {
			g := newRig(t, Options{Contract: c, Faults: []missions.Fixture{missions.ServerErrorAfterCommit}})
			first := g.create("k")
			if first.status != 500 || first.apiError(t).Type != "api_error" {
				t.Fatalf("%s: first reply %d %q", c, first.status, first.body)
			}
			again := g.create("k")
			switch c {
			case ledger.V1:
				if again.status != 500 || again.header.Get("Idempotent-Replayed") != "true" {
					t.Errorf("v1 retry: %d replayed=%q, want the saved 500 replayed", again.status, again.header.Get("Idempotent-Replayed"))
				}
			case ledger.V2:
				if again.status != 200 || again.refund(t).Status != "succeeded" {
					t.Errorf("v2 retry: %d %q, want the refund completed", again.status, again.body)
				}
			}
			if s := g.srv.Finish(); s.Ledger.Effects != 1 {
				t.Errorf("%s: %d effects, want 1", c, s.Ledger.Effects)
			}
		}
	})
	t.Run("late_commit holds the request and commits later; the key conflicts meanwhile", func(t *testing.T) {
		g := newRig(t, Options{Faults: []missions.Fixture{missions.LateCommit}, Delay: 3})
		if a := g.create("k"); !a.timedOut() {
			t.Fatalf("got %d %q, want a timeout", a.status, a.body)
		}
		empty := g.do(g.quick, http.MethodGet, "/v1/refunds?charge=ch_1042", "", nil)
		var l listJSON
		if err := json.Unmarshal(empty.body, &l); err != nil || len(l.Data) != 0 {
			t.Fatalf("the read-back before the commit shows %q", empty.body)
		}
		conflict := g.create("k")
		if conflict.status != http.StatusConflict {
			t.Fatalf("same key while executing: %d %q, want 409", conflict.status, conflict.body)
		}
		if e := conflict.apiError(t); e.Type != "idempotency_error" || e.Code != "idempotency_key_in_use" {
			t.Errorf("conflict body %+v", e)
		}
		g.clock.Add(3 * DefaultTick)
		after := g.create("k")
		if after.status != 200 || after.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("after the commit: %d %q, want the saved success replayed", after.status, after.body)
		}
		s := g.srv.Finish()
		if s.Ledger.Effects != 1 || len(s.Changes) == 0 || s.Changes[0].Kind != ledger.LateCommit || s.Changes[0].Tick != 3 {
			t.Fatalf("effects %d, changes %+v", s.Ledger.Effects, s.Changes)
		}
	})
	t.Run("pending resolves later; a read shows it", func(t *testing.T) {
		g := newRig(t, Options{Faults: []missions.Fixture{missions.PendingFixture}, Resolve: ledger.Failed})
		a := g.create("k")
		r := a.refund(t)
		if r.Status != "pending" {
			t.Fatalf("status %q, want pending", r.Status)
		}
		if g.do(g.quick, http.MethodGet, "/v1/refunds/"+r.ID, "", nil).refund(t).Status != "pending" {
			t.Fatal("the refund resolved early")
		}
		g.clock.Add(DefaultDelay * DefaultTick)
		got := g.do(g.quick, http.MethodGet, "/v1/refunds/"+r.ID, "", nil).refund(t)
		if got.Status != "failed" || got.FailureReason == nil {
			t.Fatalf("after the delay the refund reads %+v, want failed", got)
		}
		s := g.srv.Finish()
		if v := verdictOf(t, s, "refund-1042"); v.Verdict != missions.FailedCleanly || v.Effects != 0 {
			t.Errorf("verdict %+v", v)
		}
	})
	t.Run("crash_after_send commits and closes without a reply", func(t *testing.T) {
		g := newRig(t, Options{Faults: []missions.Fixture{missions.CrashAfterSend}})
		a := g.create("k")
		if a.err == nil || a.timedOut() {
			t.Fatalf("got %d %q (%v), want the connection closed", a.status, a.body, a.err)
		}
		s := g.srv.Finish()
		if s.Requests[0].Wire != export.WireClosed || s.Ledger.Effects != 1 {
			t.Fatalf("wire %q, %d effects", s.Requests[0].Wire, s.Ledger.Effects)
		}
		if v := verdictOf(t, s, "refund-1042"); v.Verdict != missions.HiddenEffect {
			t.Errorf("verdict %s, want hidden_effect", v.Verdict)
		}
	})
	t.Run("a changed amount under one key is an idempotency error", func(t *testing.T) {
		g := newRig(t, Options{})
		g.create("k")
		form := refund1042()
		form.Set("amount", "4000")
		a := g.do(g.quick, http.MethodPost, "/v1/refunds", "k", form)
		if a.status != http.StatusBadRequest || a.apiError(t).Type != "idempotency_error" {
			t.Fatalf("got %d %q, want 400 idempotency_error", a.status, a.body)
		}
		s := g.srv.Finish()
		if s.Requests[1].Provider != string(ledger.Mismatch) || s.Ledger.Effects != 1 {
			t.Errorf("request %+v, %d effects", s.Requests[1], s.Ledger.Effects)
		}
		if got := s.Requests[1].Observed(s.ProfileOf()); got != missions.ObservedMismatch {
			t.Errorf("observed %s, want mismatch", got)
		}
	})
	t.Run("the faults run out into success", func(t *testing.T) {
		g := newRig(t, Options{Faults: []missions.Fixture{missions.FailureBeforeCommit}})
		g.create("k1")
		if a := g.create("k2"); a.status != 200 {
			t.Fatalf("after the listed faults: %d %q, want success", a.status, a.body)
		}
	})
}

// With a mission, each intent's attempts meet that intent's fixtures in
// order, whatever other intents do in between.
func TestMissionSchedule(t *testing.T) {
	m, err := missions.BuiltIn().Get("two-intended-refunds")
	if err != nil {
		t.Fatal(err)
	}
	g := newRig(t, Options{Mission: m})
	var want []missions.Fixture
	per := map[string]int{}
	for _, st := range m.Schedule {
		if st.Kind() == missions.StepAttempt {
			per[st.Attempt]++
		}
	}
	// Send the second intent first: its first attempt still meets its
	// own first fixture.
	order := []string{m.Intents[1].ID, m.Intents[0].ID}
	for _, id := range order {
		for _, st := range m.Schedule {
			if st.Attempt == id {
				want = append(want, st.Fixture)
			}
		}
	}
	for _, id := range order {
		in := m.Intents[0]
		for _, x := range m.Intents {
			if x.ID == id {
				in = x
			}
		}
		for n := 0; n < per[id]; n++ {
			form := url.Values{"charge": {"ch_" + in.Payload["order"]}, "amount": {"4500"}, "metadata[intent]": {id}}
			g.do(g.quick, http.MethodPost, "/v1/refunds", "key-"+id, form)
		}
	}
	s := g.srv.Finish()
	var got []missions.Fixture
	for _, r := range s.Requests {
		got = append(got, r.Fixture)
	}
	if len(got) != len(want) {
		t.Fatalf("fixtures %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("fixtures %v, want %v", got, want)
		}
	}
	if s.Mission == nil || s.Mission.ID != m.ID || s.Outcome.Intended != len(m.Intents) {
		t.Errorf("the session names mission %v with %d intended", s.Mission, s.Outcome.Intended)
	}
}

// With metadata left out of the digest, one key reused for a second
// intent with the same parameters is a replay, told to the wrong intent:
// a phantom, as the lab's payload-hash keys make.
func TestPhantom(t *testing.T) {
	g := newRig(t, Options{MetadataOutsideDigest: true})
	a := url.Values{"charge": {"ch_1"}, "amount": {"1500"}, "metadata[intent]": {"refund-a"}}
	b := url.Values{"charge": {"ch_1"}, "amount": {"1500"}, "metadata[intent]": {"refund-b"}}
	g.do(g.quick, http.MethodPost, "/v1/refunds", "hash-of-params", a)
	rb := g.do(g.quick, http.MethodPost, "/v1/refunds", "hash-of-params", b)
	if rb.header.Get("Idempotent-Replayed") != "true" || rb.refund(t).Metadata["intent"] != "refund-a" {
		t.Fatalf("the second intent got %q", rb.body)
	}
	s := g.srv.Finish()
	if v := verdictOf(t, s, "refund-b"); v.Verdict != missions.Phantom {
		t.Errorf("refund-b: %s, want phantom", v.Verdict)
	}
	if v := verdictOf(t, s, "refund-a"); v.Verdict != missions.ExactlyOnce {
		t.Errorf("refund-a: %s, want exactly_once", v.Verdict)
	}
}

// A create without the intent field is refused before it executes, with
// the field named; the request is kept in the session as refused.
func TestMissingIntentField(t *testing.T) {
	g := newRig(t, Options{})
	a := g.do(g.quick, http.MethodPost, "/v1/refunds", "k", url.Values{"charge": {"ch_1"}, "amount": {"100"}})
	e := a.apiError(t)
	if a.status != 400 || e.Code != "parameter_missing" || e.Param != "metadata[intent]" || !strings.Contains(e.Message, "--intent-field") {
		t.Fatalf("got %d %+v", a.status, e)
	}
	s := g.srv.Finish()
	if len(s.Requests) != 1 || s.Requests[0].Kind != export.RequestRefused || s.Ledger.Effects != 0 || len(s.Ledger.Records) != 0 {
		t.Fatalf("session %+v, ledger %+v", s.Requests, s.Ledger)
	}

	// Linked by charge instead, the same request is served.
	g2 := newRig(t, Options{IntentField: "charge"})
	if a := g2.do(g2.quick, http.MethodPost, "/v1/refunds", "k", url.Values{"charge": {"ch_1"}, "amount": {"100"}}); a.status != 200 {
		t.Fatalf("--intent-field charge: %d %q", a.status, a.body)
	}
	if v := verdictOf(t, g2.srv.Finish(), "ch_1"); v.Verdict != missions.ExactlyOnce {
		t.Errorf("verdict %s", v.Verdict)
	}
}

// Each bad request gets a Stripe-shaped error, and the server goes on
// serving.
func TestBadRequests(t *testing.T) {
	g := newRig(t, Options{})
	long := strings.Repeat("k", MaxKeyLength+1)
	raw := func(method, path, ctype, auth, body string, header ...string) answer {
		req, _ := http.NewRequest(method, g.http.URL+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Add(header[i], header[i+1])
		}
		resp, err := g.quick.Do(req)
		if err != nil {
			return answer{err: err}
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return answer{status: resp.StatusCode, header: resp.Header, body: b}
	}
	const form = "application/x-www-form-urlencoded"
	const auth = "Bearer sk_test_x"
	good := "charge=ch_1&amount=100&metadata%5Bintent%5D=i"
	cases := []struct {
		name   string
		a      answer
		status int
		code   string
	}{
		{"malformed form", raw("POST", "/v1/refunds", form, auth, "charge=%zz&amount=1"), 400, "parameter_invalid"},
		{"oversized body", raw("POST", "/v1/refunds", form, auth, "charge=ch_1&pad="+strings.Repeat("x", MaxBodyBytes)), 413, "parameter_invalid"},
		{"unknown route", raw("GET", "/v1/charges", "", auth, ""), 404, ""},
		{"wrong method", raw("DELETE", "/v1/refunds", "", auth, ""), 405, ""},
		{"key over 255 characters", raw("POST", "/v1/refunds", form, auth, good, "Idempotency-Key", long), 400, "parameter_invalid"},
		{"two keys", raw("POST", "/v1/refunds", form, auth, good, "Idempotency-Key", "a", "Idempotency-Key", "b"), 400, "parameter_invalid"},
		{"no API key", raw("POST", "/v1/refunds", form, "", good), 401, ""},
		{"JSON body", raw("POST", "/v1/refunds", "application/json", auth, `{"charge":"ch_1"}`), 400, "parameter_invalid"},
		{"unknown parameter", raw("POST", "/v1/refunds", form, auth, good+"&refund_all=yes"), 400, "parameter_unknown"},
		{"amount not a number", raw("POST", "/v1/refunds", form, auth, "charge=ch_1&amount=45.00&metadata%5Bintent%5D=i"), 400, "parameter_invalid_integer"},
		{"no charge", raw("POST", "/v1/refunds", form, auth, "amount=100&metadata%5Bintent%5D=i"), 400, "parameter_missing"},
		{"unknown refund", raw("GET", "/v1/refunds/re_9999", "", auth, ""), 404, "resource_missing"},
		{"bad list limit", raw("GET", "/v1/refunds?limit=1000", "", auth, ""), 400, "parameter_invalid_integer"},
		{"unknown control", raw("GET", ControlPrefix+"nothing", "", "", ""), 404, ""},
	}
	for _, tc := range cases {
		if tc.a.err != nil {
			t.Errorf("%s: %v", tc.name, tc.a.err)
			continue
		}
		e := tc.a.apiError(t)
		if tc.a.status != tc.status || e.Code != tc.code {
			t.Errorf("%s: %d %s, want %d %s (%s)", tc.name, tc.a.status, e.Code, tc.status, tc.code, e.Message)
		}
	}
	if a := raw("POST", "/v1/refunds", form, auth, good); a.status != 200 {
		t.Fatalf("after the bad requests, a good one got %d %q", a.status, a.body)
	}
	if s := g.srv.Finish(); s.Ledger.Effects != 1 || len(s.Ledger.Records) != 0 {
		t.Fatalf("bad requests touched the ledger: %+v", s.Ledger)
	}
}

// N concurrent clients sending one key make one effect: the others are
// told of it or told it is in flight, and every request is accounted for.
func TestConcurrentOneKey(t *testing.T) {
	for _, first := range []missions.Fixture{missions.Success, missions.LateCommit} {
		t.Run(string(first), func(t *testing.T) {
			g := newRig(t, Options{Faults: []missions.Fixture{first}, Delay: 5})
			const workers, each = 32, 100
			client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
			var wg sync.WaitGroup
			var mu sync.Mutex
			codes := map[int]int{}
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := 0; n < each; n++ {
						if first == missions.LateCommit && w == 0 && n == 0 {
							// The one that meets late_commit is held.
							a := g.do(g.quick, http.MethodPost, "/v1/refunds", "one-key", refund1042())
							mu.Lock()
							codes[0]++
							mu.Unlock()
							_ = a
							continue
						}
						a := g.do(client, http.MethodPost, "/v1/refunds", "one-key", refund1042())
						mu.Lock()
						codes[a.status]++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			s := g.srv.Finish()
			if s.Ledger.Effects != 1 {
				t.Fatalf("%d effects from one key, want 1", s.Ledger.Effects)
			}
			if len(s.Requests) != workers*each {
				t.Fatalf("the session holds %d requests, want %d", len(s.Requests), workers*each)
			}
			total := 0
			for _, n := range codes {
				total += n
			}
			if total != workers*each || codes[200]+codes[409]+codes[0] != total {
				t.Fatalf("replies by status: %v", codes)
			}
			if first == missions.LateCommit && codes[409] == 0 {
				t.Errorf("no request met the in-flight conflict: %v", codes)
			}
		})
	}
}

// The control endpoint sets faults, moves the clock and reads the state
// without a restart.
func TestControl(t *testing.T) {
	g := newRig(t, Options{})
	post := func(path string, form url.Values) answer {
		return g.do(g.quick, http.MethodPost, ControlPrefix+path, "", form)
	}
	if a := post("faults", url.Values{"faults": {"failure_before_commit,success"}}); a.status != 200 {
		t.Fatalf("set faults: %d %q", a.status, a.body)
	}
	if a := post("faults", url.Values{"faults": {"sucess"}}); a.status != 400 || !strings.Contains(a.apiError(t).Message, "did you mean success") {
		t.Fatalf("a misspelt fault: %d %q", a.status, a.body)
	}
	if a := g.create("k"); a.status != 400 {
		t.Fatalf("the set fault did not apply: %d", a.status)
	}
	var st State
	if err := json.Unmarshal(g.do(g.quick, http.MethodGet, ControlPrefix+"state", "", nil).body, &st); err != nil {
		t.Fatal(err)
	}
	if st.Requests != 1 || len(st.FaultsLeft[""]) != 1 || st.FaultsLeft[""][0] != missions.Success {
		t.Fatalf("state %+v", st)
	}
	g.create("k")
	if a := post("advance", url.Values{"ticks": {"90000"}}); a.status != 200 {
		t.Fatalf("advance: %d %q", a.status, a.body)
	}
	if a := post("advance", url.Values{"ticks": {"-1"}}); a.status != 400 {
		t.Fatalf("advance -1: %d", a.status)
	}
	// 24 hours of ticks later the key is pruned, and executes anew.
	again := g.create("k")
	if again.status != 200 || again.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("after retention: %d replayed=%q", again.status, again.header.Get("Idempotent-Replayed"))
	}
	sess := g.do(g.quick, http.MethodGet, ControlPrefix+"session", "", nil)
	s, err := export.UnmarshalSession("session", sess.body)
	if err != nil {
		t.Fatal(err)
	}
	if s.Ledger.Effects != 2 || verdictOf(t, s, "refund-1042").Verdict != missions.Duplicate {
		t.Fatalf("session ledger %+v verdicts %+v", s.Ledger, s.Outcome.Verdicts)
	}
	if a := post("reset", nil); a.status != 200 {
		t.Fatal("reset")
	}
	if s := g.srv.Session(); len(s.Requests) != 0 || s.Ledger.Effects != 0 {
		t.Fatalf("after reset: %+v", s)
	}
}

// What an adversarial pass found, each kept from coming back.
func TestHostileRequests(t *testing.T) {
	t.Run("a reset while a reply is held leaves the new session alone", func(t *testing.T) {
		g := newRig(t, Options{Faults: []missions.Fixture{missions.TimeoutAfterCommit}, Hold: 300 * time.Millisecond})
		slow := &http.Client{Timeout: 2 * time.Second}
		done := make(chan answer)
		go func() { done <- g.do(slow, http.MethodPost, "/v1/refunds", "k", refund1042()) }()
		for g.srv.Session().Tick == 0 && len(g.srv.Session().Requests) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		if a := g.do(g.quick, http.MethodPost, ControlPrefix+"reset", "", nil); a.status != 200 {
			t.Fatalf("reset: %d", a.status)
		}
		<-done
		g.do(g.quick, http.MethodPost, ControlPrefix+"faults", "", url.Values{"faults": {""}})
		if a := g.create("k2"); a.status != 200 {
			t.Fatalf("after the reset: %d %q", a.status, a.body)
		}
		s := g.srv.Finish()
		if len(s.Requests) != 2 || s.Requests[1].Wire != export.WireDelivered || s.Requests[1].Status != 200 {
			t.Fatalf("the new session holds %+v", s.Requests)
		}
	})
	t.Run("time after the last request replays, prunes and all", func(t *testing.T) {
		g := newRig(t, Options{Retention: 3 * DefaultTick})
		g.create("k")
		g.clock.Add(10 * DefaultTick)
		s := g.srv.Finish()
		if s.Tick != 10 || len(s.Changes) != 1 || s.Changes[0].Kind != ledger.Pruned {
			t.Fatalf("tick %d, changes %+v", s.Tick, s.Changes)
		}
		again, err := Replay(s)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := export.MarshalSession(s)
		b, _ := export.MarshalSession(again)
		if !bytes.Equal(a, b) {
			t.Fatalf("replay differs:\n%s\n%s", a, b)
		}
	})
	t.Run("an intent the mission does not have is refused, and an unattempted one has no verdict", func(t *testing.T) {
		m, _ := missions.BuiltIn().Get("two-intended-refunds")
		g := newRig(t, Options{Mission: m})
		form := refund1042()
		form.Set("metadata[intent]", m.Intents[0].ID+"x")
		a := g.do(g.quick, http.MethodPost, "/v1/refunds", "k", form)
		if e := a.apiError(t); a.status != 400 || !strings.Contains(e.Message, "did you mean "+m.Intents[0].ID) {
			t.Fatalf("an unknown intent: %d %+v", a.status, e)
		}
		form.Set("metadata[intent]", m.Intents[0].ID)
		g.do(g.quick, http.MethodPost, "/v1/refunds", "k", form)
		s := g.srv.Finish()
		if len(s.Outcome.Verdicts) != 1 || s.Outcome.Verdicts[0].Intent != m.Intents[0].ID {
			t.Fatalf("verdicts %+v", s.Outcome.Verdicts)
		}
		if txt := render.SessionText(s); !strings.Contains(txt, m.Intents[1].ID+": not attempted") {
			t.Errorf("the summary does not say the other intent was not attempted:\n%s", txt)
		}
	})
	t.Run("faults control takes only faults=", func(t *testing.T) {
		g := newRig(t, Options{Faults: []missions.Fixture{missions.FailureBeforeCommit}})
		for _, form := range []url.Values{{"fault": {"success"}}, {}, {"faults": {",,"}}} {
			if a := g.do(g.quick, http.MethodPost, ControlPrefix+"faults", "", form); a.status != 400 {
				t.Errorf("faults control with %v: %d, want 400", form, a.status)
			}
		}
		if a := g.create("k"); a.status != 400 {
			t.Fatalf("a refused control changed the faults: %d", a.status)
		}
		// An unknown fixture is refused with the create faults accepted,
		// and where the read faults are set.
		if a := g.do(g.quick, http.MethodPost, ControlPrefix+"faults", "", url.Values{"faults": {"bogus"}}); a.status != 400 ||
			!strings.Contains(a.apiError(t).Message, "server_error_after_commit") || !strings.Contains(a.apiError(t).Message, "read faults are set when serve starts") {
			t.Errorf("an unknown fixture: %d %s", a.status, a.body)
		}
		// Clearing answers an empty list, not null.
		if a := g.do(g.quick, http.MethodPost, ControlPrefix+"faults", "", url.Values{"faults": {""}}); a.status != 200 || !strings.Contains(string(a.body), `"faults": []`) {
			t.Errorf("clearing the faults: %d %s", a.status, a.body)
		}
	})
	t.Run("list cursors and ids are exact", func(t *testing.T) {
		g := newRig(t, Options{})
		g.create("k")
		if a := g.do(g.quick, http.MethodGet, "/v1/refunds?starting_after=re_9999", "", nil); a.status != 404 || a.apiError(t).Param != "starting_after" {
			t.Errorf("an unknown cursor: %d %q", a.status, a.body)
		}
		if a := g.do(g.quick, http.MethodGet, "/v1/refunds/re_1", "", nil); a.status != 404 {
			t.Errorf("re_1 for re_0001: %d", a.status)
		}
		if a := g.do(g.quick, http.MethodGet, "/v1/refunds/re_0001", "", nil); a.status != 200 {
			t.Errorf("re_0001: %d", a.status)
		}
	})
	t.Run("bytes that are not UTF-8, odd names and numbers are refused", func(t *testing.T) {
		g := newRig(t, Options{})
		for _, body := range []string{
			"charge=ch_1&amount=1&metadata%5Bintent%5D=%FF",
			"charge=ch_1&amount=%2B100&metadata%5Bintent%5D=i",
			"charge=ch_1&amount=1&metadata%5Ba%5D%5Bb%5D=x&metadata%5Bintent%5D=i",
			"charge=ch_1&amount=1&expandx=1&metadata%5Bintent%5D=i",
		} {
			req, _ := http.NewRequest(http.MethodPost, g.http.URL+"/v1/refunds", strings.NewReader(body))
			req.SetBasicAuth("sk_test", "")
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := g.quick.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 400 {
				t.Errorf("%s: %d, want 400", body, resp.StatusCode)
			}
		}
		long := strings.Repeat("é", 200)
		if a := g.create(long); a.status != 200 {
			t.Errorf("a 200-character key of 400 bytes: %d %q", a.status, a.body)
		}
		if a := g.create(long + strings.Repeat("é", 56)); a.status != 400 || !strings.Contains(a.apiError(t).Message, "256 characters") {
			t.Errorf("a 256-character key: %d %q", a.status, a.body)
		}
	})
	t.Run("a body without a content type is named", func(t *testing.T) {
		g := newRig(t, Options{})
		req, _ := http.NewRequest(http.MethodPost, g.http.URL+"/v1/refunds", strings.NewReader("charge=ch_1&amount=1"))
		req.SetBasicAuth("sk_test", "")
		req.Header["Content-Type"] = nil
		resp, err := g.quick.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), "no Content-Type") {
			t.Errorf("%d %s", resp.StatusCode, b)
		}
	})
	t.Run("every API request is recorded and counted, bad reads too", func(t *testing.T) {
		var n atomic.Int64
		g := newRig(t, Options{Hooks: Hooks{OnServed: func(c int) { n.Store(int64(c)) }}})
		req, _ := http.NewRequest(http.MethodGet, g.http.URL+"/v1/refunds", nil)
		resp, _ := g.quick.Do(req) // no API key
		resp.Body.Close()
		g.do(g.quick, http.MethodGet, "/v1/refunds?limit=0", "", nil)
		g.do(g.quick, http.MethodDelete, "/v1/refunds", "", nil)
		g.do(g.quick, http.MethodGet, "/v1/charges", "", nil)
		s := g.srv.Finish()
		if len(s.Requests) != 4 || n.Load() != 4 {
			t.Fatalf("%d recorded, %d counted; want 4 and 4", len(s.Requests), n.Load())
		}
		for _, r := range s.Requests {
			if r.Kind != export.RequestRefused {
				t.Errorf("request %d is %s", r.Seq, r.Kind)
			}
		}
	})
	t.Run("the clock cannot be moved past a hundred years", func(t *testing.T) {
		g := newRig(t, Options{})
		for i := 0; i < 5; i++ {
			g.do(g.quick, http.MethodPost, ControlPrefix+"advance", "", url.Values{"ticks": {"1073741824"}})
		}
		g.create("k")
		s := g.srv.Session()
		if time.Duration(s.Tick)*DefaultTick > maxClock {
			t.Fatalf("the clock stands at tick %d", s.Tick)
		}
	})
}
