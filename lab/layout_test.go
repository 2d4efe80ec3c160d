package lab

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// At 120x40 the seed lab's short runs leave room over. A blank line parts
// the bands, a rule closes the bottom row, and the rest is margin under
// the rule: no panel ends in a stretch of blank lines.
func TestSpareRoomStaysOutOfThePanels(t *testing.T) {
	blank := func(l string) bool { return strings.TrimSpace(l) == "" }
	for _, id := range []string{"timeout-then-success", "failure-then-failure", "timeout-before-commit"} {
		m := press(t, newLab(t, Options{Mission: id}, 120, 40), "r")
		v := m.View()
		lines := strings.Split(v, "\n")
		body := lines[:len(lines)-chromeLines]
		rule := -1
		for i, l := range body {
			if t := strings.TrimSpace(l); t != "" && strings.Trim(t, "─") == "" {
				rule = i
			}
		}
		if rule < 0 {
			t.Fatalf("%s: no rule closes the bottom row:\n%s", id, v)
		}
		if blank(body[rule-1]) {
			t.Errorf("%s: the bottom row ends in blank lines:\n%s", id, v)
		}
		for _, title := range []string{"what this mission shows", "▸ timeline", "schedule"} {
			i := -1
			for j, l := range body {
				if strings.HasPrefix(l, title) {
					i = j
				}
			}
			if i < 1 || !blank(body[i-1]) || blank(body[i-2]) {
				t.Errorf("%s: %q is not parted from the band above by one blank line:\n%s", id, title, v)
			}
		}
		run := 0
		for i, l := range body[:rule] {
			if run = map[bool]int{true: run + 1, false: 0}[blank(l)]; run > 1 {
				t.Fatalf("%s: blank lines inside the panels up to line %d:\n%s", id, i+1, v)
			}
		}
		for _, l := range body[rule+1:] {
			if !blank(l) {
				t.Fatalf("%s: text under the closing rule:\n%s", id, v)
			}
		}
	}
}

// Before the first step the mission's goal is on screen at every size the
// lab is drawn for: in its own panel where there is room for one, else in
// the timeline's empty rows (at 80x24, and under the guarded policy at
// 100x30, the goal was nowhere while those rows stood blank). Once the run
// starts, the rows are the run's.
func TestGoalShowsBeforeTheFirstStep(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 40}} {
		for _, ms := range []string{tts, "changed-parameters", "two-intended-refunds", "concurrent-duplicates"} {
			for _, keys := range [][]string{nil, {"p"}} {
				m := press(t, newLab(t, Options{Mission: ms}, size[0], size[1]), keys...)
				first, _, _ := strings.Cut(m.goal.text, ".")
				// The goal's first sentence, as wrapped on screen: its
				// first few words are enough to find it.
				words := strings.Join(strings.Fields(first)[:4], " ")
				if v := m.View(); !strings.Contains(v, "what this mission shows") || !strings.Contains(v, words) {
					t.Errorf("%s %v at %dx%d: no goal before the first step:\n%s", ms, keys, size[0], size[1], v)
				}
				if len(keys) > 0 && keys[0] == "p" && m.settings.Policy != missions.Guarded {
					t.Fatalf("p did not switch to guarded")
				}
				m = press(t, m, "n")
				if m.goal.h == 0 && strings.Contains(m.timeline.View(), "what this mission shows") {
					t.Errorf("%s %v at %dx%d: the goal stays in the timeline after a step", ms, keys, size[0], size[1])
				}
			}
		}
	}
}

// From 120 columns the schedule is as wide as its longest line needs, up
// to a third of the terminal, so a step is not cut while the panels beside
// it stand half empty ("failure_before_commit, new pa…" at 200x60). Its
// width does not change as the run steps; narrower terminals keep theirs.
func TestScheduleWidensOnWideTerminals(t *testing.T) {
	const step = "1 failure_before_commit, new payload"
	for _, size := range [][2]int{{120, 40}, {160, 50}, {200, 60}} {
		m := newLab(t, Options{Mission: "rejected-before-execution"}, size[0], size[1])
		w := m.schedule.w
		for pos := 0; pos <= m.steps; pos++ {
			if !strings.Contains(m.schedule.View(), step) {
				t.Fatalf("at %dx%d step %d the schedule cuts its first step:\n%s", size[0], size[1], pos, m.schedule.View())
			}
			if m.schedule.w != w {
				t.Fatalf("at %dx%d the schedule is %d wide at step %d, %d at the start", size[0], size[1], m.schedule.w, pos, w)
			}
			m = press(t, m, "n")
		}
	}
}

// At 80 columns the schedule shows its steps whole ("failure_before_comm…",
// "read back refund-10…" were cut), as wide as they need up to three
// eighths of the terminal.
func TestScheduleWholeAt80(t *testing.T) {
	for _, ms := range missions.BuiltIn().Missions {
		m := newLab(t, Options{Mission: ms.ID}, 80, 24)
		if need := m.schedule.Width(m.full); need <= 80*3/8 && strings.Contains(m.schedule.View(), "…") {
			t.Errorf("%s at 80 columns: the schedule cuts a step it has room for:\n%s", ms.ID, m.schedule.View())
		}
	}
	guarded := missions.Guarded
	m := press(t, newLab(t, Options{Mission: "original-still-running", Overrides: missions.Overrides{Policy: &guarded}}, 80, 24), "r")
	if !strings.Contains(m.schedule.View(), "read back refund-1042") {
		t.Fatalf("the read-back step is cut:\n%s", m.schedule.View())
	}
}

func TestPanelsAreSizedForTheWholeRun(t *testing.T) {
	m := ttsLab(t) // 100x30
	th, bh := m.timeline.h, m.holds.h
	for m.pos < m.steps {
		if m = press(t, m, "n"); m.timeline.h != th || m.holds.h != bh {
			t.Fatalf("step %d moved the panels: timeline %d→%d, bottom %d→%d", m.pos, th, m.timeline.h, bh, m.holds.h)
		}
	}
	if m.timeline.rows() < len(m.cas.Whole().Events) {
		t.Fatalf("at 100x30 the timeline shows %d of %d events", m.timeline.rows(), len(m.cas.Whole().Events))
	}
	// No stretch of blank lines across the whole screen.
	blank := 0
	for i, l := range strings.Split(m.View(), "\n") {
		if strings.TrimSpace(l) == "" {
			if blank++; blank >= 3 {
				t.Fatalf("blank lines up to line %d at 100x30:\n%s", i, m.View())
			}
			continue
		}
		blank = 0
	}

	// At 80x24 the timeline still holds the whole of this run, and the
	// bottom row is no taller than its tallest panel needs.
	small := press(t, newLab(t, Options{Mission: tts}, 80, 24), "r")
	if small.timeline.rows() < len(small.cas.Whole().Events) {
		t.Fatalf("at 80x24 the timeline shows %d of %d events", small.timeline.rows(), len(small.cas.Whole().Events))
	}
	if small.goal.h != 0 {
		t.Fatal("the goal takes room at 80x24")
	}
}
