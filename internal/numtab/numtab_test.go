package numtab

import (
	"math/rand/v2"
	"testing"
)

// A table holds what a map holds, however many numbers and however they
// are spread: in a row, alike in their low bits, at random; past several
// doublings, with values replaced.
func TestTableAgreesWithAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, spread := range []func(i int) uint64{
		func(i int) uint64 { return uint64(i) },
		func(i int) uint64 { return uint64(i) << 20 },
		func(int) uint64 { return rng.Uint64() >> 23 },
		func(int) uint64 { return rng.Uint64() >> 1 },
	} {
		var table Table[int]
		want := map[uint64]int{}
		for i := range 5000 {
			k := spread(i)
			if _, ok := table.Get(k); ok != (want[k] != 0) {
				t.Fatalf("number %d: held %v before it is put", k, ok)
			}
			table.Put(k, i+1)
			want[k] = i + 1
			if i%7 == 0 {
				// Put again: the value is replaced, not added.
				table.Put(k, i+2)
				want[k] = i + 2
			}
		}
		if table.Len() != len(want) {
			t.Fatalf("%d numbers held, want %d", table.Len(), len(want))
		}
		for k, v := range want {
			if got, ok := table.Get(k); !ok || got != v {
				t.Fatalf("number %d: %d %v, want %d", k, got, ok, v)
			}
		}
		if 2*table.Len() > len(table.places) {
			t.Errorf("%d numbers in %d places: over half full", table.Len(), len(table.places))
		}
	}
}
