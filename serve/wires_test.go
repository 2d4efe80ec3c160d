package serve

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
)

// wireCase is one wire's create as a client of it sends one, and how to
// read its answers.
type wireCase struct {
	wire string
	// create builds the create of amount under key ("" for none).
	create func(base, key string, amount int64) *http.Request
	// refundID reads the id of the refund a 2xx create answered.
	refundID func(t *testing.T, body []byte) string
	// read builds a read of the refund id, and status reads the refund's
	// status from its answer; nil for a wire with no read (Adyen).
	read   func(base, id string) *http.Request
	status func(t *testing.T, body []byte) string
	// errCode reads the provider's error code from an error's body (""
	// for a body-less error).
	errCode func(t *testing.T, body []byte) string
	// created is the status of a create that made a refund.
	created int
}

func jsonReq(method, url, body string) *http.Request {
	r, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

func decodeInto(t *testing.T, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, body)
	}
}

var wireCases = []wireCase{
	{
		wire: WireAdyen, created: 201,
		create: func(base, key string, amount int64) *http.Request {
			r := jsonReq("POST", base+"/checkout/v71/payments/PSP1042/refunds", `{"merchantAccount":"ShopECOM","reference":"refund-1042","amount":{"currency":"EUR","value":`+itoa(amount)+`}}`)
			r.Header.Set("X-API-Key", "AQE_test")
			if key != "" {
				r.Header.Set("Idempotency-Key", key)
			}
			return r
		},
		refundID: func(t *testing.T, b []byte) string {
			var r adyenRefundJSON
			decodeInto(t, b, &r)
			if r.Status != "received" || r.PaymentPspReference != "PSP1042" || r.MerchantAccount != "ShopECOM" {
				t.Fatalf("Adyen's 201: %s", b)
			}
			return r.PspReference
		},
		errCode: func(t *testing.T, b []byte) string {
			var e adyenError
			decodeInto(t, b, &e)
			if e.Status == 0 || e.ErrorType == "" || e.Message == "" {
				t.Fatalf("not Adyen's error: %s", b)
			}
			return e.ErrorCode
		},
	},
	{
		wire: WirePayPal, created: 201,
		create: func(base, key string, amount int64) *http.Request {
			r := jsonReq("POST", base+"/v2/payments/captures/CAP1042/refund", `{"custom_id":"refund-1042","amount":{"value":"`+decimal(amount)+`","currency_code":"USD"}}`)
			r.Header.Set("Authorization", "Bearer "+paypalTokenPrefix+"client")
			r.Header.Set("Prefer", "return=representation")
			if key != "" {
				r.Header.Set("PayPal-Request-Id", key)
			}
			return r
		},
		refundID: func(t *testing.T, b []byte) string {
			var r paypalRefundJSON
			decodeInto(t, b, &r)
			if r.ID == "" || r.CustomID != "refund-1042" || r.Amount == nil || r.Amount.Value != "45.00" {
				t.Fatalf("PayPal's refund: %s", b)
			}
			return r.ID
		},
		read: func(base, id string) *http.Request {
			r := jsonReq("GET", base+"/v2/payments/refunds/"+id, "")
			r.Header.Set("Authorization", "Bearer "+paypalTokenPrefix+"client")
			return r
		},
		status: func(t *testing.T, b []byte) string {
			var r paypalRefundJSON
			decodeInto(t, b, &r)
			return r.Status
		},
		errCode: func(t *testing.T, b []byte) string {
			var e paypalError
			decodeInto(t, b, &e)
			if e.Name == "" || e.DebugID == "" || len(e.Details) == 0 {
				t.Fatalf("not PayPal's error: %s", b)
			}
			return e.Details[0].Issue
		},
	},
	{
		wire: WireSquare, created: 200,
		create: func(base, key string, amount int64) *http.Request {
			k := ""
			if key != "" {
				k = `"idempotency_key":"` + key + `",`
			}
			r := jsonReq("POST", base+"/v2/refunds", `{`+k+`"payment_id":"PAY1042","reason":"refund-1042","amount_money":{"amount":`+itoa(amount)+`,"currency":"USD"}}`)
			r.Header.Set("Authorization", "Bearer EAAA_test")
			return r
		},
		refundID: func(t *testing.T, b []byte) string {
			var r struct{ Refund squareRefundJSON }
			decodeInto(t, b, &r)
			if r.Refund.ID == "" || r.Refund.PaymentID != "PAY1042" || r.Refund.AmountMoney.Amount != 4500 {
				t.Fatalf("Square's refund: %s", b)
			}
			return r.Refund.ID
		},
		read: func(base, id string) *http.Request {
			r := jsonReq("GET", base+"/v2/refunds/"+id, "")
			r.Header.Set("Authorization", "Bearer EAAA_test")
			return r
		},
		status: func(t *testing.T, b []byte) string {
			var r struct{ Refund squareRefundJSON }
			decodeInto(t, b, &r)
			return r.Refund.Status
		},
		errCode: func(t *testing.T, b []byte) string {
			var e struct{ Errors []squareErr }
			decodeInto(t, b, &e)
			if len(e.Errors) != 1 || e.Errors[0].Category == "" || e.Errors[0].Detail == "" {
				t.Fatalf("not Square's errors: %s", b)
			}
			return e.Errors[0].Code
		},
	},
	{
		wire: WireCheckout, created: 202,
		create: func(base, key string, amount int64) *http.Request {
			r := jsonReq("POST", base+"/payments/pay_1042/refunds", `{"reference":"refund-1042","amount":`+itoa(amount)+`}`)
			r.Header.Set("Authorization", "Bearer sk_sbox_test")
			if key != "" {
				r.Header.Set("Cko-Idempotency-Key", key)
			}
			return r
		},
		refundID: func(t *testing.T, b []byte) string {
			var r struct {
				ActionID  string `json:"action_id"`
				Reference string
			}
			decodeInto(t, b, &r)
			if !strings.HasPrefix(r.ActionID, "act_") || r.Reference != "refund-1042" {
				t.Fatalf("Checkout.com's 202: %s", b)
			}
			return r.ActionID
		},
		read: func(base, id string) *http.Request {
			r := jsonReq("GET", base+"/payments/pay_1042/actions", "")
			r.Header.Set("Authorization", "Bearer sk_sbox_test")
			return r
		},
		status: func(t *testing.T, b []byte) string {
			var as []checkoutAction
			decodeInto(t, b, &as)
			if len(as) == 0 {
				return ""
			}
			return as[0].ResponseSummary
		},
		errCode: func(t *testing.T, b []byte) string {
			if len(b) == 0 {
				return ""
			}
			var e struct {
				RequestID  string   `json:"request_id"`
				ErrorType  string   `json:"error_type"`
				ErrorCodes []string `json:"error_codes"`
			}
			decodeInto(t, b, &e)
			if e.RequestID == "" || e.ErrorType == "" {
				t.Fatalf("not Checkout.com's error: %s", b)
			}
			if len(e.ErrorCodes) == 0 {
				return e.ErrorType
			}
			return e.ErrorCodes[0]
		},
	},
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// send does req against g's server with a client that gives up soon.
func (g *rig) onWire(req *http.Request) answer {
	g.t.Helper()
	u := strings.TrimPrefix(req.URL.String(), "http://wire")
	nr, _ := http.NewRequest(req.Method, g.http.URL+u, req.Body)
	nr.Header = req.Header
	resp, err := g.quick.Do(nr)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

// Each wire makes a refund and reads it back in its provider's shape,
// the reply lost under a timeout is replayed under its key, and the
// session is the one every wire keeps.
func TestEachWireRefundsReadsAndReplays(t *testing.T) {
	for _, wc := range wireCases {
		t.Run(wc.wire, func(t *testing.T) {
			g := newRig(t, Options{Profile: providers.Builtin(wc.wire), Faults: []missions.Fixture{missions.TimeoutAfterCommit}})
			if a := g.onWire(wc.create("http://wire", "k-1", 4500)); !a.timedOut() {
				t.Fatalf("timeout_after_commit answered %d %s (%v)", a.status, a.body, a.err)
			}
			a := g.onWire(wc.create("http://wire", "k-1", 4500))
			if a.status != wc.created && !(wc.wire == WirePayPal && a.status == 200) {
				t.Fatalf("the same key again: %d %s", a.status, a.body)
			}
			id := wc.refundID(t, a.body)
			if wc.read != nil {
				r := g.onWire(wc.read("http://wire", id))
				if r.status != 200 {
					t.Fatalf("the read: %d %s", r.status, r.body)
				}
				if st := wc.status(t, r.body); st != map[string]string{WirePayPal: "COMPLETED", WireSquare: "COMPLETED", WireCheckout: "Approved"}[wc.wire] {
					t.Fatalf("the read says %q: %s", st, r.body)
				}
			}
			s := g.srv.Finish()
			if s.Ledger.Effects != 1 || len(s.Outcome.Verdicts) != 1 || s.Outcome.Verdicts[0].Verdict != missions.ExactlyOnce {
				t.Fatalf("%d effects, verdicts %v", s.Ledger.Effects, s.Outcome.Verdicts)
			}
			if s.Settings.IntentField != newWire(Options{Wire: wc.wire}).intentFields()[0] {
				t.Fatalf("the session's intent field is %q", s.Settings.IntentField)
			}
		})
	}
}

// A saved 500 is answered in each provider's error shape, and what a
// same-key retry meets is the profile's: Adyen and PayPal keep the 500,
// Square and Checkout.com keep only successes, so the retry runs again.
func TestEachWireSaved500FollowsItsProfile(t *testing.T) {
	want := map[string]int{WireAdyen: 1, WirePayPal: 1, WireSquare: 2, WireCheckout: 2}
	for _, wc := range wireCases {
		t.Run(wc.wire, func(t *testing.T) {
			g := newRig(t, Options{Profile: providers.Builtin(wc.wire), Faults: []missions.Fixture{missions.ServerErrorAfterCommit}})
			a := g.onWire(wc.create("http://wire", "k-1", 4500))
			if a.status != 500 {
				t.Fatalf("server_error_after_commit: %d %s", a.status, a.body)
			}
			wc.errCode(t, a.body)
			g.onWire(wc.create("http://wire", "k-1", 4500))
			if s := g.srv.Finish(); s.Ledger.Effects != want[wc.wire] {
				t.Fatalf("%d effects after a same-key retry of a saved 500; want %d", s.Ledger.Effects, want[wc.wire])
			}
		})
	}
}

// Each wire refuses what its provider refuses, in its provider's shape,
// before anything executes.
func TestEachWireRefusesInItsShape(t *testing.T) {
	for _, wc := range wireCases {
		t.Run(wc.wire, func(t *testing.T) {
			g := newRig(t, Options{Profile: providers.Builtin(wc.wire)})
			noAuth := wc.create("http://wire", "k", 4500)
			noAuth.Header.Del("Authorization")
			noAuth.Header.Del("X-API-Key")
			notJSON := wc.create("http://wire", "k", 4500)
			notJSON.Body = io.NopCloser(strings.NewReader("{not json"))
			notJSON.ContentLength = 9
			cases := []struct {
				name   string
				req    *http.Request
				status int
			}{
				{"no credentials", noAuth, 401},
				{"not JSON", notJSON, map[string]int{WireAdyen: 422, WirePayPal: 400, WireSquare: 400, WireCheckout: 422}[wc.wire]},
				{"a negative amount", wc.create("http://wire", "k", -5), map[string]int{WireAdyen: 422, WirePayPal: 400, WireSquare: 400, WireCheckout: 422}[wc.wire]},
				{"an unknown route", jsonReq("GET", "http://wire/v1/charges", ""), 404},
			}
			if wc.wire == WireSquare {
				cases = append(cases, struct {
					name   string
					req    *http.Request
					status int
				}{"no idempotency_key", wc.create("http://wire", "", 4500), 400})
			}
			for _, c := range cases {
				a := g.onWire(c.req)
				if a.status != c.status {
					t.Errorf("%s: %d %s; want %d", c.name, a.status, a.body, c.status)
					continue
				}
				wc.errCode(t, a.body)
			}
			if s := g.srv.Finish(); s.Ledger.Effects != 0 || len(s.Ledger.Records) != 0 {
				t.Fatalf("a refusal touched the ledger: %+v", s.Ledger)
			}
		})
	}
}

// The wires' statuses and amounts, and a refund past its profile's
// in-flight rule: a second create under a key still executing
// (late_commit) is answered with the profile's documented refusal.
func TestEachWireAnswersInFlightWithItsProfilesRefusal(t *testing.T) {
	for _, wc := range wireCases {
		t.Run(wc.wire, func(t *testing.T) {
			p := providers.Builtin(wc.wire)
			g := newRig(t, Options{Profile: p, Faults: []missions.Fixture{missions.LateCommit}})
			if a := g.onWire(wc.create("http://wire", "k-1", 4500)); !a.timedOut() {
				t.Fatalf("late_commit answered %d %s", a.status, a.body)
			}
			a := g.onWire(wc.create("http://wire", "k-1", 4500))
			if a.status != p.InFlight.Status {
				t.Fatalf("the key in flight: %d %s; want %d", a.status, a.body, p.InFlight.Status)
			}
			if code := wc.errCode(t, a.body); code != p.InFlight.Code {
				t.Fatalf("the key in flight: code %q; want %q (%s)", code, p.InFlight.Code, a.body)
			}
		})
	}
}

// Adyen's wire tells each refund's outcome as a REFUND notification,
// signed so that Adyen's validator accepts it; delivery meets its faults
// in order.
func TestAdyenWebhooksAreSignedAndMeetTheirFaults(t *testing.T) {
	var mu sync.Mutex
	var got []Notification
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Live  string
			Items []struct {
				Item Notification `json:"NotificationRequestItem"`
			} `json:"notificationItems"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil || len(body.Items) != 1 {
			t.Errorf("a notification that is not Adyen's: %s", b)
		}
		mu.Lock()
		got = append(got, body.Items[0].Item)
		mu.Unlock()
		_, _ = w.Write([]byte("[accepted]"))
	}))
	defer hook.Close()
	g := newRig(t, Options{Profile: providers.Builtin("adyen"), Webhook: hook.URL, WebhookFaults: []string{WebhookLost, WebhookTwice}})
	for i, key := range []string{"k-1", "k-2", "k-3"} {
		if a := g.onWire(adyenCreate(key, "refund-"+itoa(int64(i)))); a.status != 201 {
			t.Fatalf("create %d: %d %s", i, a.status, a.body)
		}
	}
	g.srv.WaitWebhooks()
	mu.Lock()
	defer mu.Unlock()
	if st := g.srv.Webhooks(); st.Due != 3 || st.Lost != 1 || st.Sent != 3 || st.Accepted != 3 || len(got) != 3 {
		t.Fatalf("stats %+v, %d received; want 3 due, 1 lost, 3 sent (one twice)", st, len(got))
	}
	for _, n := range got {
		if n.EventCode != "REFUND" || n.Success != "true" || n.OriginalReference != "PSP1042" || n.MerchantAccountCode != "ShopECOM" {
			t.Fatalf("notification %+v", n)
		}
		if sig := n.AdditionalData["hmacSignature"]; sig != n.Sign(DefaultWebhookHMAC) || sig == "" {
			t.Fatalf("signature %q", sig)
		}
	}
	count := map[string]int{}
	for _, n := range got {
		count[n.MerchantReference]++
	}
	if count["refund-0"] != 0 || count["refund-1"] != 2 || count["refund-2"] != 1 {
		t.Fatalf("notifications per refund %v; want the first lost, the second twice, the third once", count)
	}
}

func adyenCreate(key, reference string) *http.Request {
	r := jsonReq("POST", "http://wire/checkout/v71/payments/PSP1042/refunds", `{"merchantAccount":"ShopECOM","reference":"`+reference+`","amount":{"currency":"EUR","value":4500}}`)
	r.Header.Set("X-API-Key", "AQE_test")
	r.Header.Set("Idempotency-Key", key)
	return r
}

// The signature matches what Adyen's own validator computes for the same
// item (a vector taken from @adyen/api-library's HmacValidator).
func TestAdyenSignatureVector(t *testing.T) {
	n := Notification{PspReference: "QFQTPCQ8HXSKGK82", OriginalReference: "NC6HT9CRT65ZGN82", MerchantAccountCode: "TestMerchantECOM", MerchantReference: "refund-ord-42",
		Amount: adyenAmountJSON{Currency: "EUR", Value: 500}, EventCode: "REFUND", Success: "true"}
	for _, c := range []struct{ success, original, want string }{
		{"true", "NC6HT9CRT65ZGN82", "8qggogMJkFS6PZT6PUCGZRd6o+1r/LXmbq5lWWgNJdQ="},
		{"false", "NC6HT9CRT65ZGN82", "5wiMLnzbzXYW+CUzNzjIkqv8soSBSC7Oo03sQCS4VzI="},
		{"true", "", "6OuSFfqzotZ3dIsnfEyzE05yc93v/WEgHR63IqRtpGo="},
	} {
		n.Success, n.OriginalReference = c.success, c.original
		if got := n.Sign(DefaultWebhookHMAC); got != c.want {
			t.Errorf("success %s, original %q: signature %q; want %q", c.success, c.original, got, c.want)
		}
	}
}

// A webhook URL off this machine, or not http, is refused at start; so
// is a webhook on a wire that has none.
func TestWebhookOptionsAreChecked(t *testing.T) {
	for _, o := range []Options{
		{Profile: providers.Builtin("adyen"), Webhook: "http://example.com/hook"},
		{Profile: providers.Builtin("adyen"), Webhook: "ftp://127.0.0.1/hook"},
		{Profile: providers.Builtin("adyen"), Webhook: "http://127.0.0.1:1/h", WebhookHMAC: "xyz"},
		{Profile: providers.Builtin("adyen"), Webhook: "http://127.0.0.1:1/h", WebhookFaults: []string{"sometimes"}},
		{Profile: providers.Builtin("paypal"), Webhook: "http://127.0.0.1:1/h"},
		{Profile: providers.Builtin("adyen"), WebhookFaults: []string{"lost"}},
		{Wire: "stipe"},
		{Profile: providers.Builtin("square"), IntentField: "metadata[intent]"},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v was accepted", o)
		}
	}
}

// The banner names the wire's API where it is not Stripe's, and where
// its webhooks go.
func TestBannerNamesTheWire(t *testing.T) {
	srv, err := New(Options{Profile: providers.Builtin("adyen"), Webhook: "http://127.0.0.1:9/hooks"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Release()
	b := Banner(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, srv, 0)
	for _, want := range []string{"adyen's API: POST /checkout/v71/payments/{paymentPspReference}/refunds", "REFUND notification to http://127.0.0.1:9/hooks", "link creates with reference"} {
		if !strings.Contains(b, want) {
			t.Errorf("the banner lacks %q:\n%s", want, b)
		}
	}
}

// A session served on Square's and Checkout.com's wires, paged lists
// included, replays to the same session: the wires log their reads in
// the words a replay reads back.
func TestWireSessionsReplay(t *testing.T) {
	for _, wire := range []string{WireSquare, WireCheckout} {
		t.Run(wire, func(t *testing.T) {
			g := newRig(t, Options{Profile: providers.Builtin(wire), Faults: []missions.Fixture{missions.Success, missions.PendingFixture, missions.Success}})
			wc := wireCases[slices.IndexFunc(wireCases, func(c wireCase) bool { return c.wire == wire })]
			for i := range 3 {
				if a := g.onWire(wc.create("http://wire", "k-"+itoa(int64(i)), 4500)); a.status != wc.created {
					t.Fatalf("create %d: %d %s", i, a.status, a.body)
				}
			}
			reads := []*http.Request{wc.read("http://wire", "x")}
			if wire == WireSquare {
				first := g.onWire(authed(jsonReq("GET", "http://wire/v2/refunds?limit=1", ""), "Bearer EAAA_test"))
				var page struct {
					Refunds []squareRefundJSON
					Cursor  string
				}
				decodeInto(t, first.body, &page)
				if len(page.Refunds) != 1 || page.Cursor == "" {
					t.Fatalf("the first page: %s", first.body)
				}
				reads = append(reads, authed(jsonReq("GET", "http://wire/v2/refunds?limit=2&cursor="+page.Cursor, ""), "Bearer EAAA_test"))
			}
			for _, r := range reads {
				if a := g.onWire(r); a.status != 200 && a.status != 404 {
					t.Fatalf("a read: %d %s", a.status, a.body)
				}
			}
			s := g.srv.Finish()
			again, err := Replay(s)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal(s)
			b, _ := json.Marshal(again)
			if string(a) != string(b) {
				t.Fatalf("the replay differs:\n%s\n%s", a, b)
			}
		})
	}
}

func authed(r *http.Request, auth string) *http.Request {
	r.Header.Set("Authorization", auth)
	return r
}
