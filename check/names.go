package check

import (
	"hash/maphash"
	"unsafe"
)

// nameSet numbers strings in the order first seen. The bytes live in
// arena chunks that never move, and an open-addressing table of numbers
// finds a string again: about 35 bytes a name, where a Go map from string
// to number and a list of the names take about 70.
type nameSet struct {
	seed   maphash.Seed
	chunks [][]byte
	refs   chunked[nameRef]
	// table holds, per slot, the number+1 (0: empty) in the low half and
	// the top half of the name's hash in the high half, so that most
	// probes that miss are told apart without comparing names.
	table []uint64
}

// nameRef is where a name's bytes are.
type nameRef struct{ chunk, off, n uint32 }

const arenaChunk = 1 << 20

func newNameSet() *nameSet { return &nameSet{seed: maphash.MakeSeed(), table: make([]uint64, 1024)} }

// len is how many names the set holds.
func (s *nameSet) len() int { return s.refs.len() }

// name is the string numbered i. It shares the arena, which never
// changes what it holds.
func (s *nameSet) name(i int32) string {
	r := s.refs.at(i)
	if r.n == 0 {
		return ""
	}
	return unsafe.String(&s.chunks[r.chunk][r.off], r.n)
}

// id is v's number, given now if v is new.
func (s *nameSet) id(v string) (int32, bool) {
	h := maphash.String(s.seed, v)
	tag := h &^ (1<<32 - 1)
	mask := uint64(len(s.table) - 1)
	for slot := h & mask; ; slot = (slot + 1) & mask {
		e := s.table[slot]
		if e == 0 {
			id := s.add(v)
			s.table[slot] = tag | uint64(id+1)
			if s.len()*4 > len(s.table)*3 {
				s.grow()
			}
			return id, true
		}
		if e&^(1<<32-1) == tag {
			if n := int32(uint32(e)) - 1; s.name(n) == v {
				return n, false
			}
		}
	}
}

// add copies v into the arena and numbers it.
func (s *nameSet) add(v string) int32 {
	last := len(s.chunks) - 1
	if last < 0 || len(s.chunks[last])+len(v) > cap(s.chunks[last]) {
		s.chunks = append(s.chunks, make([]byte, 0, max(arenaChunk, len(v))))
		last++
	}
	off := len(s.chunks[last])
	s.chunks[last] = append(s.chunks[last], v...)
	return s.refs.add(nameRef{chunk: uint32(last), off: uint32(off), n: uint32(len(v))})
}

// grow doubles the table and places every number again.
func (s *nameSet) grow() {
	table := make([]uint64, 2*len(s.table))
	mask := uint64(len(table) - 1)
	for i := range int32(s.len()) {
		h := maphash.String(s.seed, s.name(i))
		slot := h & mask
		for table[slot] != 0 {
			slot = (slot + 1) & mask
		}
		table[slot] = h&^(1<<32-1) | uint64(i+1)
	}
	s.table = table
}
