package lab

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/missions"
)

// counterColumn is the cell where the counter's words start on the
// header's first line.
func counterColumn(t *testing.T, m Model) int {
	t.Helper()
	first := strings.SplitN(m.header.View(), "\n", 2)[0]
	i := strings.Index(first, "effects ")
	if i < 0 {
		t.Fatalf("no counter in %q", first)
	}
	return ansi.StringWidth(first[:i])
}

// TestCounterKeepsItsPlace steps runs whose counter passes through
// "▼ short", "= as intended" and "▲ extra": the counter's words start in
// the same column at every step, so the header does not jump.
func TestCounterKeepsItsPlace(t *testing.T) {
	off := false
	for _, tc := range []struct {
		id string
		o  missions.Overrides
	}{
		{tts, missions.Overrides{StableKeys: &off}},
		{"refund-pending-then-failed", missions.Overrides{}},
		{"two-intended-refunds", missions.Overrides{}},
	} {
		for _, w := range []int{80, 120} {
			m := newLab(t, Options{Mission: tc.id, Overrides: tc.o, Dir: t.TempDir()}, w, 30)
			want := counterColumn(t, m)
			states := map[string]bool{}
			for pos := 0; pos <= m.steps; pos++ {
				if got := counterColumn(t, m); got != want {
					t.Fatalf("%s at %d columns: the counter starts at %d at step %d, at %d at the start",
						tc.id, w, got, pos, want)
				}
				states[counterState(m.cas.Outcome.Effects, m.cas.Outcome.Intended)[:3]] = true
				m = press(t, m, "n")
			}
			if len(states) < 2 {
				t.Fatalf("%s: the counter never changed state (%v), so this checks nothing", tc.id, states)
			}
		}
	}
}
