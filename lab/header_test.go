package lab

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
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
				states[counterState(m.cas.Outcome.Effects, m.cas.Outcome.Intended, worstVerdict(m.cas.Outcome.Verdicts))[:3]] = true
				m = press(t, m, "n")
			}
			if len(states) < 2 {
				t.Fatalf("%s: the counter never changed state (%v), so this checks nothing", tc.id, states)
			}
		}
	}
}

// TestHeaderKeepsTheLabAndTitle checks the header's first line at 80
// columns for every catalog mission: the lab's name and the whole title,
// then the id where it fits too; where the terminal is narrower still,
// the id gives way first.
func TestHeaderKeepsTheLabAndTitle(t *testing.T) {
	prefixed := 0
	for _, ms := range missions.BuiltIn().Missions {
		m := newLab(t, Options{Mission: ms.ID, Dir: t.TempDir()}, 80, 24)
		first := strings.SplitN(m.View(), "\n", 2)[0]
		room := 80 - lipgloss.Width(m.header.counter()[0]) - 2
		switch {
		case !strings.Contains(first, ms.Title):
			t.Errorf("%s at 80 columns: the title is cut: %q", ms.ID, first)
		case lipgloss.Width("replaylab · "+ms.Title) <= room && !strings.HasPrefix(first, "replaylab · "+ms.Title):
			t.Errorf("%s at 80 columns: the lab's name and the title fit, yet: %q", ms.ID, first)
		case strings.HasPrefix(first, "replaylab · "):
			prefixed++
		}
	}
	if prefixed < len(missions.BuiltIn().Missions)-1 {
		t.Errorf("only %d missions keep the lab's name at 80 columns", prefixed)
	}
	m := newLab(t, Options{Mission: "two-intended-refunds", Dir: t.TempDir()}, 80, 24)
	if first := strings.SplitN(m.View(), "\n", 2)[0]; strings.Contains(first, "two-intended-refunds") {
		t.Errorf("a title and id too long together keep the title: %q", first)
	}
	m = newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 80, 24)
	if first := strings.SplitN(m.View(), "\n", 2)[0]; !strings.Contains(first, " "+tts+" ") {
		t.Errorf("the id where it fits: %q", first)
	}
}

// TestCounterBeforeTheFirstStep checks that before anything has run the
// counter does not call the ledger short: it says the run has not
// started, and from the first step it says how the ledger compares.
func TestCounterBeforeTheFirstStep(t *testing.T) {
	m := newLab(t, Options{Mission: "two-intended-refunds", Dir: t.TempDir()}, 100, 30)
	h := m.header.View()
	if !strings.Contains(h, "not run yet") || strings.Contains(h, "short") {
		t.Fatalf("counter before the first step:\n%s", h)
	}
	// Under way, the count may still change: neutral, and it says so.
	m = press(t, m, "n")
	if h = m.header.View(); !strings.Contains(h, "not settled yet") || strings.Contains(h, "short") {
		t.Fatalf("counter after the first of two refunds:\n%s", h)
	}
	m = press(t, m, "r")
	if h = m.header.View(); strings.Contains(h, "not settled yet") {
		t.Fatalf("counter at the end:\n%s", h)
	}
	m = press(t, m, "0")
	if h = m.header.View(); !strings.Contains(h, "not run yet") {
		t.Fatalf("counter after 0:\n%s", h)
	}
}

// While a request is still executing at the provider, the counter does
// not say the effect was not made: it may yet commit.
func TestCounterWhileARequestIsStillExecuting(t *testing.T) {
	off := false
	m := newLab(t, Options{Mission: "original-still-running", Dir: t.TempDir(), Overrides: missions.Overrides{StableKeys: &off}}, 100, 30)
	seen := false
	for range m.steps {
		m = press(t, m, "n")
		if len(m.cas.Ledger.InFlight) == 0 || m.cas.Outcome.Effects >= m.cas.Outcome.Intended {
			continue
		}
		seen = true
		if h := m.header.View(); strings.Contains(h, "not made") || !strings.Contains(h, "not settled yet") {
			t.Fatalf("at step %d, with a request executing:\n%s", m.pos, h)
		}
	}
	if !seen {
		t.Fatal("the mission never had a request executing with the ledger short")
	}
}

// A caller doing right is not shown in red or amber before its run ends:
// under the guarded policy refund-still-pending's steps 1 and 2 read
// "hidden_effect" in red beside "still pending. I won't send it again",
// and original-still-running's step 1 "▼ 1 short" in amber where nobody
// escalated. Before the end the counter is neutral, "not settled yet";
// an extra success, which nothing takes back, is red at once.
func TestCounterNeutralUntilSettled(t *testing.T) {
	guarded := missions.Guarded
	for _, id := range []string{"refund-still-pending", "original-still-running"} {
		m := newLab(t, Options{Mission: id, Dir: t.TempDir(), Overrides: missions.Overrides{Policy: &guarded}}, 100, 30)
		for m.pos < m.steps-1 {
			m = press(t, m, "n")
			look, state := m.header.counterLook()
			if state != notSettled || look.GetForeground() != m.st.Text.GetForeground() {
				t.Fatalf("%s at step %d: %q in %v", id, m.pos, state, look.GetForeground())
			}
		}
		m = press(t, m, "n")
		if _, state := m.header.counterLook(); state == notSettled {
			t.Fatalf("%s at the end: still %q", id, state)
		}
	}
	off := false
	m := press(t, newLab(t, Options{Mission: tts, Dir: t.TempDir(), Overrides: missions.Overrides{StableKeys: &off}}, 100, 30), "n", "n")
	if look, state := m.header.counterLook(); state != "▲ 1 extra" || look.GetForeground() == m.st.Text.GetForeground() {
		t.Fatalf("a second success under way: %q, not drawn as wrong", state)
	}
}
