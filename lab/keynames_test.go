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
