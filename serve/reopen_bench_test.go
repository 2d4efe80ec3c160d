package serve

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkReopen: serve --db reopened on a log of 16,000 refunds, with
// and without 160 lists logged among them (a list of 100 after every 100
// creates). A reopen replays the log; a logged list is replayed at the
// cost of its page, so the two take about as long (issue 33's finding:
// 2.2 s with the lists against 0.34 s without, when a list read every
// refund). Run with:
//
//	go test -run '^$' -bench BenchmarkReopen -benchtime 5x ./serve/
func BenchmarkReopen(b *testing.B) {
	dir := b.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		// Made in memory, so that 16,000 synced writes take seconds; a
		// reopen reads the file the same wherever it is.
		if d, err := os.MkdirTemp("/dev/shm", "replaylab-bench-"); err == nil {
			dir = d
			b.Cleanup(func() { os.RemoveAll(d) })
		}
	}
	for _, lists := range []bool{false, true} {
		name := "16k-refunds"
		if lists {
			name += "-160-lists"
		}
		path := filepath.Join(dir, name+".db")
		srv, _, err := Open(Options{}, path)
		if err != nil {
			b.Fatal(err)
		}
		do := func(method, target, body, key string) {
			req := httptest.NewRequest(method, target, strings.NewReader(body))
			req.SetBasicAuth("sk_test_reopen", "")
			if body != "" {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Idempotency-Key", key)
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("%s %s: %d %s", method, target, rec.Code, rec.Body)
			}
		}
		for i := range 16_000 {
			form := url.Values{"amount": {"100"}, "charge": {fmt.Sprintf("ch_%d", i%1000)}, "metadata[intent]": {fmt.Sprintf("intent-%d", i)}}
			do(http.MethodPost, "/v1/refunds", form.Encode(), fmt.Sprintf("key-%d", i))
			if lists && i%100 == 99 {
				do(http.MethodGet, "/v1/refunds?limit=100", "", "")
			}
		}
		srv.Release()
		srv.Close()
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				s, rec, err := Open(Options{}, path)
				if err != nil {
					b.Fatal(err)
				}
				if rec.Refunds != 16_000 {
					b.Fatalf("reopened with %d refunds", rec.Refunds)
				}
				s.Release()
				s.Close()
			}
		})
	}
}
