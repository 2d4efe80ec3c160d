package lab

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/list"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/replaylab/replaylab/missions"
)

// typeFilter opens the picker's filter and types term, one key at a time.
func typeFilter(t *testing.T, m Model, term string) Model {
	t.Helper()
	m = pressRun(t, m, "/")
	for _, r := range term {
		m = pressRun(t, m, string(r))
	}
	return m
}

// visibleIDs are the ids of the missions the picker shows, in order.
func visibleIDs(m Model) []string {
	var ids []string
	for _, it := range m.picker.list.VisibleItems() {
		ids = append(ids, it.(missionItem).m.ID)
	}
	return ids
}

// TestPickerFilterMatchesWords checks that the filter keeps only the
// missions that hold the typed words, names first: the list's fuzzy
// filter found "pend" letter by letter in nearly every goal.
func TestPickerFilterMatchesWords(t *testing.T) {
	for _, tc := range []struct {
		term  string
		first []string // the first missions shown, in this order
		none  string   // a mission that must not be shown
	}{
		{"pend", []string{"refund-still-pending", "refund-pending-then-failed"}, "timeout-then-success"},
		{"two", []string{"two-intended-refunds"}, "no-idempotency-contract"},
		{"KEY expired", []string{"retry-after-key-expiry"}, "failure-then-failure"},
		{"twotwo", nil, "two-intended-refunds"},
	} {
		t.Run(tc.term, func(t *testing.T) {
			m := typeFilter(t, newLab(t, Options{Dir: t.TempDir()}, 100, 30), tc.term)
			ids := visibleIDs(m)
			if len(ids) == len(m.picker.list.Items()) {
				t.Fatalf("%q kept all %d missions", tc.term, len(ids))
			}
			for i, want := range tc.first {
				if i >= len(ids) || ids[i] != want {
					t.Fatalf("%q shows %v, want it to start with %v", tc.term, ids, tc.first)
				}
			}
			for _, id := range ids {
				if id == tc.none {
					t.Fatalf("%q shows %s: %v", tc.term, id, ids)
				}
			}
			if tc.first == nil && !strings.Contains(m.View(), "Nothing matched") {
				t.Fatalf("%q matches nothing, but the picker does not say so:\n%s", tc.term, m.View())
			}
		})
	}
}

// TestPickerWhileTyping checks what the picker offers while a filter is
// typed: enter keeps the filter (it does not open a mission), q is a
// letter, ctrl+c still quits, and the status line says so.
func TestPickerWhileTyping(t *testing.T) {
	m := typeFilter(t, newLab(t, Options{Dir: t.TempDir()}, 100, 30), "ti")
	if m.picker.keys.Open.Enabled() {
		t.Fatal("enter offered as open mission while it applies the filter")
	}
	if got := m.global.Quit.Help().Key; got != "ctrl+c" {
		t.Fatalf("quit shown as %q while q is text", got)
	}
	view := m.View()
	if !strings.Contains(view, "enter keeps the filter") || strings.Contains(view, "/ filters the list") {
		t.Fatalf("status line while typing:\n%s", view)
	}
	if strings.Contains(view, "? all keys") {
		t.Fatalf("? offered as all keys while it is a character of the filter:\n%s", view)
	}
	if m = pressRun(t, m, "?"); m.fullHelp || m.picker.list.FilterValue() != "ti?" {
		t.Fatalf("? while typing: help open %v, filter %q", m.fullHelp, m.picker.list.FilterValue())
	}
	m = pressRun(t, m, "backspace")
	_, cmd := m.Update(keyMsg("ctrl+c"))
	if cmd == nil {
		t.Fatal("ctrl+c does nothing while typing a filter")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("ctrl+c does not quit while typing a filter")
	}
	m = pressRun(t, m, "enter")
	if !m.picker.keys.Open.Enabled() || m.global.Quit.Help().Key != "q" {
		t.Fatal("enter and q not restored once the filter is kept")
	}
}

// TestPickerKeepsTheMissionLeftUnderAFilter opens a mission from a
// filtered list and goes back: the mission just left is the one
// highlighted, with the filter on and once it is cleared.
func TestPickerKeepsTheMissionLeftUnderAFilter(t *testing.T) {
	m := pressRun(t, typeFilter(t, newLab(t, Options{Dir: t.TempDir()}, 100, 30), "refund"), "enter")
	m = press(t, m, "down", "down")
	want := m.picker.Selected().ID
	m = press(t, m, "enter", "r", "esc")
	if got := m.picker.Selected(); got == nil || got.ID != want {
		t.Fatalf("back from %s under the filter, the picker highlights %v", want, got)
	}
	m = pressRun(t, m, "esc") // clear the filter
	if got := m.picker.Selected(); got == nil || got.ID != want {
		t.Fatalf("filter cleared after %s, the picker highlights %v", want, got)
	}
}

// TestOpeningSaysWhichSettingsCarryOver changes settings on one mission
// and opens others: the status line names each setting that differs from
// the new mission's own, and says nothing when none does.
func TestOpeningSaysWhichSettingsCarryOver(t *testing.T) {
	m := press(t, ttsLab(t), "p", "c", "c", "esc") // guarded, contract none
	m = pressRun(t, typeFilter(t, m, "no-idempotency"), "enter")
	m = press(t, m, "enter")
	if m.mission.ID != "no-idempotency-contract" {
		t.Fatalf("opened %s", m.mission.ID)
	}
	if m.status != "settings kept from before: policy guarded (its own: naive)" {
		t.Fatalf("status after opening: %q", m.status)
	}
	m = press(t, m, "c", "c", "esc") // contract none → v1 → v2
	m = pressRun(t, m, "esc")        // drop the filter
	m.picker.Select(tts)
	m = press(t, m, "enter")
	if want := "settings kept from before: policy guarded (its own: naive) · contract v2 (its own: v1)"; m.status != want {
		t.Fatalf("status after opening: %q, want %q", m.status, want)
	}
	m = press(t, m, "p", "c", "c", "esc", "enter") // naive, contract none → v1
	if m.status != "" {
		t.Fatalf("the mission's own settings, yet the status says %q", m.status)
	}
}

// TestSlashStartsAFreshFilter: a second / starts a new filter; it used to
// append to the one before.
func TestSlashStartsAFreshFilter(t *testing.T) {
	m := typeFilter(t, newLab(t, Options{Dir: t.TempDir()}, 100, 30), "pend")
	m = pressRun(t, m, "enter")
	if m.picker.list.FilterState() != list.FilterApplied {
		t.Fatalf("the filter is not applied: %v", m.picker.list.FilterState())
	}
	m = typeFilter(t, m, "two")
	if got := m.picker.list.FilterValue(); got != "two" {
		t.Errorf("the second filter reads %q, want %q", got, "two")
	}
	if ids := visibleIDs(m); len(ids) == 0 || ids[0] != "two-intended-refunds" {
		t.Errorf("the second filter shows %v", ids)
	}
}

// TestEnterOnNoMatchOpensNothing: a filter that matches nothing, kept with
// enter, leaves no mission to open, and enter again opens none.
func TestEnterOnNoMatchOpensNothing(t *testing.T) {
	m := typeFilter(t, newLab(t, Options{Dir: t.TempDir()}, 100, 30), "twotwo")
	m = pressRun(t, m, "enter")
	m = pressRun(t, m, "enter")
	if m.screen != screenPicker || m.mission != nil {
		t.Fatalf("enter on a filter that matched nothing opened %v", m.mission.ID)
	}
	if !strings.Contains(m.View(), "no mission matches") && !strings.Contains(m.View(), "Nothing matched") {
		t.Errorf("the picker does not say nothing matched:\n%s", m.View())
	}
}

// TestGoalNeverCutMidWord: where the goal does not fit, its last line
// ends on a whole word and a mark, and no row stands empty under it.
func TestGoalNeverCutMidWord(t *testing.T) {
	goal := paragraph(missions.BuiltIn().Missions[0].Goal)
	words := strings.Fields(goal)
	for w := 30; w <= 90; w += 7 {
		lines := firstLines(wrap(goal, w), 2, w, " …")
		last := strings.TrimSuffix(lines[1], " …")
		if !strings.HasSuffix(lines[1], " …") {
			t.Fatalf("width %d: the cut line does not end with the mark: %q", w, lines[1])
		}
		got := strings.Fields(lines[0] + " " + last)
		for i, word := range got {
			if word != words[i] {
				t.Fatalf("width %d: word %d is %q, not %q: a word was cut (%q)", w, i, word, words[i], lines[1])
			}
		}
	}
	for h := 24; h <= 30; h++ {
		m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 80, h)
		view := m.timeline.View()
		rows := strings.Split(view, "\n")
		if !strings.Contains(view, "what this mission shows") {
			continue
		}
		if strings.Contains(view, " …") && strings.TrimSpace(rows[len(rows)-1]) == "" {
			t.Errorf("height %d: the goal is cut while its last row stands empty:\n%s", h, view)
		}
	}
}

// A goal that does not fit shows the whole sentences that do, marked as
// going on, rather than a sentence cut in its middle.
func TestGoalCutBetweenSentences(t *testing.T) {
	st := DefaultStyles()
	p := newGoalPanel(&st)
	p.text = "A timeout can hide a refund. The provider commits the first refund but its reply never arrives, so the caller tries again."
	p.SetSize(30, 3)
	got := p.fit(2)
	if len(got) != 1 || got[0] != "A timeout can hide a refund. …" {
		t.Errorf("cut goal: %q", got)
	}
	p.text = "One sentence far too long for the lines it is given to fit in whole here."
	if got := p.fit(2); len(got) != 2 || !strings.HasSuffix(got[1], "…") {
		t.Errorf("a first sentence too long: %q", got)
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

func TestUnknownMissionIsAnError(t *testing.T) {
	if _, err := New(Options{Mission: "no-such-mission"}); err == nil || !strings.Contains(err.Error(), "no-such-mission") {
		t.Fatalf("err = %v", err)
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

// The picker counts a mission's steps as the lab does: the schedule's,
// then the clock running out, which the lab steps through as one more.
func TestPickerCountsStepsAsTheLab(t *testing.T) {
	m := newLab(t, Options{Dir: t.TempDir()}, 120, 40)
	sel := m.picker.Selected()
	if v := m.View(); !strings.Contains(v, fmt.Sprintf("schedule: %d steps, then the clock runs out", len(sel.Schedule))) {
		t.Fatalf("the picker's detail does not count the steps as the lab does:\n%s", v)
	}
	m = press(t, m, "enter")
	if v := m.View(); !strings.Contains(v, fmt.Sprintf("ready · %d steps", len(sel.Schedule)+1)) {
		t.Fatalf("the lab does not count the clock running out as a step:\n%s", v)
	}
}
