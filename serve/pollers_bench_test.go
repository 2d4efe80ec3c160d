package serve

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkCreateBehindListPollers: on a ledger of 100,000 refunds, one
// client sends creates one after another while four others list refunds
// as fast as they can (the newest page of 10, and one charge's), all over
// loopback (a plain http.Server, as the commits before the gate had). It reports each create's
// latency (create-p50-ms, create-p99-ms, create-max-ms; issue 33's goal:
// p99 at most 50 ms) and the lists answered per second. Run with:
//
//	go test -run '^$' -bench BenchmarkCreateBehindListPollers -benchtime 2000x ./serve/
//
// It builds its ledger through the API alone, so that it runs on the
// commits before lists were indexed, as the baseline.
func BenchmarkCreateBehindListPollers(b *testing.B) {
	srv, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	post := func(h http.Handler, i int) int {
		form := url.Values{"amount": {"100"}, "charge": {fmt.Sprintf("ch_%d", i%1000)}, "metadata[intent]": {fmt.Sprintf("intent-%d", i)}}
		req := httptest.NewRequest(http.MethodPost, "/v1/refunds", strings.NewReader(form.Encode()))
		req.SetBasicAuth("sk_test_pollers", "")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Idempotency-Key", fmt.Sprintf("key-%d", i))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	const n = 100_000
	for i := range n {
		if code := post(srv, i); code != http.StatusOK {
			b.Fatalf("create %d: %d", i, code)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	defer hs.Close()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}, Timeout: time.Minute}
	get := func(path string) error {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.SetBasicAuth("sk_test_pollers", "")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %d", path, resp.StatusCode)
		}
		return nil
	}
	stop := make(chan struct{})
	var lists atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/v1/refunds?limit=10"
			if p%2 == 1 {
				path = fmt.Sprintf("/v1/refunds?limit=10&charge=ch_%d", p)
			}
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := get(path); err != nil {
					failed.Store(err)
					return
				}
				lists.Add(1)
			}
		}()
	}
	took := make([]time.Duration, 0, b.N)
	form := func(i int) string {
		return url.Values{"amount": {"100"}, "charge": {"ch_new"}, "metadata[intent]": {fmt.Sprintf("new-%d", i)}}.Encode()
	}
	start := time.Now()
	i := 0
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/refunds", strings.NewReader(form(i)))
		req.SetBasicAuth("sk_test_pollers", "")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Idempotency-Key", fmt.Sprintf("new-key-%d", i))
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took = append(took, time.Since(t0))
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("create: %d", resp.StatusCode)
		}
		i++
	}
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	slices.Sort(took)
	at := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.5), "create-p50-ms")
	b.ReportMetric(at(0.99), "create-p99-ms")
	b.ReportMetric(at(1), "create-max-ms")
	b.ReportMetric(float64(lists.Load())/elapsed.Seconds(), "lists/s")
}
