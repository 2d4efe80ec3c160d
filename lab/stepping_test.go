package lab

import (
	"reflect"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

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
