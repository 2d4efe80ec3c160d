package missions

import (
	"math/rand/v2"

	"github.com/replaylab/replaylab/internal/numtab"
)

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
	obs := rep.Observation(c.profile(w))
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
	first   numtab.Table[int32]
}

func newKeyMint(seed uint64) *keyMint {
	k := &keyMint{seed: seed}
	k.pcg.Seed(seed, 0x5eed)
	return k
}

// nth is the n-th key the seed mints, and its number. Keys are minted a
// batch at a time, their texts parts of one string: a run of fresh keys
// mints tens of thousands.
func (k *keyMint) nth(n int) (string, int) {
	if n >= len(k.keys) {
		k.mint(max(n+1-len(k.keys), min(max(len(k.keys), 8), 1024)))
	}
	return k.keys[n], int(k.numbers[n])
}

// mint mints the next batch keys.
func (k *keyMint) mint(batch int) {
	const size = len("ik_0123456789")
	texts := make([]byte, 0, batch*size)
	for range batch {
		v := k.pcg.Uint64() >> 24
		texts = appendKey(texts, v)
		num, ok := k.first.Get(v)
		if !ok {
			num = int32(len(k.numbers))
			k.first.Put(v, num)
		}
		k.numbers = append(k.numbers, num)
	}
	all := string(texts)
	for i := range batch {
		k.keys = append(k.keys, all[i*size:(i+1)*size])
	}
}

// number is key's number, if the seed has minted it.
func (k *keyMint) number(key string) (int, bool) {
	prefix, v, ok := KeyValue(key)
	if !ok || prefix != "ik_" {
		return 0, false
	}
	n, ok := k.first.Get(v)
	return int(n), ok
}

// KeyValue splits a key of the shape the engine makes, ik_ (minted) or
// ph_ (a payload's hash) and ten lower-case hex digits, into its prefix
// and the number the digits spell.
func KeyValue(key string) (prefix string, v uint64, ok bool) {
	if len(key) != 13 || (key[:3] != "ik_" && key[:3] != "ph_") {
		return "", 0, false
	}
	for _, c := range []byte(key[3:]) {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		default:
			return "", 0, false
		}
	}
	return key[:3], v, true
}

// appendKey appends a minted key to b: ik_ and ten hex digits.
func appendKey(b []byte, v uint64) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, "ik_"...)
	for shift := 36; shift >= 0; shift -= 4 {
		b = append(b, hexDigits[(v>>shift)&0xF])
	}
	return b
}
