package lab

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

func TestEscQuitAndHelp(t *testing.T) {
	m := ttsLab(t)
	if m = press(t, m, "?"); !m.fullHelp || !strings.Contains(m.View(), "all keys") {
		t.Fatal("? does not open the full help")
	}
	if m = press(t, m, "esc"); m.fullHelp || m.screen != screenLab {
		t.Fatal("esc does not close the help first")
	}
	if m = press(t, m, "esc"); m.screen != screenPicker {
		t.Fatal("esc does not go back to the picker")
	}
	if m.picker.Selected().ID != tts {
		t.Fatal("the picker does not keep the mission just left selected")
	}
	for _, k := range []string{"q", "ctrl+c"} {
		_, cmd := m.Update(keyMsg(k))
		if cmd == nil {
			t.Fatalf("%s returned no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Fatalf("%s does not quit", k)
		}
	}
}

func TestHelpShowsOnlyLiveKeys(t *testing.T) {
	m := ttsLab(t)
	line := m.helpLine()
	if strings.Contains(line, "back") || strings.Contains(line, "compare") {
		t.Fatalf("help at the start advertises dead keys: %q", line)
	}
	if !strings.Contains(line, "step") || !strings.Contains(line, "? all keys") {
		t.Fatalf("help at the start lacks step or ?: %q", line)
	}
	m = press(t, m, "r", "m")
	line = m.helpLine()
	if strings.Contains(line, "n/→ step") || !strings.Contains(line, "back") {
		t.Fatalf("help at the end: %q", line)
	}
	full := press(t, m, "?").View()
	if !strings.Contains(full, "compare pinned") || strings.Contains(full, "open mission") {
		t.Fatalf("full help lists the wrong keys:\n%s", full)
	}
}

func TestTooSmallSaysHowBig(t *testing.T) {
	m := newLab(t, Options{Mission: tts}, 60, 15)
	v := m.View()
	if !strings.Contains(v, "at least 72×20") || !strings.Contains(v, "60×15") {
		t.Fatalf("small terminal view:\n%s", v)
	}
	// At 40×12 the lines break between phrases, never inside a size or
	// after "at least" ("at least\n72×20;\nthis one is 40×12").
	small := resize(m, 40, 12)
	var lines []string
	for _, l := range strings.Split(small.View(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	want := []string{"replaylab needs at least 72×20;", "this terminal is 40×12.", "Make the window larger,", "or press q to quit."}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("at 40×12: %q, want %q", lines, want)
	}
	// Growing the window brings the lab back, laid out for the new size.
	m = resize(m, 80, 24)
	v = m.View()
	if strings.Contains(v, "at least") || len(strings.Split(v, "\n")) != 24 {
		t.Fatalf("after resize: %d lines\n%s", len(strings.Split(v, "\n")), v)
	}
}

// A terminal that reports 0×0 gets a line that says so, not a blank
// screen; before any size arrives the lab draws nothing.
func TestZeroSizedTerminalSaysSo(t *testing.T) {
	m, err := New(Options{Mission: tts})
	if err != nil {
		t.Fatal(err)
	}
	if v := m.View(); v != "" {
		t.Fatalf("before a size: %q", v)
	}
	z := resize(m, 0, 0)
	if v := z.View(); !strings.Contains(v, "0×0") || !strings.Contains(v, "press q to quit") {
		t.Fatalf("a 0×0 terminal shows %q", v)
	}
	if _, cmd := z.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")}); cmd == nil {
		t.Fatal("q does not quit a 0×0 terminal")
	}
}

func TestEveryScreenFillsTheTerminalExactly(t *testing.T) {
	for _, size := range [][2]int{{72, 20}, {80, 24}, {100, 30}, {120, 40}, {200, 60}} {
		w, h := size[0], size[1]
		m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, w, h)
		screens := map[string]Model{
			"lab":     press(t, m, "n"),
			"end":     press(t, m, "r", "k", "p"),
			"compare": press(t, m, "r", "m", "k", "m", "v"),
			"help":    press(t, m, "?"),
			"picker":  press(t, m, "esc"),
			"payload": press(t, m, "r", "s", "p", "k"),
		}
		for name, s := range screens {
			lines := strings.Split(s.View(), "\n")
			if len(lines) != h {
				t.Errorf("%dx%d %s: %d lines", w, h, name, len(lines))
			}
			for i, l := range lines {
				if n := len([]rune(l)); n > w {
					t.Errorf("%dx%d %s: line %d is %d wide", w, h, name, i, n)
				}
			}
		}
	}
}

func TestTextFromFilesIsCleaned(t *testing.T) {
	evil := longMission(1)
	evil.Title = "Evil \x1b[31mred\x1b[0m title"
	m := newLab(t, Options{Catalog: catalogOf(evil), Dir: t.TempDir()}, 100, 30)
	if strings.Contains(m.View(), "\x1b") {
		t.Fatal("picker shows an escape sequence from a mission file")
	}
	if m = openMission(t, m, evil); strings.Contains(m.View(), "\x1b") {
		t.Fatal("lab shows an escape sequence from a mission file")
	}
}

func TestLargeCountsAreNotCut(t *testing.T) {
	off := false
	long := longMission(1000)
	m := newLab(t, Options{Catalog: catalogOf(long), Overrides: missions.Overrides{StableKeys: &off}}, 80, 24)
	m = press(t, openMission(t, m, long), "r", "b")
	v := m.View()
	for _, want := range []string{"1000 ↑", "effects 1000", "▲ 999 extra"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
}

const tir = "two-intended-refunds"

// verdictsOf lists a case's verdicts in intent order.
func verdictsOf(c *missions.Case) []missions.Verdict {
	var out []missions.Verdict
	for _, v := range c.Outcome.Verdicts {
		out = append(out, v.Verdict)
	}
	return out
}

// While the terminal is too small the screen says only how big it must
// be and that q quits: no other key acts behind it. Enlarged, the lab is
// where it was.
func TestTooSmallTakesNoKeyButQuit(t *testing.T) {
	m := newLab(t, Options{Dir: t.TempDir()}, 100, 30)
	m = resize(m, 30, 10)
	m = press(t, m, "enter", "k", "r", "n", "p")
	m = resize(m, 100, 30)
	if m.screen != screenPicker || m.cas != nil && m.pos != 0 {
		t.Fatalf("keys acted behind the too-small screen: screen %v", m.screen)
	}
	lab := press(t, newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30), "n")
	lab = press(t, resize(lab, 30, 10), "r", "k", "c")
	lab = resize(lab, 100, 30)
	if lab.pos != 1 || !lab.settings.StableKeys || lab.settings.Contract != ledger.V1 {
		t.Fatalf("keys acted behind the too-small screen: position %d, stable %v, %s", lab.pos, lab.settings.StableKeys, lab.settings.Contract)
	}
	if _, cmd := resize(lab, 30, 10).Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")}); cmd == nil {
		t.Fatal("q does not quit from the too-small screen")
	}
}
