package missions

import (
	"runtime"
	"testing"

	"github.com/replaylab/replaylab/ledger"
)

// The explorer's cost per attempt beside a bare map's, in one run:
//
//	go test -run=^$ -bench='Explore|BaselineMapAttempt' -benchmem ./missions/
//
// attempts/s and ns/attempt count every attempt the explorer plays (each
// child of each state, merged or new); allocs/attempt divides the
// allocations of the whole exploration by them.

func benchExplore(b *testing.B, id string, depth int, s Settings) {
	m, err := BuiltIn().Get(id)
	if err != nil {
		b.Fatal(err)
	}
	o := ExploreOptions{Depth: depth, MaxSchedules: 1 << 40, Settings: []Settings{s}, Alphabet: DefaultAlphabet(m)}
	var attempts int64
	var ms0, ms1 runtime.MemStats
	b.ReportAllocs()
	runtime.ReadMemStats(&ms0)
	for b.Loop() {
		x, err := Explore(m, o)
		if err != nil {
			b.Fatal(err)
		}
		attempts += x.Reports[0].Attempts
	}
	runtime.ReadMemStats(&ms1)
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(attempts)/sec, "attempts/s")
	b.ReportMetric(sec*1e9/float64(attempts), "ns/attempt")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(attempts), "allocs/attempt")
}

func BenchmarkExplore(b *testing.B) {
	m, _ := BuiltIn().Get("timeout-then-success")
	off, on := false, true
	naive, guarded := Naive, Guarded
	v1 := ledger.V1
	b.Run("naive-fresh-keys-depth-7", func(b *testing.B) {
		benchExplore(b, "timeout-then-success", 7, m.Settings(Overrides{StableKeys: &off, Policy: &naive, Contract: &v1}))
	})
	b.Run("guarded-stable-keys-depth-7", func(b *testing.B) {
		benchExplore(b, "timeout-then-success", 7, m.Settings(Overrides{StableKeys: &on, Policy: &guarded, Contract: &v1}))
	})
}

var mapSink int

// BenchmarkBaselineMapAttempt is the floor: one insert into and one lookup
// in a bare Go map per attempt.
func BenchmarkBaselineMapAttempt(b *testing.B) {
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = "ik_" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	m := make(map[string]int, 64)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%64 == 0 {
			clear(m)
		}
		k := keys[i%64]
		if _, ok := m[k]; !ok {
			m[k] = i
		}
		mapSink += m[k]
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "attempts/s")
}

// BenchmarkExploreAttempt is the explorer's hot path for one attempt, in
// isolation: copy a state, play one move on it, hash the result and look
// it up among the states seen. Storing a new distinct state is not in it
// (see BenchmarkExplore for whole runs).
func BenchmarkExploreAttempt(b *testing.B) {
	m, _ := BuiltIn().Get("timeout-then-success")
	for _, tc := range []struct {
		name   string
		stable bool
		p      Policy
	}{{"naive-fresh-keys", false, Naive}, {"guarded-stable-keys", true, Guarded}} {
		b.Run(tc.name, func(b *testing.B) {
			v1 := ledger.V1
			s := m.Settings(Overrides{StableKeys: &tc.stable, Policy: &tc.p, Contract: &v1})
			e, err := newExplorer(m, s, ExploreOptions{Depth: 8, MaxSchedules: 1 << 40, Settings: []Settings{s}, Alphabet: DefaultAlphabet(m)}, 0)
			if err != nil {
				b.Fatal(err)
			}
			parent := e.cur[0]
			// A parent two attempts in: a timeout and a failure.
			e.apply(parent, Move{Fixture: 0})
			e.apply(parent, Move{Fixture: 2})
			counts := []int{2}
			for f := range e.o.Alphabet {
				e.scratch.copyFrom(parent)
				e.apply(e.scratch, Move{Fixture: f})
				e.seen[e.hash(e.scratch, counts, 0)] = int32(f)
			}
			b.ReportAllocs()
			n, hits := 0, 0
			for b.Loop() {
				mv := Move{Fixture: n % len(e.o.Alphabet)}
				e.scratch.copyFrom(parent)
				e.apply(e.scratch, mv)
				if _, ok := e.seen[e.hash(e.scratch, counts, 0)]; ok {
					hits++
				}
				n++
			}
			if hits != n {
				b.Fatalf("%d of %d attempts found their state", hits, n)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "attempts/s")
		})
	}
}
