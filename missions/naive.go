package missions

import "math/rand/v2"

// naiveCaller is the agent loop: anything but a success reads as failed
// and is retried while the budget lasts.
type naiveCaller struct{ callerBase }

func (c *naiveCaller) Turn(w Wire, i int, t Turn) {
	in := &c.intents[i]
	if in.Belief == BelievesDone {
		c.hold(w, i, t.Worker, Why{Code: whyAlreadyDone})
		return
	}
	rep, sent := c.sendTurn(w, i, t)
	if !sent {
		return
	}
	obs := rep.Observation()
	if obs == ObservedNothing {
		return
	}
	if obs == ObservedSuccess {
		in.Belief = BelievesDone
		c.setCheckpoint(w, i, Committed, Why{Code: whyAnswered, Obj: rep.Object.ID})
		c.deliver(w, i, rep.Object.ID)
		if len(t.Payload) > 0 {
			// The words name what was sent, not what the intent said.
			w.Say(i, Said{Code: sayDoneWith, Obj: rep.Object.ID, Payload: t.Payload})
		}
		return
	}
	// The loop writes down "failed" for anything but a success, whatever
	// the provider actually did.
	in.Belief = BelievesFailed
	c.setCheckpoint(w, i, FailedCheckpoint, Why{Code: whyRecordedFailed, Obs: obs})
	if retriesAhead(in, t) {
		w.Say(i, Said{Code: saySorryRetry})
	} else {
		w.Say(i, Said{Code: saySorryGiveUp})
	}
}

// Read is a read-back the naive loop makes and ignores.
func (c *naiveCaller) Read(w Wire, i int) {
	_, ev := c.readBack(w, i, false)
	ev.Checkpoint = c.intents[i].Checkpoint
	w.Log(ev)
}

// Restarted: the naive agent's conversation ended with the send, so it
// believes nothing happened.
func (c *naiveCaller) Restarted(Wire) {}

func (c *naiveCaller) Finish(Wire) {}

func (c *naiveCaller) AppendState(b []byte) []byte { return c.appendBase(append(b, 'n')) }

func (c *naiveCaller) CopyFrom(src Caller) { c.copyBase(&src.(*naiveCaller).callerBase) }

func (c *naiveCaller) Clone() Caller {
	n := &naiveCaller{}
	n.copyBase(&c.callerBase)
	return n
}

// keyMint hands out the seeded generator's keys in order. The n-th key of
// a seed is always the same, so copies of a caller share one mint and a
// key is formatted once, however many branches use it. A run records a
// send's minted key by its number, which is what a driver that letters
// tens of thousands of keys compares them by.
type keyMint struct {
	seed uint64
	pcg  rand.PCG
	// keys and numbers are only ever appended to, never changed: a log
	// that read them before they grew reads the same.
	keys []string
	// numbers holds each key's number: its place among the keys, or
	// that of the first key alike where two of ten hex digits come out
	// the same, so that the same key always has the same number. first
	// finds it by the digits' value.
	numbers []int32
	first   map[uint64]int32
}

func newKeyMint(seed uint64) *keyMint {
	k := &keyMint{seed: seed, first: map[uint64]int32{}}
	k.pcg.Seed(seed, 0x5eed)
	return k
}

// nth is the n-th key the seed mints, and its number.
func (k *keyMint) nth(n int) (string, int) {
	for len(k.keys) <= n {
		v := k.pcg.Uint64() >> 24
		num, ok := k.first[v]
		if !ok {
			num = int32(len(k.keys))
			k.first[v] = num
		}
		k.keys, k.numbers = append(k.keys, formatKey(v)), append(k.numbers, num)
	}
	return k.keys[n], int(k.numbers[n])
}

// number is key's number, if the seed has minted it.
func (k *keyMint) number(key string) (int, bool) {
	if len(key) != 13 || key[:3] != "ik_" {
		return 0, false
	}
	var v uint64
	for _, c := range []byte(key[3:]) {
		// Only lower-case hex digits make a minted key.
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	n, ok := k.first[v]
	return int(n), ok
}

// formatKey writes a minted key: ik_ and ten hex digits.
func formatKey(v uint64) string {
	const hexDigits = "0123456789abcdef"
	var b [13]byte
	copy(b[:], "ik_")
	for i := 12; i >= 3; i-- {
		b[i] = hexDigits[v&0xF]
		v >>= 4
	}
	return string(b[:])
}
