package lab

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

const tts = "timeout-then-success"

func ttsLab(t *testing.T) Model {
	return newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30)
}

// wantCase is the engine's own case for the mission after pos steps.
func wantCase(t *testing.T, id string, o missions.Overrides, pos int) *missions.Case {
	t.Helper()
	m, err := missions.BuiltIn().Get(id)
	if err != nil {
		t.Fatal(err)
	}
	r, err := missions.NewRunner(m, m.Settings(o))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < pos; i++ {
		r.Step()
	}
	return r.Case()
}

func TestStepKeysMoveForward(t *testing.T) {
	for _, k := range []string{"n", "space", "right"} {
		t.Run(k, func(t *testing.T) {
			m := press(t, ttsLab(t), k)
			if m.pos != 1 {
				t.Fatalf("%s: position %d, want 1", k, m.pos)
			}
			want := wantCase(t, tts, missions.Overrides{}, 1)
			if m.cas.Outcome.Effects != want.Outcome.Effects || len(m.cas.Whole().Events) != len(want.Events) {
				t.Fatalf("%s: lab shows %d effects/%d events, engine says %d/%d", k,
					m.cas.Outcome.Effects, len(m.cas.Whole().Events), want.Outcome.Effects, len(want.Events))
			}
		})
	}
}

func TestStepStopsAtTheEnd(t *testing.T) {
	m := press(t, ttsLab(t), "n", "n", "n")
	if m.pos != m.steps || m.steps != 3 {
		t.Fatalf("position %d of %d, want 3 of 3", m.pos, m.steps)
	}
	if m.keys.Step.Enabled() || m.keys.RunAll.Enabled() {
		t.Fatal("step and run stay enabled at the end")
	}
	m = press(t, m, "n")
	if m.pos != 3 {
		t.Fatalf("stepping past the end moved to %d", m.pos)
	}
}

func TestStepBackKeys(t *testing.T) {
	for _, k := range []string{"b", "left"} {
		t.Run(k, func(t *testing.T) {
			m := press(t, ttsLab(t), "n", "n", k)
			if m.pos != 1 {
				t.Fatalf("%s: position %d, want 1", k, m.pos)
			}
			if got, want := len(m.cas.Whole().Events), len(wantCase(t, tts, missions.Overrides{}, 1).Events); got != want {
				t.Fatalf("%s: %d events after stepping back, want %d", k, got, want)
			}
		})
	}
	m := ttsLab(t)
	if m.keys.StepBack.Enabled() || m.keys.Restart.Enabled() {
		t.Fatal("back and restart enabled at the start")
	}
	if m = press(t, m, "b"); m.pos != 0 {
		t.Fatalf("stepping back from the start moved to %d", m.pos)
	}
}

func TestRunToEndAndRestart(t *testing.T) {
	m := press(t, ttsLab(t), "r")
	if m.pos != m.steps {
		t.Fatalf("r: position %d, want %d", m.pos, m.steps)
	}
	full, _ := missions.Run(m.mission, m.settings)
	if m.cas.Outcome.Effects != full.Outcome.Effects || len(m.cas.Whole().Events) != len(full.Events) {
		t.Fatal("r does not show the whole run")
	}
	m = press(t, m, "0")
	if m.pos != 0 || len(m.cas.Whole().Events) != 0 || m.cas.Outcome.Effects != 0 {
		t.Fatalf("0: position %d, %d events, %d effects; want a fresh start", m.pos, len(m.cas.Whole().Events), m.cas.Outcome.Effects)
	}
}

func TestStableKeysToggleKeepsPositionAndMovesCounter(t *testing.T) {
	m := press(t, ttsLab(t), "r")
	if m.cas.Outcome.Effects != 1 {
		t.Fatalf("stable keys on: %d effects, want 1", m.cas.Outcome.Effects)
	}
	m = press(t, m, "k")
	if m.settings.StableKeys || m.pos != 3 {
		t.Fatalf("after k: stable keys %v at position %d, want off at 3", m.settings.StableKeys, m.pos)
	}
	if m.cas.Outcome.Effects != 2 || m.header.effects != 2 {
		t.Fatalf("after k: %d effects (header %d), want 2", m.cas.Outcome.Effects, m.header.effects)
	}
	if !strings.Contains(m.status, "effects 1 → 2") {
		t.Fatalf("status %q does not say how the counter moved", m.status)
	}
	// Mid-run too: the position stays where it was.
	m = press(t, m, "0", "n", "k")
	if m.pos != 1 || !m.settings.StableKeys {
		t.Fatalf("k mid-run: position %d, stable %v", m.pos, m.settings.StableKeys)
	}
}

func TestPolicyAndContractCycle(t *testing.T) {
	m := press(t, ttsLab(t), "n")
	var policies []missions.Policy
	for range 2 {
		m = press(t, m, "p")
		policies = append(policies, m.settings.Policy)
	}
	if policies[0] != missions.Guarded || policies[1] != missions.Naive {
		t.Fatalf("p cycles %v, want guarded then naive", policies)
	}
	var contracts []ledger.Contract
	for range 3 {
		m = press(t, m, "c")
		contracts = append(contracts, m.settings.Contract)
	}
	if contracts[0] != ledger.V2 || contracts[1] != ledger.None || contracts[2] != ledger.V1 {
		t.Fatalf("c cycles %v, want v2, none, v1", contracts)
	}
	if m.pos != 1 {
		t.Fatalf("toggles moved the position to %d", m.pos)
	}
	// Under contract none, keys are ignored: the retry is a second effect.
	m = press(t, m, "c", "c", "r")
	if m.settings.Contract != ledger.None || m.cas.Outcome.Effects != 2 {
		t.Fatalf("contract %s: %d effects, want none with 2", m.settings.Contract, m.cas.Outcome.Effects)
	}
}

func TestExportWritesTheFullRunAndNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	m := newLab(t, Options{Mission: tts, Dir: dir}, 100, 30)
	m = press(t, m, "n") // position does not matter: the full run is exported
	next, cmd := m.Update(keyMsg("e"))
	m = next.(Model)
	if cmd == nil {
		t.Fatal("e returned no command")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatal("Update wrote to disk before the command ran")
	}
	m = runCmd(t, m, cmd)
	path := filepath.Join(dir, "timeout-then-success.stable-keys-on.naive.v1.json")
	if !strings.Contains(m.status, path) || m.statusErr {
		t.Fatalf("status %q does not name %s", m.status, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := export.Unmarshal(path, data)
	if err != nil {
		t.Fatalf("exported case does not read back: %v", err)
	}
	if c.Outcome.Effects != 1 || len(c.Events) != len(wantCase(t, tts, missions.Overrides{}, 3).Events) {
		t.Fatal("export is not the full run")
	}

	// A second export goes next to the first, which stays as it was.
	if err := os.WriteFile(path, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	m = pressRun(t, m, "e")
	second := filepath.Join(dir, "timeout-then-success.stable-keys-on.naive.v1-2.json")
	if !strings.Contains(m.status, second) {
		t.Fatalf("status %q, want %s", m.status, second)
	}
	if b, _ := os.ReadFile(path); string(b) != "keep me" {
		t.Fatal("export overwrote an existing file")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
}

func TestExportFailureIsReported(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m := newLab(t, Options{Mission: tts, Dir: filepath.Join(blocker, "sub")}, 100, 30)
	m = pressRun(t, m, "e")
	if !m.statusErr || !strings.Contains(m.status, "export failed") {
		t.Fatalf("status %q (error %v), want the failure", m.status, m.statusErr)
	}
}

func TestPinAndCompare(t *testing.T) {
	m := ttsLab(t)
	if m.keys.Compare.Enabled() {
		t.Fatal("compare enabled with nothing pinned")
	}
	if m = press(t, m, "v"); m.screen != screenLab {
		t.Fatal("v opened compare with nothing pinned")
	}
	m = press(t, m, "m")
	if len(m.pinned) != 1 || m.pinned[0].Outcome.Effects != 1 {
		t.Fatalf("pinned %d cases", len(m.pinned))
	}
	if m = press(t, m, "m"); len(m.pinned) != 1 || !strings.Contains(m.status, "already pinned") {
		t.Fatalf("pinning the same case twice: %d pinned, status %q", len(m.pinned), m.status)
	}
	m = press(t, m, "k", "m", "v")
	if len(m.pinned) != 2 || m.screen != screenCompare {
		t.Fatalf("%d pinned, screen %d; want 2 on compare", len(m.pinned), m.screen)
	}
	if m.compare.cmp.Diverge != 2 {
		t.Fatalf("first divergence at attempt %d, want 2 (same words, 1 effect against 2)", m.compare.cmp.Diverge)
	}
	if m = press(t, m, "esc"); m.screen != screenLab {
		t.Fatal("esc does not leave compare")
	}
	m = press(t, m, "v", "x")
	if len(m.pinned) != 0 || m.screen != screenLab {
		t.Fatal("x does not clear the pins")
	}
}

func TestCompareExportWritesEveryPinnedCase(t *testing.T) {
	dir := t.TempDir()
	m := newLab(t, Options{Mission: tts, Dir: dir}, 100, 30)
	m = press(t, m, "m", "k", "m", "v")
	m = pressRun(t, m, "e")
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 || !strings.Contains(m.status, "exported 2 cases") {
		t.Fatalf("%d files, status %q", len(entries), m.status)
	}
}

func TestFocusAndScrolling(t *testing.T) {
	off := false
	m := newLab(t, Options{Catalog: catalogOf(longMission(50)), Overrides: missions.Overrides{StableKeys: &off}, Dir: t.TempDir()}, 100, 30)
	m = press(t, openMission(t, m, m.picker.Selected()), "r")
	end, last := m.timeline.offset, m.timeline.count()-1
	if end == 0 || !m.timeline.follow || m.timeline.cursor != last {
		t.Fatalf("the cursor does not follow the newest event (offset %d, cursor %d of %d)", end, m.timeline.cursor, last)
	}
	// The cursor moves first; the rows scroll only when it leaves them.
	if m = press(t, m, "up"); m.timeline.cursor != last-1 || m.timeline.offset != end || m.timeline.follow {
		t.Fatalf("up: cursor %d offset %d, want %d and %d", m.timeline.cursor, m.timeline.offset, last-1, end)
	}
	m = press(t, m, "pgup", "pgup")
	if m.timeline.cursor >= end || m.timeline.offset != m.timeline.cursor {
		t.Fatalf("pgup: cursor %d offset %d; want the cursor above the old first row, on the top row", m.timeline.cursor, m.timeline.offset)
	}
	if got := m.timeline.Current(); !reflect.DeepEqual(*got, m.cas.Whole().Events[m.timeline.cursor]) {
		t.Fatal("the current event is not the cursor's")
	}
	m = press(t, m, "pgdown", "pgdown", "down", "down", "down")
	if m.timeline.offset != end || !m.timeline.follow || m.timeline.cursor != last {
		t.Fatalf("moving back down: offset %d cursor %d, want %d and %d, following", m.timeline.offset, m.timeline.cursor, end, last)
	}
	m = press(t, m, "tab")
	if m.focus != focusLedger || !m.holds.focused || m.timeline.focused {
		t.Fatal("tab does not move the keys to the ledger")
	}
	m = press(t, m, "down", "down", "pgdown")
	if m.holds.offset == 0 || m.timeline.offset != end {
		t.Fatalf("ledger offset %d, timeline %d: scroll went to the wrong panel", m.holds.offset, m.timeline.offset)
	}
	m = press(t, m, "up")
	if m = press(t, m, "tab"); m.focus != focusSaid || !m.said.focused {
		t.Fatal("tab does not move the keys on to what the agent said")
	}
	if m = press(t, m, "tab"); m.focus != focusTimeline {
		t.Fatal("tab does not come back to the timeline")
	}
}

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

func TestPickerOpensAndFilters(t *testing.T) {
	m := newLab(t, Options{Dir: t.TempDir()}, 100, 30)
	if m.screen != screenPicker || !m.picker.keys.Open.Enabled() {
		t.Fatal("the lab does not start on the picker")
	}
	if m.keys.Step.Enabled() || m.keys.StableKeys.Enabled() {
		t.Fatal("lab keys enabled on the picker")
	}
	m = pressRun(t, m, "/")
	for _, r := range "failure-then-failure" {
		m = pressRun(t, m, string(r))
	}
	// While filtering, q is text, not quit.
	if _, cmd := m.Update(keyMsg("q")); cmd != nil {
		if _, ok := cmd().(tea.QuitMsg); ok {
			t.Fatal("q quit while typing a filter")
		}
	}
	m = pressRun(t, m, "enter") // accept the filter
	if got := m.picker.Selected(); got == nil || got.ID != "failure-then-failure" {
		t.Fatalf("filter selected %v", got)
	}
	m = pressRun(t, m, "enter") // open
	if m.screen != screenLab || m.mission.ID != "failure-then-failure" || m.pos != 0 {
		t.Fatal("enter does not open the selected mission")
	}
}

func TestSettingsCarryAcrossMissions(t *testing.T) {
	m := press(t, ttsLab(t), "k", "esc", "down", "enter")
	if m.mission.ID == tts || m.settings.StableKeys {
		t.Fatalf("opened %s with stable keys %v; want another mission with them still off", m.mission.ID, m.settings.StableKeys)
	}
}

func TestCommandLineOverridesApply(t *testing.T) {
	off := false
	m := newLab(t, Options{Mission: tts, Overrides: missions.Overrides{StableKeys: &off}}, 100, 30)
	if m = press(t, m, "r"); m.cas.Outcome.Effects != 2 {
		t.Fatalf("--stable-keys=off: %d effects, want 2", m.cas.Outcome.Effects)
	}
}

func TestUnknownMissionIsAnError(t *testing.T) {
	if _, err := New(Options{Mission: "no-such-mission"}); err == nil || !strings.Contains(err.Error(), "no-such-mission") {
		t.Fatalf("err = %v", err)
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

func TestPickerWhileFilteringFitsTheWidth(t *testing.T) {
	m := newLab(t, Options{Dir: t.TempDir()}, 80, 24)
	m = pressRun(t, m, "/")
	for _, r := range "pend" {
		m = pressRun(t, m, string(r))
	}
	for i, l := range strings.Split(m.View(), "\n") {
		trimmed := strings.TrimSpace(l)
		// Padding wider than the screen must be dropped, not cut: a cut
		// shows as a lone "…" or a "…" after the filter prompt.
		if trimmed == "…" || strings.HasPrefix(trimmed, "Filter:") && strings.HasSuffix(trimmed, "…") {
			t.Fatalf("line %d was cut at the edge: %q", i, l)
		}
	}
}

func TestCompareScrolls(t *testing.T) {
	// The seed lab's three cases are taller than 72x20, even with the
	// agent's words cut to a line.
	cat := seedCatalog(t)
	m := openMission(t, newLab(t, Options{Catalog: cat, Dir: t.TempDir()}, 72, 20), cat.Missions[0])
	m = press(t, m, "r", "m", "k", "r", "m", "esc", "down", "enter", "k", "r", "m", "v")
	if !m.compare.keys.Up.Enabled() || !strings.Contains(m.helpLine(), "↑/↓ scroll") {
		t.Fatalf("attempts hidden below, yet the help bar offers no scrolling: %s", m.helpLine())
	}
	start := m.compare.offset
	if m = press(t, m, "down"); m.compare.offset != start+1 {
		t.Fatalf("down: offset %d, want %d", m.compare.offset, start+1)
	}
	if m = press(t, m, "up", "up", "up"); m.compare.offset != 0 {
		t.Fatalf("up past the top: offset %d", m.compare.offset)
	}
	// Past the last row, the keys go on through the findings, and back.
	m = press(t, m, "pgdown", "pgdown", "pgdown", "pgdown", "down", "down", "down", "down", "down", "down")
	if m.compare.offset > len(m.compare.cmp.Rows)-1 || m.compare.findOff != len(m.compare.sentences())-1 {
		t.Fatalf("pgdown past the end: offset %d of %d rows, finding %d of %d", m.compare.offset, len(m.compare.cmp.Rows), m.compare.findOff, len(m.compare.sentences()))
	}
	m = press(t, m, "pgup", "pgup", "pgup", "pgup", "up", "up", "up", "up", "up", "up")
	if m.compare.offset != 0 || m.compare.findOff != 0 {
		t.Fatalf("pgup: offset %d, finding %d", m.compare.offset, m.compare.findOff)
	}
}

// Where every attempt and finding fits, the compare view has nothing to
// scroll: the help bar and the key list leave ↑/↓ out, and they move
// nothing. Where only findings wait below the rows, ↓ brings them and
// leaves the rows where they are.
func TestCompareOffersScrollingOnlyWhenThereIsMore(t *testing.T) {
	m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 40)
	m = press(t, m, "m", "k", "p", "m", "v")
	if m.screen != screenCompare || len(m.compare.cmp.Rows) < 2 {
		t.Fatalf("want the compare view of two attempts, got screen %d with %d rows", m.screen, len(m.compare.cmp.Rows))
	}
	if m.keys.Up.Enabled() || strings.Contains(m.helpLine(), "scroll") {
		t.Fatalf("everything fits, yet the help bar offers scrolling: %s\n%s", m.helpLine(), m.View())
	}
	if v := press(t, m, "?").View(); strings.Contains(v, "scroll") || strings.Contains(v, "pgup") {
		t.Fatalf("everything fits, yet the key list offers scrolling:\n%s", v)
	}
	if m = press(t, m, "down", "pgdown"); m.compare.offset != 0 || m.compare.findOff != 0 {
		t.Fatalf("down scrolled a view that fits: offset %d, finding %d", m.compare.offset, m.compare.findOff)
	}
	// A shorter terminal keeps both attempts on screen, with fewer lines
	// of the agent's words, rather than hide the second below blank lines;
	// the finding that no longer fits is a ↓ away.
	m = resize(m, 72, 20)
	if !strings.Contains(m.View(), "#2") || !m.compare.keys.Up.Enabled() {
		t.Fatalf("at 72x20 the second attempt is not on screen, or the findings below are not offered:\n%s", m.View())
	}
	if m = press(t, m, "down"); m.compare.offset != 0 || m.compare.findOff != 1 {
		t.Fatalf("down at 72x20: offset %d, finding %d", m.compare.offset, m.compare.findOff)
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

func TestKeySourceCyclesAndMergesTwoRefunds(t *testing.T) {
	m := press(t, newLab(t, Options{Mission: tir, Dir: t.TempDir()}, 80, 24), "r")
	if m.settings.KeySource != missions.KeyPerIntent || m.cas.Outcome.Effects != 2 {
		t.Fatalf("keys from %s: %d effects, want intent with 2", m.settings.KeySource, m.cas.Outcome.Effects)
	}
	m = press(t, m, "s")
	if m.settings.KeySource != missions.KeyPayloadHash || m.pos != m.steps {
		t.Fatalf("after s: keys from %s at position %d of %d, want payload_hash at the end", m.settings.KeySource, m.pos, m.steps)
	}
	want := wantCase(t, tir, missions.Overrides{KeySource: &m.settings.KeySource}, m.steps)
	if m.cas.Outcome.Effects != 1 || m.header.effects != 1 || want.Outcome.Effects != 1 {
		t.Fatalf("after s: %d effects (header %d, engine %d), want 1", m.cas.Outcome.Effects, m.header.effects, want.Outcome.Effects)
	}
	if got := verdictsOf(m.cas); len(got) != 2 || got[1] != missions.Phantom {
		t.Fatalf("after s: verdicts %v, want the second phantom", got)
	}
	if !strings.Contains(m.status, "keys from payload_hash") || !strings.Contains(m.status, "effects 2 → 1") {
		t.Fatalf("status %q does not say what changed and how the counter moved", m.status)
	}
	v := m.View()
	// Both intents send one key, the payload's hash: the second attempt
	// reads as the first's key again.
	for _, w := range []string{"keys from payload_hash", "phantom", "#2 key A, same"} {
		if !strings.Contains(v, w) {
			t.Errorf("view lacks %q:\n%s", w, v)
		}
	}

	// Under the guarded policy the caller sees the merge and escalates.
	m = press(t, m, "p")
	if got := verdictsOf(m.cas); len(got) != 2 || got[1] != missions.EscalatedV || !strings.Contains(m.View(), "escalated") {
		t.Fatalf("guarded with payload-hash keys: verdicts %v, want the second escalated", got)
	}
	if !m.keys.Evidence.Enabled() {
		t.Fatal("the escalation offers no evidence")
	}

	// Mid-run the position stays, and s comes back round to intent.
	m = press(t, m, "p", "0", "n", "n")
	if m.cas.Outcome.Effects != 1 {
		t.Fatalf("payload hash at step 2: %d effects, want 1", m.cas.Outcome.Effects)
	}
	m = press(t, m, "s")
	if m.settings.KeySource != missions.KeyPerIntent || m.pos != 2 || m.cas.Outcome.Effects != 2 {
		t.Fatalf("s again: keys from %s at position %d with %d effects, want intent at 2 with 2",
			m.settings.KeySource, m.pos, m.cas.Outcome.Effects)
	}
	if !strings.Contains(m.status, "keys from intent: replayed to step 2 of 3, effects 1 → 2") {
		t.Fatalf("status %q", m.status)
	}
}

func TestStableKeysUnderPayloadHashSayNoEffect(t *testing.T) {
	m := press(t, newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 80, 24), "r", "s")
	before := m.cas.Outcome.Effects
	m = press(t, m, "k")
	if m.settings.StableKeys || m.cas.Outcome.Effects != before {
		t.Fatalf("k under payload hash: stable keys %v, %d effects; want off, still %d", m.settings.StableKeys, m.cas.Outcome.Effects, before)
	}
	if !strings.Contains(m.status, "no effect") || !strings.Contains(m.status, "payload hash") {
		t.Fatalf("status %q does not say why k changed nothing", m.status)
	}
	// Back on per-intent keys the setting counts again: off makes the
	// retry a second refund.
	m = press(t, m, "s")
	if m.cas.Outcome.Effects != 2 || !strings.Contains(m.status, "effects 1 → 2") {
		t.Fatalf("s back to intent with stable keys off: %d effects, status %q", m.cas.Outcome.Effects, m.status)
	}
}

func TestKeySourceKeyHelp(t *testing.T) {
	m := newLab(t, Options{Dir: t.TempDir()}, 100, 30)
	if m.keys.KeySource.Enabled() {
		t.Fatal("s enabled on the picker")
	}
	m = press(t, m, "s")
	if m.screen != screenPicker || m.mission != nil {
		t.Fatal("s did something on the picker")
	}
	m = newLab(t, Options{Mission: tir, Dir: t.TempDir()}, 80, 24)
	if line := m.helpLine(); !strings.Contains(line, "s key source") || !strings.Contains(line, "k stable keys") {
		t.Fatalf("a mission about the key source: help %q lacks s or k", line)
	}
	m = press(t, m, "s")
	if line := m.helpLine(); !strings.Contains(line, "s key source") || strings.Contains(line, "stable keys") {
		t.Fatalf("under payload-hash keys: help %q, want s and not k", line)
	}
	if full := press(t, m, "?").View(); !strings.Contains(full, "s key source") || !strings.Contains(full, "k stable keys (no effect)") {
		t.Fatalf("full help:\n%s", full)
	}
	m = press(t, m, "r", "m", "v")
	if m.keys.KeySource.Enabled() || strings.Contains(m.helpLine(), "key source") {
		t.Fatal("s advertised on the compare view")
	}
	if m = press(t, m, "s"); m.settings.KeySource != missions.KeyPayloadHash || m.screen != screenCompare {
		t.Fatal("s acted on the compare view")
	}
	m = press(t, m, "esc", "p", "g")
	if m.screen != screenEvidence || m.keys.KeySource.Enabled() {
		t.Fatalf("evidence screen %v, s enabled %v", m.screen == screenEvidence, m.keys.KeySource.Enabled())
	}
	// A mission the key source is not part of keeps s out of the way.
	m = ttsLab(t)
	if line := m.helpLine(); strings.Contains(line, "key source") {
		t.Fatalf("timeout-then-success at 100 columns: help %q puts s before the common keys", line)
	}
}

func TestKeySourceTellsPinsApart(t *testing.T) {
	m := press(t, newLab(t, Options{Mission: tir, Dir: t.TempDir()}, 80, 24), "r", "m", "s", "m")
	if len(m.pinned) != 2 || !strings.Contains(m.status, "pinned B: keys from payload_hash") {
		t.Fatalf("%d pinned, status %q", len(m.pinned), m.status)
	}
	m = press(t, m, "v")
	heads := m.compare.cmp.Cases
	if heads[0].Label != "keys from intent" || heads[1].Label != "keys from payload_hash" {
		t.Fatalf("compare labels %q and %q, want the key sources", heads[0].Label, heads[1].Label)
	}
	if m.compare.cmp.Diverge != 2 {
		t.Fatalf("first divergence at attempt %d, want 2 (same words, 2 effects against 1)", m.compare.cmp.Diverge)
	}
}

// The settings line fits the header at 80 columns whatever the settings;
// with room to spare it says stable keys have no effect.
func TestHeaderNamesTheKeySourceAndFits(t *testing.T) {
	ph := missions.KeyPayloadHash
	for _, stable := range []bool{true, false} {
		for _, p := range missions.Policies {
			for _, c := range ledger.Contracts {
				o := missions.Overrides{StableKeys: &stable, Policy: &p, Contract: &c, KeySource: &ph}
				for _, id := range []string{tts, tir} {
					m := press(t, newLab(t, Options{Mission: id, Overrides: o}, 80, 24), "r")
					line := strings.Split(m.View(), "\n")[1]
					if !strings.Contains(line, "keys from payload_hash") || strings.Contains(line, "…") {
						t.Errorf("%s %s/%s/%s at 80: settings line %q", id, missions.OnOff(stable), p, c, line)
					}
				}
			}
		}
	}
	m := press(t, newLab(t, Options{Mission: tir, Overrides: missions.Overrides{KeySource: &ph}}, 104, 30), "r")
	if line := strings.Split(m.View(), "\n")[1]; !strings.Contains(line, "stable keys on (no effect)") {
		t.Fatalf("at 104 columns: settings line %q", line)
	}
	// Per-intent keys, the default, are not named.
	m = press(t, m, "s")
	if line := strings.Split(m.View(), "\n")[1]; strings.Contains(line, "keys from") || !strings.Contains(line, "stable keys on ·") {
		t.Fatalf("per-intent keys: settings line %q", line)
	}
}

// The compare view opens at the top when the first divergence is in
// sight from there, and on the row before it when it is not; a resize
// before any scrolling places it again, a scroll is never undone.
func TestCompareOpensWhereTheDivergenceShows(t *testing.T) {
	ms := longMission(4)
	// Two refusals first: the ledgers part at attempt 4, under the same
	// words, when stable keys are off.
	ms.Schedule[0].Fixture = missions.FailureBeforeCommit
	ms.Schedule[1].Fixture = missions.FailureBeforeCommit
	pinBoth := func(w, h int) Model {
		m := openMission(t, newLab(t, Options{Catalog: catalogOf(ms), Dir: t.TempDir()}, w, h), ms)
		return press(t, m, "r", "m", "k", "r", "m", "v")
	}
	tall := pinBoth(120, 60)
	if tall.compare.cmp.Diverge != 4 {
		t.Fatalf("the cases diverge at attempt %d, want 4", tall.compare.cmp.Diverge)
	}
	if tall.compare.offset != 0 || tall.compare.Scrolls() {
		t.Fatalf("at 120x60 every attempt fits, yet the view opens at row %d", tall.compare.offset)
	}
	short := pinBoth(80, 24)
	if short.compare.offset != 2 || !strings.Contains(short.View(), "#4 ◆") {
		t.Fatalf("at 80x24 the view opens at row %d, want 2 (the divergence in sight)\n%s", short.compare.offset, short.View())
	}
	if grown := resize(short, 120, 60); grown.compare.offset != 0 {
		t.Fatalf("grown to 120x60 before any scrolling, the view stays at row %d", grown.compare.offset)
	}
	// (A fresh lab: models share their key map, and the grown one has
	// just turned scrolling off in it.)
	// Scrolled, then grown to where every row fits: the rows above come
	// back rather than blank lines below the last (at 72x20 scrolled to
	// attempt 2, then 120x40, attempt 1 stayed hidden above 13 blank
	// lines). Grown only a little, the scroll stays.
	scrolled := press(t, pinBoth(80, 24), "up")
	if a := resize(scrolled, 81, 24); a.compare.offset != 1 {
		t.Fatalf("a resize that still does not fit every row undid the scroll: row %d, want 1", a.compare.offset)
	}
	if scrolled = resize(scrolled, 120, 60); scrolled.compare.offset != 0 || !strings.Contains(scrolled.View(), "#1 ") {
		t.Fatalf("grown to fit every row, the view stays at row %d:\n%s", scrolled.compare.offset, scrolled.View())
	}
}

// An export's status line keeps the end of the file name in sight however
// narrow the terminal: the numeric suffix of a second export is there.
func TestExportStatusKeepsTheFileNameEnd(t *testing.T) {
	dir := t.TempDir()
	m := newLab(t, Options{Mission: tts, Dir: dir}, 80, 24)
	// The case's name holds another file, edited by hand.
	if err := os.WriteFile(filepath.Join(dir, "timeout-then-success.stable-keys-on.naive.v1.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	m = pressRun(t, m, "e")
	line := m.statusLine()
	// The second export's name was taken: the line says so after the name.
	if !strings.HasPrefix(line, "exported to …") || !strings.HasSuffix(line, "stable-keys-on.naive.v1-2.json; the name was taken") || lipgloss.Width(line) > 80 {
		t.Fatalf("status line at 80 columns: %q", line)
	}
	// Wide enough, the whole sentence and path show, and the name taken.
	if wide := resize(m, 220, 24).statusLine(); !strings.HasPrefix(wide, "exported the full run to "+dir) ||
		!strings.HasSuffix(wide, "v1-2.json (timeout-then-success.stable-keys-on.naive.v1.json was there already)") {
		t.Fatalf("status line at 220 columns: %q", wide)
	}
	// The same case exported again is already there: no copy, and the
	// line says which file holds it.
	again := pressRun(t, m, "e")
	if files, _ := os.ReadDir(dir); len(files) != 2 || !strings.HasPrefix(resize(again, 220, 24).statusLine(), "already exported: "+dir) {
		t.Fatalf("exported again: %d files, status %q", len(files), resize(again, 220, 24).statusLine())
	}
	// The first export took its own name and says nothing of it.
	first := pressRun(t, newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 220, 24), "e").statusLine()
	if !strings.HasSuffix(first, "stable-keys-on.naive.v1.json") {
		t.Fatalf("first export: %q", first)
	}
	// Many cases, names taken by other files: the line says some took a
	// suffix; exported again, that they were there already.
	dir2 := t.TempDir()
	for _, name := range []string{"timeout-then-success.stable-keys-on.naive.v1.json", "timeout-then-success.stable-keys-off.naive.v1.json"} {
		if err := os.WriteFile(filepath.Join(dir2, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m = press(t, newLab(t, Options{Mission: tts, Dir: dir2}, 80, 24), "r", "m", "k", "m", "v")
	m = pressRun(t, m, "e")
	if line := m.statusLine(); !strings.HasPrefix(line, "exported 2 cases to …/") || !strings.HasSuffix(line, "; 2 got a -N suffix, the name being taken") || lipgloss.Width(line) > 80 {
		t.Fatalf("status line after exporting pins over taken names: %q", line)
	}
	m = pressRun(t, m, "e")
	if line := m.statusLine(); !strings.HasPrefix(line, "already exported: the 2 cases are in …/") || !strings.HasSuffix(line, " byte for byte, so nothing was written") || lipgloss.Width(line) > 80 {
		t.Fatalf("status line after exporting the pins again: %q", line)
	}
	if files, _ := os.ReadDir(dir2); len(files) != 4 {
		t.Fatalf("%d files after exporting the pins twice, want 4", len(files))
	}
}

func TestTakenName(t *testing.T) {
	for in, want := range map[string]string{
		"a.stable-keys-on.naive.v1-2.json":  "a.stable-keys-on.naive.v1.json",
		"a.stable-keys-on.naive.v1-12.json": "a.stable-keys-on.naive.v1.json",
		"a-b.json":                          "a-b.json",
		"a-.json":                           "a-.json",
	} {
		if got := takenName(in); got != want {
			t.Errorf("takenName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestToggleBringsTheCursorToTheNewest: after a setting change the run has
// other events, so the timeline's cursor goes back to the newest row
// rather than stay on a row number that now holds another event.
func TestToggleBringsTheCursorToTheNewest(t *testing.T) {
	m := press(t, ttsLab(t), "r", "up", "up")
	if m.timeline.cursor == m.timeline.count()-1 {
		t.Fatal("the cursor did not move up")
	}
	m = press(t, m, "k")
	if !m.timeline.follow || m.timeline.cursor != m.timeline.count()-1 {
		t.Errorf("after k: cursor %d of %d rows, following %v", m.timeline.cursor, m.timeline.count(), m.timeline.follow)
	}
}
