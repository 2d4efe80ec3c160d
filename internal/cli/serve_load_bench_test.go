package cli

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/replaylab/replaylab/serve"
)

// BenchmarkSlowBodies drives `replaylab serve --mcp`, in its own
// process, with 5,000 connections that each send a request's headers
// and most of a body as large as its path takes, then stall, while a
// probe client makes a create every 10 ms over one kept-alive
// connection, the attack from a process of its own at nice 10. It reports serve's peak resident memory (peak-RSS-MiB),
// the probe's creates' latency (probe-p50-ms, probe-p99-ms,
// probe-max-ms) and how many of the stalled connections serve cut
// (cut-conns). One sub-benchmark per path; run with -benchtime=1x:
//
//	go test -run '^$' -bench BenchmarkSlowBodies -benchtime=1x ./internal/cli
func BenchmarkSlowBodies(b *testing.B) {
	const conns = 5000
	paths := []struct {
		name, path, ctype string
		declared, sent    int
	}{
		{"REST", "/v1/refunds", "application/x-www-form-urlencoded", serve.MaxBodyBytes, 500_000},
		{"MCP", serve.MCPPath, "application/json", serve.MaxMCPBody, 3_500_000},
	}
	for _, p := range paths {
		b.Run(p.name, func(b *testing.B) {
			for range b.N {
				c := startServe(b, "--mcp")
				addr := strings.TrimPrefix(c.url, "http://")

				stop := make(chan struct{})
				var probeWG sync.WaitGroup
				var lat []time.Duration
				var probeErr atomic.Value
				probeWG.Add(1)
				go func() {
					defer probeWG.Done()
					client := &http.Client{Timeout: 10 * time.Second}
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						case <-time.After(10 * time.Millisecond):
						}
						form := url.Values{"charge": {"ch_probe"}, "amount": {"100"}, "metadata[intent]": {"probe-" + strconv.Itoa(i)}}
						req, _ := http.NewRequest("POST", c.url+"/v1/refunds", strings.NewReader(form.Encode()))
						req.SetBasicAuth("sk_test_probe", "")
						req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
						req.Header.Set("Idempotency-Key", "probe-"+strconv.Itoa(i))
						t0 := time.Now()
						resp, err := client.Do(req)
						if err != nil {
							probeErr.Store(err)
							return
						}
						answer, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if resp.StatusCode != 200 {
							probeErr.Store(fmt.Errorf("probe create %d: status %d: %s", i, resp.StatusCode, answer))
							return
						}
						lat = append(lat, time.Since(t0))
					}
				}()

				// The attack, from a process of its own at a lower
				// priority: a real attacker does not take serve's CPU, and
				// its 5,000 goroutines would otherwise queue the probe's
				// own in this process's scheduler.
				atk := exec.Command(os.Args[0], "-test.run=^$")
				atk.Env = append(os.Environ(), "REPLAYLAB_ATTACK="+strings.Join([]string{addr, p.path, p.ctype, strconv.Itoa(p.declared), strconv.Itoa(p.sent), strconv.Itoa(conns)}, "\x1f"))
				atk.Stderr = os.Stderr
				stdin, _ := atk.StdinPipe()
				stdout, _ := atk.StdoutPipe()
				if err := atk.Start(); err != nil {
					b.Fatal(err)
				}
				_ = syscall.Setpriority(syscall.PRIO_PROCESS, atk.Process.Pid, 10)
				lines := bufio.NewScanner(stdout)
				if !lines.Scan() || lines.Text() != "open" {
					b.Fatalf("the attacker did not open its connections: %q", lines.Text())
				}
				time.Sleep(2 * time.Second)
				peak := peakRSS(b, c.cmd.Process.Pid)
				close(stop)
				probeWG.Wait()
				_ = stdin.Close()
				var cut int
				if lines.Scan() {
					cut, _ = strconv.Atoi(lines.Text())
				}
				_ = atk.Wait()
				if err, _ := probeErr.Load().(error); err != nil {
					b.Fatal(err)
				}
				slices.Sort(lat)
				if len(lat) == 0 {
					b.Fatal("the probe made no create")
				}
				ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
				b.ReportMetric(peak, "peak-RSS-MiB")
				b.ReportMetric(ms(lat[len(lat)/2]), "probe-p50-ms")
				b.ReportMetric(ms(lat[len(lat)*99/100]), "probe-p99-ms")
				b.ReportMetric(ms(lat[len(lat)-1]), "probe-max-ms")
				b.ReportMetric(float64(len(lat)), "probe-creates")
				b.ReportMetric(float64(cut), "cut-conns")
				_ = c.cmd.Process.Signal(sigterm)
				c.wait(b)
			}
		})
	}
}

func init() {
	if a := os.Getenv("REPLAYLAB_ATTACK"); a != "" {
		os.Exit(attack(strings.Split(a, "\x1f")))
	}
}

// attack opens the connections BenchmarkSlowBodies asks for (address,
// path, content type, declared length, bytes sent, connections): each
// sends its headers and its bytes, then stalls. It prints "open" once all
// are open, and, when its standard input closes, how many serve cut.
func attack(args []string) int {
	addr, path, ctype := args[0], args[1], args[2]
	declared, _ := strconv.Atoi(args[3])
	sent, _ := strconv.Atoi(args[4])
	conns, _ := strconv.Atoi(args[5])
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk_test_slow\r\nContent-Type: %s\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", path, ctype, declared)
	body := []byte(head + strings.Repeat("a", sent))
	var cut atomic.Int64
	var open, held sync.WaitGroup
	var next atomic.Int64
	var mu sync.Mutex
	var all []net.Conn
	for range 64 {
		open.Add(1)
		go func() {
			defer open.Done()
			for next.Add(1) <= int64(conns) {
				nc, err := net.Dial("tcp", addr)
				if err != nil {
					cut.Add(1)
					continue
				}
				mu.Lock()
				all = append(all, nc)
				mu.Unlock()
				held.Add(1)
				go func() {
					defer held.Done()
					_ = nc.SetWriteDeadline(time.Now().Add(2 * time.Second))
					_, _ = nc.Write(body)
					// Stall: an answer or a close means serve cut it.
					var one [1]byte
					if _, err := nc.Read(one[:]); err == nil || !isClosedByUs(err) {
						cut.Add(1)
					}
				}()
			}
		}()
	}
	open.Wait()
	fmt.Println("open")
	_, _ = io.Copy(io.Discard, os.Stdin)
	mu.Lock()
	for _, nc := range all {
		_ = nc.Close()
	}
	mu.Unlock()
	held.Wait()
	fmt.Println(cut.Load())
	return 0
}

// isClosedByUs: the read ended because the benchmark closed the
// connection itself at its end.
func isClosedByUs(err error) bool {
	return strings.Contains(err.Error(), "use of closed network connection")
}
