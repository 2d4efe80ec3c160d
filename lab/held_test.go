package lab

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// A step whose send the caller held back is said to be held where the step
// is named: in the header and in the schedule. Without it the header named
// the step's fixture ("attempt refund-1042 → success") while the timeline
// showed a hold row and no attempt, and the schedule ticked the step off
// as if the success had happened.
func TestHeldStepIsSaidToBeHeld(t *testing.T) {
	off := false
	m := newLab(t, Options{Mission: tts, Overrides: missions.Overrides{StableKeys: &off}}, 100, 30)
	m = press(t, m, "p", "n")
	if v := m.View(); strings.Contains(v, "held") {
		t.Fatalf("step 2 has not run, yet something is held:\n%s", v)
	}
	m = press(t, m, "n")
	lines := strings.Split(m.View(), "\n")
	if !strings.Contains(lines[2], "step 2 of 3 · attempt refund-1042, fixture success · held, not sent") {
		t.Fatalf("header at the held step: %q", lines[2])
	}
	if !strings.Contains(m.schedule.View(), "▶ 2 success · held") {
		t.Fatalf("schedule at the held step:\n%s", m.schedule.View())
	}
	// Past it, the schedule still says so; the header moves on.
	m = press(t, m, "n")
	if !strings.Contains(m.schedule.View(), "✓ 2 success · held") {
		t.Fatalf("schedule after the held step:\n%s", m.schedule.View())
	}
	if strings.Contains(strings.Split(m.View(), "\n")[2], "held") {
		t.Fatalf("header after the held step: %q", strings.Split(m.View(), "\n")[2])
	}
	// Stable keys on: the guarded caller resends under the same key, and
	// nothing is held.
	m = press(t, m, "k")
	if strings.Contains(m.schedule.View(), "held") {
		t.Fatalf("stable keys on, nothing is held, yet:\n%s", m.schedule.View())
	}
}

// In a narrow schedule the step's words give way to the mark, which stays.
func TestHeldMarkSurvivesANarrowSchedule(t *testing.T) {
	m := newLab(t, Options{Mission: "crash-after-send"}, 80, 24)
	m = press(t, m, "p", "r")
	m.schedule.SetSize(14, 8)
	if v := m.schedule.View(); !strings.Contains(v, "✓ 3 su… · held") {
		t.Fatalf("a 14-cell schedule lost the held mark:\n%s", v)
	}
}

func TestHeldWords(t *testing.T) {
	for _, tc := range []struct {
		held, sends int
		want        string
	}{{1, 1, "held"}, {1, 2, "1 of 2 held"}, {2, 2, "2 of 2 held"}, {3, 2, "2 of 2 held"}} {
		if got := heldWords(tc.held, tc.sends); got != tc.want {
			t.Errorf("heldWords(%d, %d) = %q, want %q", tc.held, tc.sends, got, tc.want)
		}
	}
}

// In a together step the mark goes on the line of the worker whose send
// was held, and the step's own line keeps its words.
func TestHeldMarkIsOnTheHeldWorker(t *testing.T) {
	off := false
	m := newLab(t, Options{Mission: "concurrent-duplicates", Overrides: missions.Overrides{StableKeys: &off}}, 100, 30)
	m = press(t, m, "p", "r")
	v := m.schedule.View()
	if !strings.Contains(v, "✓ 1 together, 2 workers:") || !strings.Contains(v, "└ success · held") || strings.Contains(v, "late_commit +2 · held") {
		t.Fatalf("schedule of concurrent-duplicates, guarded, stable keys off:\n%s", v)
	}
}

// In a narrow header the step's words give way to the held mark, which
// stays whole.
func TestHeldMarkStaysWholeInTheHeader(t *testing.T) {
	off := false
	m := newLab(t, Options{Mission: "concurrent-duplicates", Overrides: missions.Overrides{StableKeys: &off}}, 80, 24)
	line := strings.Split(press(t, m, "p", "n").View(), "\n")[2]
	if !strings.Contains(line, "· 1 of 2 held ") || !strings.HasPrefix(line, "step 1 of 2 · together") {
		t.Fatalf("header at 80 columns: %q", line)
	}
}

// The header calls a step's fixture one: "attempt refund-1042 → success"
// above a conflict read as what came of the attempt.
func TestHeaderNamesTheFixtureAsOne(t *testing.T) {
	g := missions.Guarded
	m := newLab(t, Options{Mission: "original-still-running", Overrides: missions.Overrides{Policy: &g}}, 80, 24)
	m = press(t, m, "n", "n", "n")
	line := strings.Split(m.View(), "\n")[2]
	if !strings.Contains(line, "fixture success") || strings.Contains(line, "→ success") {
		t.Fatalf("header line %q", line)
	}
}
