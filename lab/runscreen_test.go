package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// The lab as a first-timer meets it: each test here failed before the
// fix it names.

// TestCounterNeverContradictsTheVerdict: beside a hidden effect the
// counter is not green "= as intended"; beside failed_cleanly it is not
// amber.
func TestCounterNeverContradictsTheVerdict(t *testing.T) {
	v1 := "v1"
	_ = v1
	for _, tc := range []struct {
		id      string
		verdict missions.Verdict
		notSay  string
	}{
		{"saved-server-error", missions.HiddenEffect, "= as intended"},
		{"failure-then-failure", missions.FailedCleanly, ""},
		{"changed-parameters", missions.HiddenEffect, "= as intended"},
	} {
		m := press(t, newLab(t, Options{Mission: tc.id, Dir: t.TempDir()}, 100, 30), "r")
		if v := worstVerdict(m.cas.Outcome.Verdicts); v != tc.verdict {
			t.Fatalf("%s ends %s, want %s", tc.id, v, tc.verdict)
		}
		style, words := m.header.counterLook()
		if want := m.st.verdictStyle(tc.verdict); style.GetForeground() != want.GetForeground() {
			t.Errorf("%s: the counter's colour %v is not the %s verdict's %v", tc.id, style.GetForeground(), tc.verdict, want.GetForeground())
		}
		if tc.notSay != "" && strings.Contains(words, tc.notSay) {
			t.Errorf("%s: the counter says %q beside %s", tc.id, words, tc.verdict)
		}
	}
}

// TestNoSpoilersFromPinOrEvidence: before the run ends, m does not tell
// the run's final count, and g does not tell where it will escalate.
func TestNoSpoilersFromPinOrEvidence(t *testing.T) {
	off := false
	m := newLab(t, Options{Mission: tts, Overrides: missions.Overrides{StableKeys: &off}, Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "m")
	if strings.Contains(m.status, "2 effects") || strings.Contains(m.status, "effect") {
		t.Errorf("pinning before the first step tells the count: %q", m.status)
	}
	m = press(t, m, "r", "x")
	m = newLab(t, Options{Mission: tts, Overrides: missions.Overrides{StableKeys: &off}, Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "r", "m")
	if !strings.Contains(m.status, "2 effects") {
		t.Errorf("pinning at the end does not tell the count: %q", m.status)
	}
	g := newLab(t, Options{Mission: "changed-parameters", Dir: t.TempDir()}, 100, 30)
	g = press(t, g, "p", "g")
	if strings.Contains(g.status, "escalates at step") || strings.Contains(g.status, "step 2") {
		t.Errorf("g before the escalation tells where it comes: %q", g.status)
	}
}

// TestVerdictInWords: at a run's end the lab says what the verdict means,
// as run does, and the help bar offers the pin that comes next.
func TestVerdictInWords(t *testing.T) {
	off := false
	m := press(t, newLab(t, Options{Mission: tts, Overrides: missions.Overrides{StableKeys: &off}, Dir: t.TempDir()}, 100, 30), "r")
	want := "duplicate: " + m.cas.Outcome.Verdicts[0].Explain()
	if !strings.Contains(m.View(), want) {
		t.Errorf("the lab does not say %q:\n%s", want, m.View())
	}
	if !strings.Contains(m.helpLine(), "m pin case") {
		t.Errorf("the help bar at the end does not offer m: %q", m.helpLine())
	}
}

// TestFirstTimeHidesCheckpoints: a first-time learner's timeline starts
// with the checkpoint rows hidden; h shows them.
func TestFirstTimeHidesCheckpoints(t *testing.T) {
	m := press(t, newLab(t, Options{Mission: tts, FirstTime: true, Dir: t.TempDir()}, 100, 30), "r")
	if !m.timeline.CheckpointsHidden() || strings.Contains(m.timeline.View(), "checkpoint →") {
		t.Fatalf("a first-timer sees checkpoint rows:\n%s", m.timeline.View())
	}
	if m = press(t, m, "h"); m.timeline.CheckpointsHidden() || !strings.Contains(m.timeline.View(), "checkpoint →") {
		t.Fatalf("h does not show them:\n%s", m.timeline.View())
	}
	if m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30); m.timeline.CheckpointsHidden() {
		t.Error("a learner past the first lesson starts with them hidden too")
	}
}

// TestAgentWordsAlwaysReachable: what the agent said last is on screen
// from its first word at 80x24, and tab reaches the panel so that ↑ brings
// back what it said before (the apology the retry's words pushed out).
func TestAgentWordsAlwaysReachable(t *testing.T) {
	for _, id := range []string{tts, "refund-still-pending", "changed-parameters", "crash-after-send"} {
		for _, p := range missions.Policies {
			m := newLab(t, Options{Mission: id, Overrides: missions.Overrides{Policy: &p}, Dir: t.TempDir()}, 80, 24)
			for pos := 0; pos < m.steps; pos++ {
				m = press(t, m, "n")
				last := ""
				for _, ev := range m.cas.Whole().Events {
					if ev.Say != "" {
						last = ev.Say
					}
				}
				if last == "" {
					continue
				}
				first := strings.Join(strings.Fields(last)[:3], " ")
				if !strings.Contains(strings.Join(strings.Fields(m.said.View()), " "), first) {
					t.Errorf("%s %s step %d: the agent's last words (%q) are not on screen from their start:\n%s", id, p, m.pos, last, m.said.View())
				}
			}
			if len(m.said.lines) < 2 {
				continue
			}
			if !m.said.Scrolls() {
				// Every entry on screen already: nothing to reach.
				continue
			}
			for i := 0; i < 2 && m.focus != focusSaid; i++ {
				m = press(t, m, "tab")
			}
			if m.focus != focusSaid {
				t.Fatalf("tab does not reach what the agent said, which scrolls")
			}
			firstSaid := strings.Join(strings.Fields(m.said.text(m.said.lines[0]))[:3], " ")
			for range m.said.lines {
				m = press(t, m, "up")
			}
			if !strings.Contains(strings.Join(strings.Fields(m.said.View()), " "), firstSaid) {
				t.Errorf("%s %s: ↑ does not bring back the first thing said (%q):\n%s", id, p, firstSaid, m.said.View())
			}
		}
	}
}

// The counter's words never say the count is well where its colour says
// it is not: a red or amber counter never reads "= as intended", and
// "= count only", which said nothing of why it was red, is gone.
func TestCounterWordsAgreeWithItsColour(t *testing.T) {
	st := DefaultStyles()
	for _, v := range append([]missions.Verdict{""}, missions.Verdicts...) {
		for effects := 0; effects <= 3; effects++ {
			words := counterState(effects, 1, v)
			style := st.outcomeStyle(effects, 1, v)
			if words == "= count only" {
				t.Errorf("%s with %d effects: %q", v, effects, words)
			}
			if strings.HasPrefix(words, "=") && style.GetForeground() != st.CountEqual.GetForeground() {
				t.Errorf("%s with %d effects: %q drawn in another colour than the count as intended", v, effects, words)
			}
		}
	}
}

// The source article's exercise, export included, in nine keys from the
// picker, each the one the screen suggests: the timeout, then success, with
// stable keys on (1 effect) and off (2), both outcomes replaced with
// failure_before_commit (0), the three cases compared and exported.
func TestSourceExerciseInNineKeys(t *testing.T) {
	dir := t.TempDir()
	m := newLab(t, Options{Dir: dir, FirstTime: true}, 80, 24)
	keys := []string{"enter", "r", "m", "k", "m", "F", "m", "v"}
	m = press(t, m, keys...)
	m = pressRun(t, m, "e")
	if m.screen != screenCompare || len(m.pinned) != 3 {
		t.Fatalf("after %v e: screen %d with %d pinned\n%s", keys, m.screen, len(m.pinned), m.View())
	}
	flat := strings.Join(strings.Fields(m.View()), " ")
	for _, want := range []string{"Same words, different ledgers", "Sorry, the refund of 45.00 on order 1042 failed.", "1, 2 and 0 effects", "exported 3 cases"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the compare screen does not say %q:\n%s", want, m.View())
		}
	}
	files, err := os.ReadDir(dir)
	if err != nil || len(files) != 3 {
		t.Fatalf("%d files exported (%v), want the three cases", len(files), err)
	}
	edited := 0
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		c, err := export.Unmarshal(f.Name(), data)
		if err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		if e := c.Mission.Edited; e != nil {
			edited++
			if e.From != tts || len(e.Steps) != 2 || e.Steps[0].To != missions.FailureBeforeCommit || e.Steps[1].To != missions.FailureBeforeCommit || c.Outcome.Effects != 0 {
				t.Errorf("%s: edited %+v with %d effects, want both steps of %s failure_before_commit and 0", f.Name(), e, c.Outcome.Effects, tts)
			}
		}
	}
	if edited != 1 {
		t.Errorf("%d edited cases exported, want 1", edited)
	}
}

// The counter says "not made" only where every intent short of its effect
// is one its caller believes failed, and nothing still executes: a
// guarded caller that does not know yet is short, not "not made".
func TestNotMadeOnlyWhenKnownFailed(t *testing.T) {
	shown := 0
	defer func() {
		if shown == 0 {
			t.Error("no step of any mission says not made")
		}
	}()
	for _, ms := range missions.BuiltIn().Missions {
		for _, p := range missions.Policies {
			m := newLab(t, Options{Mission: ms.ID, Overrides: missions.Overrides{Policy: &p}}, 100, 30)
			for pos := 1; pos <= m.steps; pos++ {
				m = press(t, m, "n")
				if !strings.Contains(m.header.View(), "not made") {
					continue
				}
				shown++
				if len(m.cas.Ledger.InFlight) > 0 {
					t.Errorf("%s %s step %d: not made while a request executes", ms.ID, p, pos)
				}
				for _, v := range m.cas.Outcome.Verdicts {
					if v.Effects == 0 && v.Belief != missions.BelievesFailed {
						t.Errorf("%s %s step %d: not made while %s believes %s", ms.ID, p, pos, v.Intent, v.Belief)
					}
				}
			}
		}
	}
}

// One pin made mid-run says what to do next, as one made at the end does:
// the contrasting case, not a compare of one.
func TestOnePinMidRunSuggestsTheContrast(t *testing.T) {
	m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 120, 30)
	m = press(t, m, "n", "m")
	if line := m.statusLine(); !strings.Contains(line, "k, then m pins the other case") || strings.Contains(line, "v compares") {
		t.Fatalf("status after one pin mid-run: %q", line)
	}
	m = press(t, m, "k", "m")
	if line := m.statusLine(); !strings.Contains(line, "v compares") {
		t.Fatalf("status after a second pin mid-run: %q", line)
	}
}

// f gives the selected step the next fixture of the world table and
// replays to the same position; the schedule marks the edited step, the
// header names the edited mission, and f round the table brings the
// mission back as it was. F gives every attempt one fixture, from
// failure_before_commit, and after the last the mission's own again. A
// step with no lone attempt says so.
func TestFixtureKeysEditTheSchedule(t *testing.T) {
	m := press(t, newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30), "n", "n")
	m = press(t, m, "f")
	if m.mission.Schedule[1].Fixture != missions.NextFixture(missions.Success) || m.pos != 2 {
		t.Fatalf("f at step 2: fixture %s at position %d", m.mission.Schedule[1].Fixture, m.pos)
	}
	if !strings.Contains(m.schedule.View(), editedTag) || !strings.Contains(m.View(), "(edited)") || !strings.Contains(m.statusLine(), "step 2: success →") {
		t.Fatalf("the edit is not shown:\n%s", m.View())
	}
	for range len(missions.Fixtures) - 1 {
		m = press(t, m, "f")
	}
	if m.mission != m.base || m.mission.Edited != nil || strings.Contains(m.View(), "(edited)") {
		t.Fatalf("f round the table: the mission is not its own again:\n%s", m.View())
	}
	m = press(t, m, "r", "F")
	if m.cas.Outcome.Effects != 0 || m.mission.Schedule[0].Fixture != missions.FailureBeforeCommit || m.mission.Schedule[1].Fixture != missions.FailureBeforeCommit {
		t.Fatalf("F: %d effects, %v", m.cas.Outcome.Effects, m.mission.Schedule)
	}
	if !strings.Contains(m.statusLine(), "effects 1 → 0") {
		t.Errorf("F: status %q", m.statusLine())
	}
	for range len(missions.Fixtures) {
		m = press(t, m, "F")
	}
	if m.mission.Edited != nil || m.cas.Outcome.Effects != 1 {
		t.Fatalf("F round the table: edited %v, %d effects", m.mission.Edited, m.cas.Outcome.Effects)
	}
	guarded := missions.Guarded
	g := press(t, newLab(t, Options{Mission: "original-still-running", Dir: t.TempDir(), Overrides: missions.Overrides{Policy: &guarded}}, 100, 30), "n", "n")
	if g = press(t, g, "f"); !strings.Contains(g.statusLine(), "step 2 is read back") || g.mission.Edited != nil {
		t.Fatalf("f on a read-back: %q", g.statusLine())
	}
}
