package lab

import (
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// Keys of the engine's shape and keys of any other are lettered alike,
// in the order they are first sent: the engine's are named by the number
// they spell, the others by their text.
func TestKeyNamesOfEveryShape(t *testing.T) {
	sends := []string{"ik_0123456789", "my-own-key", "ph_abcdef0123", "ik_0123456789", "my-own-key", "ik_012345678a"}
	c := &missions.Case{}
	for _, k := range sends {
		c.Events = append(c.Events, missions.Event{Kind: missions.EventAttempt, Key: k})
	}
	var names keyNames
	names.add(c.Log(), 0)
	want := []string{"key A", "key B, new", "key C, new", "key A, same", "key B, same", "key D, new"}
	for i, w := range want {
		if got := names.cell(c.Log(), i); got != w {
			t.Errorf("send %d (%s): %q, want %q", i, sends[i], got, w)
		}
	}
	if got := names.named("the record for key ph_abcdef0123 is pruned; my-own-key stays"); got != "the record for key C is pruned; my-own-key stays" {
		t.Errorf("named: %q", got)
	}
	for _, k := range []string{"ik_012345678", "IK_0123456789", "ik_012345678G", "ik-0123456789"} {
		if _, ok := keyID(k); ok {
			t.Errorf("%q is taken for a key of the engine's shape", k)
		}
	}
}

// A runner's log letters its keys by the number the seed minted them
// under, a case made whole by their text: every row and every note reads
// the same either way, under fresh keys, stable keys and a payload's hash.
func TestKeyNamesOfALiveLogAndAWholeOne(t *testing.T) {
	m := bigMission(400)
	for _, stable := range []bool{false, true} {
		for _, ks := range missions.KeySources {
			s := m.Settings(missions.Overrides{StableKeys: &stable, KeySource: &ks})
			r, err := missions.NewRunner(m, s)
			if err != nil {
				t.Fatal(err)
			}
			r.Seek(r.Steps())
			live := r.Logged()
			whole := live.Whole()
			var a, b keyNames
			a.add(live.Log(), 0)
			b.add(whole.Log(), 0)
			if a.n != b.n || a.n == 0 {
				t.Fatalf("%+v: %d keys named from the log, %d from the whole case", s, a.n, b.n)
			}
			minted := 0
			for i := range live.Log().Len() {
				if _, ok := live.Log().Minted(i); ok {
					minted++
				}
				if x, y := a.cell(live.Log(), i), b.cell(whole.Log(), i); x != y {
					t.Fatalf("%+v, event %d: %q from the log, %q from the whole case", s, i, x, y)
				}
				ev := whole.Events[i]
				if x, y := a.named(ev.Note), b.named(ev.Note); x != y {
					t.Fatalf("%+v, event %d: %q from the log, %q from the whole case", s, i, x, y)
				}
			}
			if want := ks == missions.KeyPerIntent; (minted > 0) != want {
				t.Errorf("%+v: %d events read by a minted number", s, minted)
			}
		}
	}
}
