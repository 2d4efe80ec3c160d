package cli

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/replaylab/replaylab/serve"
)

// BenchmarkServeMemory drives `replaylab serve`, in its own process, with
// 100,000 API requests of one kind at the largest sizes serve takes, then
// reads its session once through GET /_replaylab/session, and reports the
// process's peak resident memory (VmHWM) as peak-RSS-MiB, and, once it
// stopped (settled and printed its verdicts), its peak over its whole
// life as with-stop-MiB. Each kind is
// one sub-benchmark; run with -benchtime=1x:
//
//	go test -run '^$' -bench BenchmarkServeMemory -benchtime=1x ./internal/cli
//
// "refunds" is the one kind that adds state: every create is a new
// intent's refund, which the ledger keeps, as Stripe keeps a refund. It
// sends 10,000 (REPLAYLAB_REFUNDS sets another count), in ASCII and in
// 4-byte characters, the largest in bytes, and reports the peak over the
// count as KiB/refund. "1M reads" are a million GETs of refunds that do
// not exist, each id its own.
func BenchmarkServeMemory(b *testing.B) {
	const n = 100_000
	longID := "re_" + strings.Repeat("x", 64<<10)
	// wide is the largest legal create with every character ch: the
	// limits count characters, so 4-byte ones (😀) make the largest in
	// bytes.
	wide := func(intent, ch string) url.Values {
		v := url.Values{"charge": {strings.Repeat(ch, serve.MaxString)}, "amount": {"99999999"}, "currency": {"usd"},
			"customer": {strings.Repeat(ch, serve.MaxString)}, "reason": {"requested_by_customer"}}
		v.Set("metadata[intent]", intent)
		for i := range serve.MaxMetadata - 1 {
			v.Set(fmt.Sprintf("metadata[%s%02d]", strings.Repeat(ch, serve.MaxMetadataKey-2), i), strings.Repeat(ch, serve.MaxMetadataValue))
		}
		return v
	}
	maxMetadata := func(intent string) url.Values { return wide(intent, "x") }
	refunds := 10_000
	if v, err := strconv.Atoi(os.Getenv("REPLAYLAB_REFUNDS")); err == nil && v > 0 {
		refunds = v
	}
	key := func(i int) string { s := strconv.Itoa(i); return s + strings.Repeat("k", serve.MaxKeyLength-len(s)) }
	type request struct {
		method, path, key string
		body              url.Values
	}
	kinds := []struct {
		name  string
		count int
		req   func(i int) request
	}{
		{"lookups of 64KiB ids", n, func(i int) request { return request{method: "GET", path: "/v1/refunds/" + longID} }},
		{"lists with the longest query", n, func(i int) request {
			q := url.Values{"charge": {strings.Repeat("c", serve.MaxString)}, "metadata[intent]": {strings.Repeat("i", serve.MaxString)}, "limit": {"100"}}
			return request{method: "GET", path: "/v1/refunds?" + q.Encode()}
		}},
		{"refused creates of 60KB", n, func(i int) request {
			v := maxMetadata("refused")
			v.Set("metadata[note]", strings.Repeat("n", 60_000))
			return request{method: "POST", path: "/v1/refunds", key: key(i), body: v}
		}},
		{"replays of the largest create", n, func(i int) request {
			return request{method: "POST", path: "/v1/refunds", key: key(0), body: maxMetadata("replayed")}
		}},
		{"refunds", refunds, func(i int) request {
			return request{method: "POST", path: "/v1/refunds", key: key(i), body: maxMetadata("intent-" + strconv.Itoa(i))}
		}},
		{"refunds in 4-byte characters", refunds, func(i int) request {
			return request{method: "POST", path: "/v1/refunds", key: key(i), body: wide("intent-"+strconv.Itoa(i), "😀")}
		}},
		{"1M reads of refunds that do not exist", 1_000_000, func(i int) request {
			return request{method: "GET", path: "/v1/refunds/re_missing_" + strconv.Itoa(i)}
		}},
	}
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			for range b.N {
				c := startServe(b, "--retention", "24h")
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
				var next atomic.Int64
				var wg sync.WaitGroup
				var failed atomic.Value
				for range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							i := int(next.Add(1)) - 1
							if i >= k.count {
								return
							}
							r := k.req(i)
							var body io.Reader
							if r.body != nil {
								body = strings.NewReader(r.body.Encode())
							}
							req, _ := http.NewRequest(r.method, c.url+r.path, body)
							req.SetBasicAuth("sk_test_memory", "")
							if r.body != nil {
								req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
							}
							if r.key != "" {
								req.Header.Set("Idempotency-Key", r.key)
							}
							resp, err := client.Do(req)
							if err != nil {
								failed.Store(err)
								return
							}
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}()
				}
				wg.Wait()
				if err, _ := failed.Load().(error); err != nil {
					b.Fatal(err)
				}
				resp, err := http.Get(c.url + serve.ControlPrefix + "session")
				if err != nil {
					b.Fatal(err)
				}
				size, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				peak := peakRSS(b, c.cmd.Process.Pid)
				_ = c.cmd.Process.Signal(sigterm)
				c.wait(b)
				// Its whole life, the stop included: settling, the
				// verdicts and the report.
				life := float64(c.cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / 1024
				b.ReportMetric(peak, "peak-RSS-MiB")
				b.ReportMetric(life, "with-stop-MiB")
				b.ReportMetric(float64(size)/(1<<20), "session-MiB")
				if strings.HasPrefix(k.name, "refunds") {
					b.ReportMetric(peak/float64(k.count)*1024, "KiB/refund")
				}
			}
		})
	}
}

// peakRSS is the peak resident memory of process pid, in MiB.
func peakRSS(b *testing.B, pid int) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				b.Fatal(err)
			}
			return float64(kb) / 1024
		}
	}
	b.Fatal("no VmHWM in /proc/status")
	return 0
}
