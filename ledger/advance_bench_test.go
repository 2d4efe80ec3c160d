package ledger

import (
	"fmt"
	"testing"
)

// Advance on a ledger holding 10 objects beside one holding 10,000, in one
// run, for the due-time queue and for the tick-by-tick reference it
// replaced:
//
//	go test -run=^$ -bench=Advance -benchmem ./ledger/
//
// Each ledger holds n committed objects and n saved records, made one a
// tick as a run makes them, that expire far in the future at n different
// ticks; and one pending object that resolves at every tick (it is put
// back after each), so each Advance(1) has one change to make: the clock
// costs what changes, not what exists.

func fillAdvance(n int, submit func(Request, Execution) Result, advance func(int)) {
	for i := range n {
		submit(Request{Intent: "a", Key: fmt.Sprintf("k%d", i), Digest: "d"}, Execution{Kind: Commit})
		advance(1)
	}
}

func BenchmarkAdvance(b *testing.B) {
	cfg := Config{Profile: testV1, Retention: 1 << 40}
	for _, delay := range []int{1, 3, 100} {
		benchAdvance(b, cfg, delay)
	}
}

// benchAdvance: the pending object each op puts back resolves delay ticks
// later: at 1 and 3 its work waits in near; at 100, beyond
// its reach, in the heap among the n expiries.
func benchAdvance(b *testing.B, cfg Config, delay int) {
	pending := Execution{Kind: CommitPending, Delay: delay, Terminal: Succeeded}
	for _, n := range []int{10, 10000} {
		b.Run(fmt.Sprintf("queue/due-in-%d/%d-objects", delay, n), func(b *testing.B) {
			l, _ := New(cfg)
			fillAdvance(n, l.Submit, func(t int) { l.Advance(t) })
			var changes []Change
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i++; i%1024 == 0 {
					// Keep the ledger's size steady: let the pending
					// objects land, then drop them.
					changes = l.AdvanceInto(changes[:0], delay)
					l.objects = l.objects[:n]
				}
				l.Submit(Request{Intent: "b", Digest: "d"}, pending)
				changes = l.AdvanceInto(changes[:0], 1)
			}
		})
		b.Run(fmt.Sprintf("reference/due-in-%d/%d-objects", delay, n), func(b *testing.B) {
			r, _ := newRef(cfg)
			fillAdvance(n, r.Submit, func(t int) { r.Advance(t) })
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i++; i%1024 == 0 {
					r.Advance(delay)
					r.objects = r.objects[:n]
				}
				r.Submit(Request{Intent: "b", Digest: "d"}, pending)
				r.Advance(1)
			}
		})
	}
}
