package serve

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkRefundHeap: the heap a refund that stands costs, at the
// largest legal size, with every character of one width (1 to 4 bytes in
// UTF-8): the limits count characters, so 4-byte ones make the largest
// refund in bytes. It reports KiB/refund and the create's form size, the
// figures docs/serve.md gives. Run with:
//
//	go test -run '^$' -bench BenchmarkRefundHeap -benchtime 500x ./serve/
func BenchmarkRefundHeap(b *testing.B) {
	for _, w := range []struct{ name, ch string }{{"ascii", "v"}, {"2-byte", "é"}, {"3-byte", "€"}, {"4-byte", "😀"}} {
		b.Run(w.name, func(b *testing.B) {
			srv, err := New(Options{})
			if err != nil {
				b.Fatal(err)
			}
			form := func(i int) string {
				v := url.Values{"charge": {strings.Repeat(w.ch, MaxString)}, "amount": {"99999999"}, "currency": {"usd"},
					"customer": {strings.Repeat(w.ch, MaxString)}, "reason": {"requested_by_customer"}}
				v.Set("metadata[intent]", "intent-"+strconv.Itoa(i))
				for j := range MaxMetadata - 1 {
					v.Set(fmt.Sprintf("metadata[%s%02d]", strings.Repeat(w.ch, MaxMetadataKey-2), j), strings.Repeat(w.ch, MaxMetadataValue))
				}
				return v.Encode()
			}
			create := func(i int) {
				req := httptest.NewRequest(http.MethodPost, "/v1/refunds", strings.NewReader(form(i)))
				req.SetBasicAuth("sk_test_heap", "")
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Idempotency-Key", "k"+strconv.Itoa(i))
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
			create(0)
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			i := 0
			for b.Loop() {
				i++
				create(i)
			}
			runtime.GC()
			runtime.ReadMemStats(&m1)
			b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/float64(i)/1024, "KiB/refund")
			b.ReportMetric(float64(len(form(1)))/1024, "form-KiB")
			runtime.KeepAlive(srv)
		})
	}
}
