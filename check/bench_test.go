package check_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/replaylab/replaylab/check"
	"github.com/replaylab/replaylab/export"
)

// genHistory is a history made on the fly, so that what the input takes
// in memory does not count: lines lines over intents intents, each intent
// sending under its one key, every fifth attempt a timeout, and one
// record per intent at the end.
type genHistory struct {
	lines, intents, n int
	buf               bytes.Buffer
}

func (g *genHistory) Read(p []byte) (int, error) {
	var line []byte
	for g.buf.Len() < len(p) && g.n < g.lines {
		g.n++
		line = line[:0]
		if g.n > g.lines-g.intents {
			i := g.n - (g.lines - g.intents) - 1
			line = append(line, `{"type":"record","intent":"refund-`...)
			line = pad(line, i, 6)
			line = append(line, `","key":"key-`...)
			line = pad(line, i, 6)
			line = append(line, `","object":"re_`...)
			line = pad(line, i, 6)
			line = append(line, `","status":"succeeded"}`+"\n"...)
			g.buf.Write(line)
			continue
		}
		i := g.n % g.intents
		outcome := "fail"
		switch {
		case g.n%5 == 0:
			outcome = "info"
		case g.n > g.lines-2*g.intents:
			outcome = "ok"
		}
		line = attempt(line, i, 6, outcome)
		g.buf.Write(line)
	}
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	return g.buf.Read(p)
}

// attempt appends the attempt line of intent i (and key i), numbered to
// width digits, with its outcome.
func attempt(line []byte, i, width int, outcome string) []byte {
	line = append(line, `{"type":"attempt","intent":"refund-`...)
	line = pad(line, i, width)
	line = append(line, `","key":"key-`...)
	line = pad(line, i, width)
	line = append(line, `","digest":"6d1f0c2a9b3e4f57","start":"2026-12-01T10:00:00Z","end":"2026-12-01T10:00:01Z","outcome":"`...)
	line = append(line, outcome...)
	return append(line, `"}`+"\n"...)
}

// pad appends n with leading zeros to width digits.
func pad(b []byte, n, width int) []byte {
	s := strconv.Itoa(n)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// BenchmarkHistoryGenerate is what making the lines costs alone, to read
// the two below without it.
func BenchmarkHistoryGenerate(b *testing.B) {
	for i := 0; i < b.N; i++ {
		n, _ := io.Copy(io.Discard, &genHistory{lines: 1_000_000, intents: 10000})
		if n == 0 {
			b.Fatal("nothing made")
		}
	}
}

// peakHeap samples the heap in use while f runs and returns the most.
func peakHeap(f func()) uint64 {
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	<-done
	return peak.Load()
}

// wideHistory is lines lines, each for an intent of its own under a key of
// its own: what is kept grows with every line, the most check keeps for a
// history of that length. Every third is a record, of an intent whose
// attempt is not in the history (an orphan, to keep objects in play too).
type wideHistory struct {
	lines, n int
	buf      bytes.Buffer
}

func (g *wideHistory) Read(p []byte) (int, error) {
	var line []byte
	for g.buf.Len() < len(p) && g.n < g.lines {
		g.n++
		line = line[:0]
		i := g.n
		if g.n%3 == 0 {
			line = append(line, `{"type":"record","intent":"refund-`...)
			line = pad(line, i, 7)
			line = append(line, `","key":"key-`...)
			line = pad(line, i, 7)
			line = append(line, `","object":"re_`...)
			line = pad(line, i, 7)
			line = append(line, `","status":"succeeded","start":"2026-12-01T10:00:02Z"}`+"\n"...)
		} else {
			outcome := "ok"
			if g.n%5 == 0 {
				outcome = "info"
			}
			line = attempt(line, i, 7, outcome)
		}
		g.buf.Write(line)
	}
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	return g.buf.Read(p)
}

// BenchmarkHistoryWide is check on 1 M lines over 1 M intents (and
// 670,000 keys, 330,000 objects), beside decoding the same lines alone: the goal is at
// most 300 MB of heap at its peak and at most twice the decoding time.
//
//	go test -run '^$' -bench 'HistoryWide' -benchtime 1x ./check/
func BenchmarkHistoryWide(b *testing.B) {
	const lines = 1_000_000
	b.Run("decode-only", func(b *testing.B) {
		var peak uint64
		for b.Loop() {
			peak = max(peak, peakHeap(func() {
				dec := json.NewDecoder(&wideHistory{lines: lines})
				n := 0
				for {
					var l export.HistoryLine
					if err := dec.Decode(&l); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != lines {
					b.Fatalf("%d lines", n)
				}
			}))
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	})
	b.Run("check", func(b *testing.B) {
		defer check.LimitMemory()() // as the command does
		var peak uint64
		for b.Loop() {
			peak = max(peak, peakHeap(func() {
				rep, err := check.Check("wide.jsonl", &wideHistory{lines: lines})
				if err != nil {
					b.Fatal(err)
				}
				if err := rep.WriteText(io.Discard, "wide.jsonl"); err != nil {
					b.Fatal(err)
				}
				if rep.Lines != lines || rep.Intents != lines {
					b.Fatalf("%d lines, %d intents", rep.Lines, rep.Intents)
				}
			}))
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	})
}

// The check benchmark, beside a baseline that only decodes each line into
// the same struct, on the same generated history:
//
//	go test -run '^$' -bench 'History' -benchtime 1x ./check/
//
// check reports the peak heap in use for 1 M and 2 M lines over the same
// 10,000 intents: it grows with intents, not lines.
func BenchmarkHistory(b *testing.B) {
	for _, size := range []struct{ lines, intents int }{{1_000_000, 10000}, {2_000_000, 10000}, {1_000_000, 1_000_000}} {
		lines, intents := size.lines, size.intents
		name := fmt.Sprintf("%dM", lines/1_000_000)
		if intents == lines {
			name += "-each-its-own-intent"
		}
		b.Run("decode-only/"+name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				dec := json.NewDecoder(&genHistory{lines: lines, intents: intents})
				n := 0
				for {
					var l export.HistoryLine
					if err := dec.Decode(&l); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != lines {
					b.Fatalf("%d lines", n)
				}
			}
			b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
		b.Run("check/"+name, func(b *testing.B) {
			defer check.LimitMemory()() // as the command does
			var peak uint64
			for i := 0; i < b.N; i++ {
				peak = max(peak, peakHeap(func() {
					// What replaylab check does: check, then write the
					// report an anomaly at a time.
					rep, err := check.Check("gen.jsonl", &genHistory{lines: lines, intents: intents})
					if err != nil {
						b.Fatal(err)
					}
					if err := rep.WriteText(io.Discard, "gen.jsonl"); err != nil {
						b.Fatal(err)
					}
					if rep.Lines != lines || rep.Intents != intents {
						b.Fatalf("%d lines, %d intents", rep.Lines, rep.Intents)
					}
				}))
			}
			b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}
