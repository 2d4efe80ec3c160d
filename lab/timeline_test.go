package lab

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// labAt opens a built-in mission at a size under the given policy.
func labAt(t *testing.T, id string, policy missions.Policy, w, h int) Model {
	t.Helper()
	return newLab(t, Options{Mission: id, Overrides: missions.Overrides{Policy: &policy}, Dir: t.TempDir()}, w, h)
}

// timelineLines is the timeline panel's part of the lab view.
func timelineLines(m Model) []string {
	return strings.Split(m.timeline.View(), "\n")
}

func TestCheckpointRowsHideAndShow(t *testing.T) {
	m := press(t, ttsLab(t), "r")
	before := m.View()
	if !strings.Contains(before, "checkpoint →") || !strings.Contains(m.helpLine(), "h hide checkpoints") {
		t.Fatalf("checkpoints are not shown, or h is not offered, by default:\n%s", before)
	}
	effects, rowsBefore := m.cas.Outcome.Effects, m.timeline.count()
	checkpoints := 0
	for _, ev := range m.cas.Whole().Events {
		if ev.Kind == missions.EventCheckpoint {
			checkpoints++
		}
	}

	m = press(t, m, "h")
	v := m.View()
	if !m.timeline.CheckpointsHidden() || strings.Contains(v, "checkpoint →") {
		t.Fatalf("h left checkpoint rows in the timeline:\n%s", v)
	}
	for _, want := range []string{"#1 key A ", "#2 key A, same", termtext.Plural(checkpoints, "checkpoint") + " hidden (h)", "effects 1"} {
		if !strings.Contains(v, want) {
			t.Errorf("with checkpoints hidden the view lacks %q:\n%s", want, v)
		}
	}
	if m.cas.Outcome.Effects != effects || checkpoints == 0 || m.timeline.count() != rowsBefore-checkpoints {
		t.Fatalf("hiding changed the run: effects %d (was %d), %d rows (was %d)", m.cas.Outcome.Effects, effects, m.timeline.count(), rowsBefore)
	}
	if m.keys.Checkpoints.Help().Desc != "show checkpoints" {
		t.Fatalf("help says %q while checkpoints are hidden", m.keys.Checkpoints.Help().Desc)
	}

	// The choice holds while the run moves and settings change.
	m = press(t, m, "0", "n", "k")
	if strings.Contains(m.View(), "checkpoint →") || !m.timeline.CheckpointsHidden() {
		t.Fatal("checkpoint rows came back after restart, step and a toggle")
	}
	if m = press(t, m, "h"); m.timeline.CheckpointsHidden() || !strings.Contains(m.View(), "checkpoint →") {
		t.Fatal("h does not show the checkpoint rows again")
	}
}

func TestCheckpointKeyLivesOnTheLabOnly(t *testing.T) {
	m := newLab(t, Options{Dir: t.TempDir()}, 100, 30)
	if m.keys.Checkpoints.Enabled() || strings.Contains(m.helpLine(), "checkpoints") {
		t.Fatal("the picker offers h")
	}
	m = press(t, m, "enter")
	if !m.keys.Checkpoints.Enabled() {
		t.Fatal("the lab does not offer h")
	}
	m = press(t, m, "r", "m", "v")
	if m.screen != screenCompare || m.keys.Checkpoints.Enabled() || strings.Contains(m.helpLine(), "checkpoints") {
		t.Fatal("the compare view offers h")
	}
	if m = press(t, m, "h"); m.timeline.CheckpointsHidden() {
		t.Fatal("h acted on the timeline from the compare view")
	}
	if full := press(t, m, "esc", "?").View(); !strings.Contains(full, "hide checkpoints") {
		t.Fatalf("the full help on the lab lacks h:\n%s", full)
	}
}

// columnSpan finds where a column starts and where the next begins in
// the timeline's heading, in cells.
func columnSpan(t *testing.T, head, col, next string) (int, int) {
	t.Helper()
	a, b := strings.Index(head, col), strings.Index(head, next)
	if a < 0 || b < 0 {
		t.Fatalf("heading %q lacks %q or %q", head, col, next)
	}
	return a, b // the heading is ASCII, so bytes are cells
}

func TestTimelineRowsKeepTheirColumns(t *testing.T) {
	m := press(t, labAt(t, "concurrent-duplicates", missions.Guarded, 140, 40), "r")
	lines := timelineLines(m)
	head := lines[1]
	provA, provB := columnSpan(t, head, "provider", "observed")
	fixA, _ := columnSpan(t, head, "fixture", "provider")
	whatA := strings.Index(head, "what happened")
	if whatA < 0 {
		t.Fatalf("no what-happened column at 140 wide: %q", head)
	}
	var provider, caller int
	for _, l := range lines[2 : 2+m.timeline.rows()] {
		r := []rune(l)
		if len(r) < whatA {
			r = append(r, []rune(strings.Repeat(" ", whatA-len(r)))...)
		}
		cellOf := func(a, b int) string { return strings.TrimSpace(string(r[a:b])) }
		switch {
		case strings.Contains(l, "(provider)"):
			provider++
			if cellOf(fixA, provA) != providerLabel || cellOf(provA, provB) != "late_commit" || !strings.Contains(l, "key A") || !strings.Contains(l, "1 ↑") {
				t.Errorf("provider row does not fill key, fixture, provider and effects: %q", l)
			}
		case strings.Contains(l, "checkpoint →"), strings.Contains(l, "read-back"):
			caller++
			if c := cellOf(provA, whatA); c != "" {
				t.Errorf("caller row puts %q under provider/observed/eff: %q", c, l)
			}
			if cellOf(whatA, len(r)) == "" && !strings.Contains(l, "submitted") {
				t.Errorf("caller row has no note under what happened: %q", l)
			}
		}
	}
	if provider != 1 || caller < 4 {
		t.Fatalf("%d provider rows, %d caller rows in:\n%s", provider, caller, strings.Join(lines, "\n"))
	}
}

func TestNarrowTimelineCarriesNotesAfterLabels(t *testing.T) {
	m := press(t, labAt(t, "changed-parameters", missions.Guarded, 80, 24), "r")
	v := m.timeline.View()
	for _, want := range []string{
		"checkpoint → unknown · outcome unknown: timeout",
		"!! escalated: the same key came back with different parameters",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("80-wide timeline lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "what happened") {
		t.Errorf("a what-happened column too narrow to read is drawn:\n%s", v)
	}
}

func TestTogetherStepsAreWhole(t *testing.T) {
	m := labAt(t, "concurrent-duplicates", missions.Naive, 80, 24)
	v := m.schedule.View()
	for _, want := range []string{"together, 2 workers:", "├ late_commit +2", "└ success"} {
		if !strings.Contains(v, want) {
			t.Errorf("schedule lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "…") {
		t.Errorf("schedule is cut:\n%s", v)
	}
	// Stepping onto the together step marks its first line.
	m = press(t, m, "n")
	if v = m.schedule.View(); !strings.Contains(v, "▶ 1 together") {
		t.Errorf("the current together step is not marked:\n%s", v)
	}
	if h := m.header.View(); !strings.Contains(h, "together: late_commit +2 | success") {
		t.Errorf("the header does not name the together step in short:\n%s", h)
	}
}

// A pending refund that ends failed takes its effect back; the timeline
// marks the fall as it marks a rise.
func TestTimelineMarksAFailedObject(t *testing.T) {
	m := press(t, labAt(t, "refund-pending-then-failed", missions.Naive, 140, 40), "r")
	var rise, fall bool
	for _, l := range timelineLines(m) {
		rise = rise || strings.Contains(l, "1 ↑")
		fall = fall || strings.Contains(l, "(provider)") && strings.Contains(l, "0 ↓")
	}
	if !rise || !fall {
		t.Errorf("want the pending object's rise and its fall on the provider's row:\n%s", strings.Join(timelineLines(m), "\n"))
	}
}

// Where the whole run fits with room over, a note too long for its column
// carries on under its row, whole; where it does not fit, notes are cut
// and the screen is laid out as before. Every line stays in the terminal.
func TestLongNotesWrapWhenTheRunFits(t *testing.T) {
	note := "" // the read-back's note, long enough to need three lines at 120
	m := press(t, guardedAt(t, "no-idempotency-contract", true, 120, 40), "r")
	for _, ev := range m.cas.Whole().Events {
		if ev.Kind == missions.EventRead {
			note = ev.Note
		}
	}
	if len(note) < 100 {
		t.Fatalf("the read-back note %q is too short to test wrapping", note)
	}
	rows := strings.Join(timelineLines(m), "\n")
	if !strings.Contains(flat(rows), note) || !m.timeline.wrapNotes {
		t.Fatalf("at 120x40 the read-back note is not whole in the rows:\n%s", rows)
	}
	for _, l := range strings.Split(m.View(), "\n") {
		if lipgloss.Width(l) > 120 {
			t.Fatalf("a line is %d wide", lipgloss.Width(l))
		}
	}
	small := press(t, guardedAt(t, "no-idempotency-contract", true, 80, 24), "r")
	if small.timeline.wrapNotes || strings.Contains(flat(strings.Join(timelineLines(small), "\n")), note) {
		t.Fatal("at 80x24 the run does not fit wrapped, yet notes wrap")
	}
}
