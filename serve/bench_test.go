package serve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// The load benchmarks: a stable-key client sends refund creates over
// loopback, one intent after another, each intent under its own key,
// against the provider, and against a bare net/http handler that parses
// the same form, inserts the key into a map and answers a small JSON body.
// Run them in one go, beside each other:
//
//	go test -run '^$' -bench 'Load' -benchtime 20000x ./serve/
//
// Each reports req/s; the ratio of the two is the provider's cost.

// bareHandler is the baseline: one map insert per request.
func bareHandler() http.Handler {
	var mu sync.Mutex
	seen := map[string]string{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		key := r.Header.Get("Idempotency-Key")
		mu.Lock()
		seen[key] = r.PostForm.Get("metadata[intent]")
		mu.Unlock()
		body := []byte(`{"id":"re_1","object":"refund","status":"succeeded"}` + "\n")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
}

func loadClient(url string) (*http.Client, func(b *testing.B, n int)) {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	return c, func(b *testing.B, n int) {
		intent := "refund-" + strconv.Itoa(n)
		form := "charge=ch_" + strconv.Itoa(n) + "&amount=4500&metadata%5Bintent%5D=" + intent
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/refunds", strings.NewReader(form))
		req.Header.Set("Authorization", "Bearer sk_test_load")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Idempotency-Key", "key-"+intent)
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

func runLoad(b *testing.B, h http.Handler, parallel bool) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	_, send := loadClient(srv.URL)
	b.ReportAllocs()
	b.ResetTimer()
	if parallel {
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				send(b, int(n.Add(1)))
			}
		})
	} else {
		for i := 0; i < b.N; i++ {
			send(b, i)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func BenchmarkLoad(b *testing.B) {
	for _, mode := range []struct {
		name     string
		parallel bool
	}{{"one-client", false}, {"parallel", true}} {
		b.Run("bare/"+mode.name, func(b *testing.B) { runLoad(b, bareHandler(), mode.parallel) })
		b.Run("provider/"+mode.name, func(b *testing.B) {
			s, err := New(Options{})
			if err != nil {
				b.Fatal(err)
			}
			runLoad(b, s, mode.parallel)
		})
	}
}

// The durable benchmarks: the same stable-key client against serve --db,
// beside a bare handler that inserts one row into a bbolt database of its
// own in one synced transaction per request. Run them beside each other:
//
//	go test -run '^$' -bench 'Durable' -benchtime 2000x ./serve/
func BenchmarkDurable(b *testing.B) {
	b.Run("bare-tx", func(b *testing.B) {
		db, err := bolt.Open(filepath.Join(b.TempDir(), "bare.db"), 0o600, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("rows")); return err }); err != nil {
			b.Fatal(err)
		}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := r.ParseForm(); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			key := r.Header.Get("Idempotency-Key")
			err := db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket([]byte("rows")).Put([]byte(key), []byte(r.PostForm.Get("metadata[intent]")))
			})
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			body := []byte(`{"id":"re_1","object":"refund","status":"succeeded"}` + "\n")
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		})
		runLoad(b, h, false)
	})
	b.Run("provider", func(b *testing.B) {
		s, _, err := Open(Options{}, filepath.Join(b.TempDir(), "serve.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		runLoad(b, s, false)
	})
}
