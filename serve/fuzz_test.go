package serve

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/providers"
)

// FuzzDecodeRefund: any form either is refused with a Stripe-shaped
// client error, or decodes to parameters that the payload the ledger keeps
// gives back whole.
func FuzzDecodeRefund(f *testing.F) {
	f.Add("charge=ch_1042&amount=4500&metadata%5Bintent%5D=refund-1042")
	f.Add("payment_intent=pi_1&amount=1&currency=usd&reason=duplicate&metadata%5Ba%5D=&expand%5B%5D=charge")
	f.Add("charge=ch_1&amount=99999999&customer=cus_1&reverse_transfer=true&metadata%5B%5D=x")
	f.Add("amount=-1&charge=")
	f.Add("charge=a&charge=b&amount=1")
	f.Add("charge=ch_%F0%9F%98%80%25%26%3D%2B%3B%23+x&amount=1&metadata%5Bn%C3%A9%5D=%E2%82%AC%0A")
	f.Fuzz(func(t *testing.T, body string) {
		form, err := url.ParseQuery(body)
		if err != nil {
			return
		}
		p, e := decodeRefund(form)
		if e != nil {
			if w := e.stripe(); w.Status < 400 || w.Status > 499 || w.Type == "" || w.Message == "" {
				t.Fatalf("refusal %+v is not a Stripe-shaped client error", e)
			}
			return
		}
		back := parsePayload(encodeForm(p.digested(true)))
		if !maps.Equal(back.bound(), p.bound()) || !maps.Equal(back.Metadata, p.Metadata) {
			t.Fatalf("the payload %q gives back %+v, not %+v", encodeForm(p.digested(true)), back, p)
		}
		if p.Amount < 1 || (p.Charge == "" && p.PaymentIntent == "") {
			t.Fatalf("accepted %q without an amount or a charge", body)
		}
	})
}

// FuzzCreate: a create on any wire, with any body and key, gets a
// refund or an error in that provider's shape, never a panic, and only a
// success makes an effect. wire picks the wire (Wires(), modulo).
func FuzzCreate(f *testing.F) {
	f.Add(uint8(0), "charge=ch_1042&amount=4500&metadata%5Bintent%5D=refund-1042", "k1", "application/x-www-form-urlencoded")
	f.Add(uint8(0), "charge=%zz", "", "application/x-www-form-urlencoded")
	f.Add(uint8(0), `{"charge":"ch_1"}`, "k", "application/json")
	f.Add(uint8(0), "charge=ch_1&amount=1&metadata%5Bintent%5D=i", strings.Repeat("k", 300), "")
	f.Add(uint8(1), `{"merchantAccount":"M","reference":"refund-1","amount":{"currency":"EUR","value":4500}}`, "k1", "application/json")
	f.Add(uint8(1), `{"merchantAccount":"M","amount":{"currency":"EURO","value":1e400}}`, "", "application/json")
	f.Add(uint8(2), `{"custom_id":"refund-1","amount":{"value":"45.00","currency_code":"USD"}}`, "k1", "application/json")
	f.Add(uint8(2), `{"custom_id":"r","amount":{"value":"45.001","currency_code":"USD"}}`, "k1", "")
	f.Add(uint8(3), `{"idempotency_key":"k1","payment_id":"PAY1","reason":"refund-1","amount_money":{"amount":4500,"currency":"USD"}}`, "", "application/json")
	f.Add(uint8(3), `{"idempotency_key":"","payment_id":"PAY1","amount_money":{"amount":"4500"}}`, "", "application/json")
	f.Add(uint8(4), `{"reference":"refund-1","amount":4500,"metadata":{"a":"b"}}`, "k1", "application/json")
	f.Add(uint8(4), `[1,2,3]`, "k1", "text/plain")
	f.Fuzz(func(t *testing.T, wireN uint8, body, key, ctype string) {
		wc := Wires()[int(wireN)%len(Wires())]
		o := Options{}
		if wc != WireStripe {
			o.Profile = providers.Builtin(wc)
		}
		srv, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Release()
		path := map[string]string{WireStripe: "/v1/refunds", WireAdyen: "/checkout/v71/payments/PSP1/refunds", WirePayPal: "/v2/payments/captures/CAP1/refund", WireSquare: "/v2/refunds", WireCheckout: "/payments/pay_1/refunds"}[wc]
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer sk_test_fuzz")
		req.Header.Set("X-API-Key", "AQE_fuzz")
		if ctype != "" {
			req.Header["Content-Type"] = []string{ctype}
		}
		if key != "" {
			req.Header[http.CanonicalHeaderKey(map[string]string{WireStripe: "Idempotency-Key", WireAdyen: "Idempotency-Key", WirePayPal: "PayPal-Request-Id", WireSquare: "X-Unused", WireCheckout: "Cko-Idempotency-Key"}[wc])] = []string{key}
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		s := srv.Finish()
		if rec.Code/100 == 2 {
			if s.Ledger.Effects != 1 {
				t.Fatalf("%s: a success (%d) left %d effects", wc, rec.Code, s.Ledger.Effects)
			}
			if wc == WireStripe {
				var r refundJSON
				if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.Object != "refund" {
					t.Fatalf("200 with %q", rec.Body)
				}
			}
			return
		}
		if s.Ledger.Effects != 0 || len(s.Ledger.Records) != 0 {
			t.Fatalf("%s: a refusal touched the ledger: %+v", wc, s.Ledger)
		}
		if !fuzzErrorShape(wc, rec.Body.Bytes()) {
			t.Fatalf("%s: %d with %q: not the provider's error shape", wc, rec.Code, rec.Body)
		}
	})
}

// fuzzErrorShape reports whether b is an error in wire's shape.
func fuzzErrorShape(wire string, b []byte) bool {
	switch wire {
	case WireStripe:
		var e struct {
			Error *apiError `json:"error"`
		}
		return json.Unmarshal(b, &e) == nil && e.Error != nil && e.Error.Type != "" && e.Error.Message != ""
	case WireAdyen:
		var e adyenError
		return json.Unmarshal(b, &e) == nil && e.Status >= 400 && e.ErrorCode != "" && e.Message != ""
	case WirePayPal:
		var e paypalError
		return json.Unmarshal(b, &e) == nil && e.Name != "" && len(e.Details) == 1
	case WireSquare:
		var e struct{ Errors []squareErr }
		return json.Unmarshal(b, &e) == nil && len(e.Errors) == 1 && e.Errors[0].Code != ""
	}
	var e struct {
		ErrorType string `json:"error_type"`
	}
	return len(b) == 0 || json.Unmarshal(b, &e) == nil && e.ErrorType != ""
}

// FuzzDecodeUpdate: any update form is refused with a Stripe-shaped
// client error, or decodes to changes that the session's record of the
// update (updatePayload) gives back whole, for any refund id.
func FuzzDecodeUpdate(f *testing.F) {
	f.Add("re_0001", "metadata%5Bticket%5D=T-9")
	f.Add("re_0001?x", "metadata=&metadata%5Bintent%5D=refund-1042")
	f.Add("re_%2F0001", "metadata%5Ba%5D=")
	f.Add("", "expand%5B%5D=charge")
	f.Fuzz(func(t *testing.T, id, body string) {
		form, err := url.ParseQuery(body)
		if err != nil {
			return
		}
		changes, e := decodeUpdate(form)
		if e != nil {
			if w := e.stripe(); w.Status < 400 || w.Status > 499 || w.Type == "" || w.Message == "" {
				t.Fatalf("refusal %+v is not a Stripe-shaped client error", e)
			}
			return
		}
		gotID, back, err := parseUpdatePayload(updatePayload(id, changes))
		if err != nil || gotID != id || !maps.Equal(back, changes) {
			t.Fatalf("update %q %v gives back %q %v (%v)", id, changes, gotID, back, err)
		}
	})
}
