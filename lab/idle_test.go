package lab

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// TestIdleKeysSayWhy presses lab keys at moments when they can do
// nothing: each leaves the run where it was and says why on the status
// line, instead of doing nothing in silence.
func TestIdleKeysSayWhy(t *testing.T) {
	guarded := missions.Guarded
	for _, tc := range []struct {
		name    string
		mission string
		o       missions.Overrides
		before  []string
		key     string
		want    string
	}{
		{"n at the end", tts, missions.Overrides{}, []string{"r"}, "n", "the run is over (step 3 of 3)"},
		{"space at the end", tts, missions.Overrides{}, []string{"r"}, "space", "the run is over"},
		{"r at the end", tts, missions.Overrides{}, []string{"r"}, "r", "the run is over"},
		{"b at the start", tts, missions.Overrides{}, nil, "b", "this is the start"},
		{"0 at the start", tts, missions.Overrides{}, nil, "0", "this is the start"},
		{"v with no pins", tts, missions.Overrides{}, nil, "v", "nothing pinned yet: m pins"},
		{"g under naive", tts, missions.Overrides{}, []string{"r"}, "g", "under the naive policy nothing is"},
		{"g before the escalation", "changed-parameters", missions.Overrides{Policy: &guarded}, []string{"n"}, "g",
			"nothing has been handed to a person so far"},
		{"g when guarded settles all", tts, missions.Overrides{Policy: &guarded}, []string{"r"}, "g", "settled every intent"},
		{"x with no pins", tts, missions.Overrides{}, nil, "x", "nothing pinned yet: m pins this case"},
		{"x with pins", tts, missions.Overrides{}, []string{"m"}, "x", "x clears the pins from the compare view: v opens it (1 pinned case)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := press(t, newLab(t, Options{Mission: tc.mission, Overrides: tc.o, Dir: t.TempDir()}, 100, 30), tc.before...)
			pos, scr := m.pos, m.screen
			m = press(t, m, tc.key)
			if m.pos != pos || m.screen != scr {
				t.Fatalf("%s moved the lab: position %d → %d, screen %d → %d", tc.key, pos, m.pos, scr, m.screen)
			}
			if !strings.Contains(m.status, tc.want) {
				t.Fatalf("%s: status %q, want it to contain %q", tc.key, m.status, tc.want)
			}
			if !strings.Contains(m.View(), tc.want) {
				t.Fatalf("%s: the status is not on screen:\n%s", tc.key, m.View())
			}
		})
	}
}

// TestFullHelpIsModal checks the list of all keys: its bar offers only
// the ways out, and a key from the list closes it and does its job on
// the screen below, rather than acting out of sight behind it.
func TestFullHelpIsModal(t *testing.T) {
	m := press(t, ttsLab(t), "?")
	lines := strings.Split(m.View(), "\n")
	bar := lines[len(lines)-1]
	if !strings.Contains(bar, "?/esc close help") || strings.Contains(bar, "step") || strings.Contains(bar, "esc back") {
		t.Fatalf("help bar under the full help: %q", bar)
	}
	if status := lines[len(lines)-2]; !strings.Contains(status, "any other key closes this list") {
		t.Fatalf("status line under the full help: %q", status)
	}
	m = press(t, m, "n")
	if m.fullHelp || m.pos != 1 {
		t.Fatalf("n under the full help: help open %v, position %d; want it closed at step 1", m.fullHelp, m.pos)
	}
	if !strings.Contains(m.View(), "step 1 of 3") {
		t.Fatal("the lab is not back on screen after n")
	}
	// The picker too: enter opens the highlighted mission and shows it.
	m = press(t, m, "esc", "?", "enter")
	if m.fullHelp || m.screen != screenLab {
		t.Fatalf("enter under the picker's full help: help open %v, screen %d", m.fullHelp, m.screen)
	}
}

// TestTabSaysWhereTheArrowsGo checks that tab says on the status line
// which panel ↑/↓ now move, and never hands them to a panel that shows all
// it holds ("↑/↓ now scroll the ledger (all of it fits)" offered a key
// that did nothing).
func TestTabSaysWhereTheArrowsGo(t *testing.T) {
	m := press(t, ttsLab(t), "r", "tab")
	if m.focus != focusTimeline || !strings.Contains(m.status, "fit whole") || strings.Contains(m.status, "now scroll") {
		t.Fatalf("tab where the ledger and the words fit: focus %d, %q", m.focus, m.status)
	}
	m = press(t, newLab(t, Options{Mission: "two-intended-refunds", Dir: t.TempDir()}, 80, 20), "r", "tab")
	if m.holds.lineCount() <= m.holds.rows() {
		t.Fatal("the ledger fits at 80x20, so this checks nothing")
	}
	if m.focus != focusLedger || !strings.Contains(m.status, "now scroll the ledger;") {
		t.Fatalf("tab to a ledger that scrolls: %q", m.status)
	}
	for i := 0; i < 2 && m.focus != focusTimeline; i++ {
		m = press(t, m, "tab")
		if m.focus == focusSaid && !m.said.Scrolls() {
			t.Fatalf("tab gave ↑/↓ to words that fit: %q", m.status)
		}
	}
	if m.focus != focusTimeline || !strings.Contains(m.status, "timeline's cursor") {
		t.Fatalf("tab back: focus %d, %q", m.focus, m.status)
	}
}

// TestCompareHintNamesOnlyMarksOnScreen checks the compare view's status
// line: it explains ◆ only when some attempt carries it.
func TestCompareHintNamesOnlyMarksOnScreen(t *testing.T) {
	m := press(t, ttsLab(t), "r", "m", "k", "m", "v") // the same words, 1 and 2 effects
	if m.compare.cmp.Diverge == 0 || !strings.Contains(m.View(), "◆ marks where two cases first hold different ledgers") {
		t.Fatalf("a divergence, but no ◆ hint:\n%s", m.View())
	}
	guarded := missions.Guarded // the merged refund escalates: the words differ too
	m = newLab(t, Options{Mission: "two-intended-refunds", Overrides: missions.Overrides{Policy: &guarded}, Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "r", "m", "s", "m", "v")
	view := m.View()
	if m.compare.cmp.Diverge != 0 || strings.Contains(view, "◆") {
		t.Fatalf("the words differ where the ledgers do, yet ◆ is on screen:\n%s", view)
	}
	if !strings.Contains(view, "x clears the pins") {
		t.Fatalf("no hint without a divergence:\n%s", view)
	}
}

// A key of the run pressed on the compare view or the evidence, where it
// does nothing, says where it works (k on the compare view did nothing in
// silence); the words go when the person goes back to the run.
func TestRunKeysElsewhereSayWhereTheyWork(t *testing.T) {
	guarded := missions.Guarded
	for _, tc := range []struct {
		name, mission string
		o             missions.Overrides
		open          []string
		key, want     string
	}{
		{"k on compare", tts, missions.Overrides{}, []string{"r", "m", "v"}, "k", "k (stable keys) works on the run: esc goes back to it"},
		{"n on compare", tts, missions.Overrides{}, []string{"m", "v"}, "n", "n/→ (step) works on the run"},
		{"m on compare", tts, missions.Overrides{}, []string{"m", "v"}, "m", "m (pin case) works on the run"},
		{"p on evidence", "changed-parameters", missions.Overrides{Policy: &guarded}, []string{"r", "g"}, "p", "p (policy) works on the run"},
		{"e on evidence", "changed-parameters", missions.Overrides{Policy: &guarded}, []string{"r", "g"}, "e", "e (export JSON) works on the run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := press(t, newLab(t, Options{Mission: tc.mission, Overrides: tc.o, Dir: t.TempDir()}, 100, 30), tc.open...)
			scr, settings, pins := m.screen, m.settings, len(m.pinned)
			next, cmd := m.Update(keyMsg(tc.key))
			m = next.(Model)
			if cmd != nil || m.screen != scr || m.settings != settings || len(m.pinned) != pins {
				t.Fatalf("%s acted off its screen", tc.key)
			}
			if !strings.Contains(m.statusLine(), tc.want) {
				t.Fatalf("status line %q, want %q", m.statusLine(), tc.want)
			}
			if m = press(t, m, "esc"); m.screen != screenLab || strings.Contains(m.statusLine(), "works on the run") {
				t.Fatalf("back on the run, the status line still says %q", m.statusLine())
			}
		})
	}
}
