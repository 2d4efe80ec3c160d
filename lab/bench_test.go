package lab

import (
	"fmt"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// labWithEvents opens the lab at the end of a run of at least n events.
func labWithEvents(b *testing.B, n int) Model {
	b.Helper()
	off := false
	o := missions.Overrides{StableKeys: &off}
	// Learn how many events one attempt step makes, then size the schedule.
	probe, err := missions.Run(longMission(10), longMission(10).Settings(o))
	if err != nil {
		b.Fatal(err)
	}
	perStep := max(1, len(probe.Events)/10)
	steps := max(1, (n+perStep-1)/perStep)
	m := longMission(steps)
	lab := newLab(b, Options{Catalog: catalogOf(m), Overrides: o}, 120, 40)
	lab = press(b, openMission(b, lab, m), "r")
	if len(lab.cas.Events) < n {
		b.Fatalf("%d events, want at least %d", len(lab.cas.Events), n)
	}
	return lab
}

// BenchmarkLabView draws the lab screen for a short run and two long ones,
// with checkpoint rows shown and hidden. Only the rows on screen are built,
// so the cost follows the screen, not the run: a thousand events and ten
// thousand cost the same, and ten events (a timeline not yet full) a
// little less.
func BenchmarkLabView(b *testing.B) {
	for _, hidden := range []bool{false, true} {
		for _, n := range []int{10, 1000, 10000} {
			m := labWithEvents(b, n)
			name := fmt.Sprintf("events=%d", n)
			if hidden {
				m = press(b, m, "h")
				name += "/checkpoints-hidden"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportMetric(float64(len(m.cas.Events)), "events")
				for b.Loop() {
					_ = m.View()
				}
			})
		}
	}
}

// BenchmarkLabViewCursor draws the lab with the timeline's cursor moved
// half way up the run, so the rows on screen and the detail strip are
// those of an event in the middle: the cost follows the screen there too.
func BenchmarkLabViewCursor(b *testing.B) {
	for _, n := range []int{10, 10000} {
		m := labWithEvents(b, n)
		for range len(m.cas.Events) / 2 / max(1, m.timeline.rows()-1) {
			m = press(b, m, "pgup")
		}
		if n > 10 && m.timeline.follow {
			b.Fatal("the cursor did not move")
		}
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}

// BenchmarkCompareView draws the compare view for pinned runs of both
// sizes.
func BenchmarkCompareView(b *testing.B) {
	for _, n := range []int{10, 10000} {
		m := labWithEvents(b, n)
		m = press(b, m, "m", "k", "m", "v")
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}
