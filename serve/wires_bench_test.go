package serve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/providers"
)

// BenchmarkWireCreate: one client sends refund creates over loopback, a
// new intent under a new key each time, to each wire, beside the bare
// net/http handler of BenchmarkLoad. Run them in one go:
//
//	go test -run '^$' -bench 'WireCreate' -benchtime 20000x ./serve/
//
// Each wire's cost is its req/s beside Stripe's.
func BenchmarkWireCreate(b *testing.B) {
	type wireBench struct {
		name string
		h    func(b *testing.B) http.Handler
		req  func(base string, n int) *http.Request
		ok   int
	}
	provider := func(wire string) func(b *testing.B) http.Handler {
		return func(b *testing.B) http.Handler {
			o := Options{}
			if wire != WireStripe {
				o.Profile = providers.Builtin(wire)
			}
			s, err := New(o)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(s.Release)
			return s
		}
	}
	stripeReq := func(base string, n int) *http.Request {
		intent := "refund-" + strconv.Itoa(n)
		r, _ := http.NewRequest(http.MethodPost, base+"/v1/refunds", strings.NewReader("charge=ch_"+strconv.Itoa(n)+"&amount=4500&metadata%5Bintent%5D="+intent))
		r.Header.Set("Authorization", "Bearer sk_test_load")
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Idempotency-Key", "key-"+intent)
		return r
	}
	jsonReq := func(path, key, auth, body string) func(base string, n int) *http.Request {
		return func(base string, n int) *http.Request {
			s := strconv.Itoa(n)
			r, _ := http.NewRequest(http.MethodPost, base+strings.ReplaceAll(path, "N", s), strings.NewReader(strings.ReplaceAll(body, "N", s)))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Authorization", auth)
			if key != "" {
				r.Header.Set(key, "key-refund-"+s)
			}
			return r
		}
	}
	adyenReq := func(base string, n int) *http.Request {
		r := jsonReq("/checkout/v71/payments/PSPN/refunds", "Idempotency-Key", "", `{"merchantAccount":"ShopECOM","reference":"refund-N","amount":{"currency":"EUR","value":4500}}`)(base, n)
		r.Header.Del("Authorization")
		r.Header.Set("X-API-Key", "AQE_test")
		return r
	}
	for _, wb := range []wireBench{
		{"bare", func(*testing.B) http.Handler { return bareHandler() }, stripeReq, 200},
		{WireStripe, provider(WireStripe), stripeReq, 200},
		{WireAdyen, provider(WireAdyen), adyenReq, 201},
		{WirePayPal, provider(WirePayPal), jsonReq("/v2/payments/captures/CAPN/refund", "PayPal-Request-Id", "Bearer "+paypalTokenPrefix+"load", `{"custom_id":"refund-N","amount":{"value":"45.00","currency_code":"USD"}}`), 201},
		{WireSquare, provider(WireSquare), jsonReq("/v2/refunds", "", "Bearer EAAA_load", `{"idempotency_key":"key-refund-N","payment_id":"PAYN","reason":"refund-N","amount_money":{"amount":4500,"currency":"USD"}}`), 200},
		{WireCheckout, provider(WireCheckout), jsonReq("/payments/pay_N/refunds", "Cko-Idempotency-Key", "Bearer sk_sbox_load", `{"reference":"refund-N","amount":4500}`), 202},
	} {
		b.Run(wb.name, func(b *testing.B) {
			srv := httptest.NewServer(wb.h(b))
			defer srv.Close()
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				resp, err := c.Do(wb.req(srv.URL, i))
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != wb.ok {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
