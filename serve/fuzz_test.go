package serve

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
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

// FuzzCreate: a create with any body and key gets a refund or a
// Stripe-shaped error, never a panic, and only a success makes an effect.
func FuzzCreate(f *testing.F) {
	f.Add("charge=ch_1042&amount=4500&metadata%5Bintent%5D=refund-1042", "k1", "application/x-www-form-urlencoded")
	f.Add("charge=%zz", "", "application/x-www-form-urlencoded")
	f.Add(`{"charge":"ch_1"}`, "k", "application/json")
	f.Add("charge=ch_1&amount=1&metadata%5Bintent%5D=i", strings.Repeat("k", 300), "")
	f.Fuzz(func(t *testing.T, body, key, ctype string) {
		srv, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/v1/refunds", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer sk_test_fuzz")
		if ctype != "" {
			req.Header["Content-Type"] = []string{ctype}
		}
		if key != "" {
			req.Header["Idempotency-Key"] = []string{key}
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		s := srv.Finish()
		switch rec.Code {
		case http.StatusOK:
			var r refundJSON
			if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.Object != "refund" {
				t.Fatalf("200 with %q", rec.Body)
			}
			if s.Ledger.Effects != 1 {
				t.Fatalf("a success left %d effects", s.Ledger.Effects)
			}
		default:
			var e struct {
				Error *apiError `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == nil || e.Error.Type == "" || e.Error.Message == "" {
				t.Fatalf("%d with %q: not a Stripe-shaped error", rec.Code, rec.Body)
			}
			if s.Ledger.Effects != 0 || len(s.Ledger.Records) != 0 {
				t.Fatalf("a refusal touched the ledger: %+v", s.Ledger)
			}
		}
	})
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
