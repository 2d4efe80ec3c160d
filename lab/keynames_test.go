package lab

import (
	"strings"
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

func TestFullHelpIsNeverCut(t *testing.T) {
	for _, w := range []int{MinWidth, 80, 100} {
		m := press(t, labAt(t, tts, missions.Naive, w, 24), "n", "m", "?")
		v := m.View()
		if lines := strings.Split(v, "\n"); strings.Contains(strings.Join(lines[:len(lines)-chromeLines], "\n"), "…") {
			t.Errorf("%d wide: full help is cut:\n%s", w, v)
		}
		for _, group := range m.FullHelp() {
			for _, b := range group {
				if b.Enabled() && !strings.Contains(v, b.Help().Desc) {
					t.Errorf("%d wide: full help lacks %q:\n%s", w, b.Help().Desc, v)
				}
			}
		}
	}
}

// TestKeysReadAsLetters: the timeline and the ledger name keys "key A",
// with "same" or "new" on each retry, never as hashes that read alike;
// the hash is in the detail strip of the row picked.
func TestKeysReadAsLetters(t *testing.T) {
	for _, tc := range []struct {
		stable bool
		want   []string
	}{
		{true, []string{"#1 key A ", "#2 key A, same", "key A → 200 re_0001"}},
		{false, []string{"#1 key A ", "#2 key B, new", "key A → 200 re_0001", "key B → 200 re_0002"}},
	} {
		stable := tc.stable
		m := press(t, newLab(t, Options{Mission: tts, Overrides: missions.Overrides{StableKeys: &stable}, Dir: t.TempDir()}, 100, 30), "r")
		rows := m.timeline.View()
		for _, w := range tc.want {
			if !strings.Contains(m.View(), w) {
				t.Errorf("stable keys %v: the lab lacks %q:\n%s", stable, w, m.View())
			}
		}
		for _, l := range strings.Split(rows, "\n") {
			if strings.Contains(l, "ik_") && !strings.HasPrefix(strings.TrimSpace(l), "↳") && !strings.Contains(l, " is") && !strings.HasPrefix(l, "  ") {
				t.Errorf("stable keys %v: a row names a hash: %q", stable, l)
			}
		}
		// Pick attempt #2 and read its hash in the strip.
		m = press(t, m, "up", "up")
		for m.timeline.Current() != nil && m.timeline.Current().Attempt != 2 {
			m = press(t, m, "up")
		}
		if ev := m.timeline.Current(); ev == nil || !strings.Contains(strings.Join(strings.Fields(m.timeline.View()), " "), "is "+ev.Key) {
			t.Errorf("stable keys %v: the strip of attempt #2 does not give its hash:\n%s", stable, m.timeline.View())
		}
	}
}

// TestACopyKeepsItsOwnKeys: every screen holds its keys as a value, so a
// copy of the lab that moves on leaves the original's help bar as it was
// (a shared key map once changed both).
func TestACopyKeepsItsOwnKeys(t *testing.T) {
	m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30)
	before := m.helpLine()
	moved := press(t, m, "r")
	if !m.keys.Step.Enabled() || m.helpLine() != before {
		t.Errorf("running a copy to the end changed the original's keys: %q", m.helpLine())
	}
	if moved.keys.Step.Enabled() || strings.Contains(moved.helpLine(), "n/→ step") {
		t.Errorf("the copy at the end still offers n: %q", moved.helpLine())
	}
	onCompare := press(t, m, "m", "k", "m", "v")
	if onCompare.screen != screenCompare || !m.keys.Pin.Enabled() || m.compare.keys.Unpin.Enabled() {
		t.Errorf("a copy on the compare view changed the original's keys")
	}
}
