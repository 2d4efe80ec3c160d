package lab

import (
	"slices"
	"strings"

	"github.com/replaylab/replaylab/compare"
	"github.com/replaylab/replaylab/internal/numtab"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// keyNames letters a run's idempotency keys in the order they are first
// sent: key A, key B, …. A person compares letters at a glance where two
// hashes (ik_496bcda83e, ik_c4c020c660) read alike; the hash itself is in
// the timeline's detail strip.
type keyNames struct {
	// log is the run whose keys are named. minted holds the names of the
	// keys its seed minted, by their number (missions.EventLog.Minted):
	// a long run of fresh keys names tens of thousands, and numbers cost
	// no hashing at all. ids holds the other keys of the engine's shape
	// (ik_ or ph_ and ten hex digits: a payload's hash, a case read from
	// a file) by the number they spell, in a table of their own; keys
	// holds any other.
	log    missions.EventLog
	minted []mintedName
	ids    numtab.Table[keyName]
	keys   map[string]keyName
	n      int // how many keys are named
}

// mintedName is a minted key's name: n is 1 + its place among the keys
// sent, 0 for a key not sent; first, the event that first sent it.
type mintedName struct{ n, first int32 }

// keyID is the number a key of the engine's shape spells: its prefix
// (ik_ 0, ph_ 1) above its ten hex digits.
func keyID(key string) (uint64, bool) {
	prefix, v, ok := missions.KeyValue(key)
	if prefix == "ph_" {
		v |= 1 << 40
	}
	return v, ok
}

// lookup is key's name, if it was sent.
func (k *keyNames) lookup(key string) (keyName, bool) {
	if m, ok := k.log.MintedNumber(key); ok {
		return k.mintedName(m)
	}
	if id, ok := keyID(key); ok {
		return k.ids.Get(id)
	}
	kn, ok := k.keys[key]
	return kn, ok
}

// keyName is a key's place among the keys sent (0 is A) and the index of
// the event that first sent it. The letter is made when it is drawn: a
// long run names thousands of keys and shows a screenful.
type keyName struct{ n, first int }

// letter is the key's letter, if it was sent.
func (k *keyNames) letter(key string) (string, bool) {
	kn, ok := k.lookup(key)
	if !ok {
		return "", false
	}
	return compare.CaseName(kn.n), true
}

// add names the keys of events from index from on; from 0 starts afresh.
// A run moved back keeps its letters: stepped on again, it sends the same
// keys in the same order.
func (k *keyNames) add(log missions.EventLog, from int) {
	if from == 0 {
		// New tables, never cleared: a copy of the names (a panel's)
		// may still read the old ones.
		*k = keyNames{}
	}
	k.log = log
	for i := log.NextAttempt(from); i < log.Len(); i = log.NextAttempt(i + 1) {
		if m, ok := log.Minted(i); ok {
			if m >= len(k.minted) {
				// Doubled: fresh keys come one a send. Room past
				// the length is zero, never written by a copy.
				if m >= cap(k.minted) {
					k.minted = slices.Grow(k.minted, max(m+1, 2*cap(k.minted))-len(k.minted))
				}
				k.minted = k.minted[:m+1]
			}
			if k.minted[m].n == 0 {
				k.n++
				k.minted[m] = mintedName{n: int32(k.n), first: int32(i)}
			}
			continue
		}
		key := log.Key(i)
		if key == "" {
			continue
		}
		if _, ok := k.lookup(key); !ok {
			k.put(key, keyName{n: k.n, first: i})
			k.n++
		}
	}
}

// mintedName is the name of the key minted m-th, if it was sent.
func (k *keyNames) mintedName(m int) (keyName, bool) {
	if m >= len(k.minted) || k.minted[m].n == 0 {
		return keyName{}, false
	}
	return keyName{n: int(k.minted[m].n) - 1, first: int(k.minted[m].first)}, true
}

// put names key kn, in the map its shape goes to.
func (k *keyNames) put(key string, kn keyName) {
	if id, ok := keyID(key); ok {
		k.ids.Put(id, kn)
		return
	}
	if k.keys == nil {
		k.keys = map[string]keyName{}
	}
	k.keys[key] = kn
}

// first is the index of the event that first sent key.
func (k *keyNames) first(key string) int {
	kn, _ := k.lookup(key)
	return kn.first
}

// name is "key A", or the key itself where it was never sent.
func (k *keyNames) name(key string) string {
	if l, ok := k.letter(key); ok {
		return "key " + l
	}
	return termtext.CleanLine(key)
}

// cell is what the key column shows for event i: the key's letter, and
// whether an attempt's key is new or the same as an earlier attempt's.
func (k *keyNames) cell(log missions.EventLog, i int) string {
	key, kind := log.Key(i), log.Kind(i)
	if key == "" {
		if kind == missions.EventAttempt {
			return "no key"
		}
		return "—"
	}
	l, ok := k.letter(key)
	switch {
	case !ok:
		return termtext.CleanLine(key)
	case kind != missions.EventAttempt:
		return "key " + l
	case k.first(key) < i:
		return "key " + l + ", same"
	case l != "A":
		return "key " + l + ", new"
	}
	return "key " + l
}

// named puts the letters in place of the keys a note names: "with key
// ik_496bcda83e" reads "with key A".
func (k *keyNames) named(note string) string {
	if k.n == 0 || (!strings.Contains(note, "ik_") && !strings.Contains(note, "ph_")) {
		return note
	}
	var b strings.Builder
	for i := 0; i < len(note); {
		j := i
		if strings.HasPrefix(note[i:], "ik_") || strings.HasPrefix(note[i:], "ph_") {
			j = i + 3
			for j < len(note) && (note[j] >= '0' && note[j] <= '9' || note[j] >= 'a' && note[j] <= 'f') {
				j++
			}
			if l, ok := k.letter(note[i:j]); ok && (i == 0 || !isWordByte(note[i-1])) {
				if strings.HasSuffix(b.String(), "key ") {
					b.WriteString(l)
				} else {
					b.WriteString("key " + l)
				}
				i = j
				continue
			}
		}
		b.WriteByte(note[i])
		i++
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}
