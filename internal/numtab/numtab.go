// Package numtab is a table from numbers to values for a hot path that
// a Go map costs several times more on: open addressing, probed in order
// from the place a number hashes to, kept at most half full, with no
// hashing of bytes. Numbers are only ever added.
package numtab

import "math/bits"

// Table maps numbers below 2⁶⁴−1 to values of type V. Its zero value is
// an empty table. A copy shares its places with the original until
// either grows, so only one of them may add.
type Table[V any] struct {
	places []place[V]
	used   int
}

// place is one place in a table: key is the number plus one, 0 for a
// free place.
type place[V any] struct {
	key uint64
	val V
}

// New makes a table with room for n numbers before it grows.
func New[V any](n int) Table[V] {
	size := 16
	for size < 2*n {
		size *= 2
	}
	return Table[V]{places: make([]place[V], size)}
}

// Len is how many numbers the table holds.
func (t *Table[V]) Len() int { return t.used }

// start is where the search for k begins: the top bits of its product
// with 2⁶⁴/φ, which spreads numbers in a row as well as random ones.
func (t *Table[V]) start(k uint64) int {
	return int((k * 0x9e3779b97f4a7c15) >> (64 - bits.TrailingZeros(uint(len(t.places)))))
}

// Get is the value of k, if the table holds it.
func (t *Table[V]) Get(k uint64) (V, bool) {
	if t.used > 0 {
		mask := len(t.places) - 1
		for i := t.start(k); ; i = (i + 1) & mask {
			switch p := &t.places[i]; p.key {
			case k + 1:
				return p.val, true
			case 0:
				var none V
				return none, false
			}
		}
	}
	var none V
	return none, false
}

// Put gives k the value v, in place of any it had.
func (t *Table[V]) Put(k uint64, v V) {
	if 2*(t.used+1) > len(t.places) {
		old := t.places
		*t = New[V](len(old))
		for _, p := range old {
			if p.key != 0 {
				t.put(p)
			}
		}
	}
	t.put(place[V]{key: k + 1, val: v})
}

func (t *Table[V]) put(p place[V]) {
	mask := len(t.places) - 1
	i := t.start(p.key - 1)
	for t.places[i].key != 0 && t.places[i].key != p.key {
		i = (i + 1) & mask
	}
	if t.places[i].key == 0 {
		t.used++
	}
	t.places[i] = p
}
