package lab

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

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

// A setting that changes the verdict and leaves the count says so on the
// status line: under contract v2 the saved 500 no longer hides the refund,
// and "effects stay at 1" alone read as if nothing had changed. Where the
// line is too narrow, the replay's position gives way, not the verdict.
func TestToggleSaysHowTheVerdictMoved(t *testing.T) {
	m := newLab(t, Options{Mission: "saved-server-error"}, 120, 30)
	m = press(t, m, "r", "c")
	want := "contract v2: replayed to step 3 of 3, effects stay at 1, verdict hidden_effect → exactly_once"
	if m.status != want || !strings.Contains(m.statusLine(), want) {
		t.Fatalf("status %q, line %q", m.status, m.statusLine())
	}
	if line := resize(m, 80, 24).statusLine(); line != "contract v2: effects stay at 1, verdict hidden_effect → exactly_once" {
		t.Fatalf("status line at 80 columns: %q", line)
	}
	// Before the end the header shows no verdict, and neither does the
	// status line.
	m = press(t, m, "b", "c")
	if strings.Contains(m.status, "verdict") {
		t.Fatalf("mid-run status names a verdict: %q", m.status)
	}
	// Several intents: the one whose verdict moved is named.
	m = newLab(t, Options{Mission: "two-intended-refunds"}, 120, 30)
	m = press(t, m, "r", "s")
	if !strings.HasSuffix(m.status, "effects 2 → 1, refund-1042-b exactly_once → phantom") {
		t.Fatalf("status after s: %q", m.status)
	}
}

// A toggle that changes several verdicts says how many where the line
// has room only for the short form: "a verdict changed" read as one when
// all ten had.
func TestToggleCountsTheVerdictsThatChanged(t *testing.T) {
	cat := missions.BuiltIn()
	mm := bigMission(40)
	data, err := missions.Format(mm)
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.AddFS(fstest.MapFS{"big.yaml": {Data: data}}, "test"); err != nil {
		t.Fatal(err)
	}
	stable := true
	m := newLab(t, Options{Catalog: cat, Mission: mm.ID, Dir: t.TempDir(), Overrides: missions.Overrides{StableKeys: &stable}}, 80, 24)
	m = press(t, m, "r", "k")
	changed := 0
	for _, v := range m.cas.Outcome.Verdicts {
		if v.Verdict != missions.ExactlyOnce {
			changed++
		}
	}
	if changed < 2 {
		t.Fatalf("the toggle changed %d verdicts; this checks nothing", changed)
	}
	lines := strings.Split(m.View(), "\n")
	status := lines[len(lines)-2]
	if want := fmt.Sprintf("%d verdicts changed", changed); !strings.Contains(status, want) {
		t.Fatalf("the status line %q does not say %q", status, want)
	}
}
