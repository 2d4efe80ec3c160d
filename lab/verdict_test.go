package lab

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/replaylab/replaylab/missions"
)

// Each verdict has the colour of what it says: a hidden effect leaves the
// effect count as intended, and the header drew it in the counter's green,
// the colour of exactly_once.
func TestVerdictStyle(t *testing.T) {
	st := DefaultStyles()
	for v, want := range map[missions.Verdict]lipgloss.Style{
		missions.ExactlyOnce:   st.CountEqual,
		missions.FailedCleanly: st.CountEqual,
		missions.EscalatedV:    st.CountFewer,
		missions.Duplicate:     st.CountMore,
		missions.HiddenEffect:  st.CountMore,
		missions.Phantom:       st.CountMore,
	} {
		if got := st.verdictStyle(v); got.GetForeground() != want.GetForeground() {
			t.Errorf("%s: foreground %v, want %v", v, got.GetForeground(), want.GetForeground())
		}
	}
}

// The header and the compare view draw each verdict in its own colour,
// whatever the counter's.
func TestVerdictsAreDrawnInTheirOwnColour(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	st := DefaultStyles()
	red := st.CountMore.Render("hidden_effect")
	green := st.CountEqual.Render("hidden_effect")
	if red == green {
		t.Fatal("no colour under the true-colour profile: this checks nothing")
	}
	// Naive, stable keys on: the counter is as intended, the verdict a
	// hidden effect.
	m := newLab(t, Options{Mission: "concurrent-duplicates"}, 100, 30)
	m = press(t, m, "r")
	if m.cas.Outcome.Effects != m.cas.Outcome.Intended || m.cas.Outcome.Verdicts[0].Verdict != missions.HiddenEffect {
		t.Fatalf("want a hidden effect under an even count, got %+v", m.cas.Outcome)
	}
	if pos := strings.Split(m.header.View(), "\n")[2]; !strings.Contains(pos, red) {
		t.Fatalf("the header's verdict is not in the red of a mismatch: %q", pos)
	}
	m = press(t, m, "m", "v")
	if v := m.View(); !strings.Contains(v, red) {
		t.Fatalf("the compare view's verdict is not in the red of a mismatch:\n%q", v)
	}
}

// The verdicts are cut at the width they are given, across styles.
func TestVerdictListCuts(t *testing.T) {
	st := DefaultStyles()
	vs := []missions.IntentVerdict{{Verdict: missions.ExactlyOnce}, {Verdict: missions.EscalatedV}}
	for w, want := range map[int]string{40: "exactly_once, escalated", 20: "exactly_once, escal…", 12: "exactly_once", 5: "exac…"} {
		if got := st.verdictList(vs, w); got != want {
			t.Errorf("at %d cells: %q, want %q", w, got, want)
		}
	}
}
