package lab

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"pgregory.net/rapid"

	"github.com/replaylab/replaylab/missions"
)

// labKeys are the keys a person might press anywhere in the lab, quitting
// aside: every binding, the filter's keys and a few that mean nothing.
var labKeys = []string{
	"n", "space", "right", "b", "left", "r", "0", "k", "p", "c", "s", "h",
	"m", "v", "g", "e", "?", "esc", "enter", "tab", "up", "down", "pgup",
	"pgdown", "/", "t", "x", "backspace",
}

// TestAnyKeysAnySize presses generated sequences of keys at generated
// terminal sizes, resizing on the way, and checks after every key what a
// person relies on: the screen fills the terminal exactly, no line is
// wider than it, and the effect counter shows the engine's own count for
// the mission, settings and position the lab holds.
func TestAnyKeysAnySize(t *testing.T) {
	all := missions.BuiltIn().Missions
	rapid.Check(t, func(rt *rapid.T) {
		id := rapid.SampledFrom(all).Draw(rt, "mission").ID
		w := rapid.IntRange(1, 220).Draw(rt, "width")
		h := rapid.IntRange(1, 70).Draw(rt, "height")
		m := newLab(t, Options{Mission: id, Dir: t.TempDir()}, w, h)
		n := rapid.IntRange(1, 40).Draw(rt, "presses")
		for i := 0; i < n; i++ {
			if rapid.IntRange(0, 9).Draw(rt, "resize?") == 0 {
				w = rapid.IntRange(1, 220).Draw(rt, "width")
				h = rapid.IntRange(1, 70).Draw(rt, "height")
				m = resize(m, w, h)
			}
			k := rapid.SampledFrom(labKeys).Draw(rt, "key")
			next, _ := m.Update(keyMsg(k))
			m = next.(Model)
			checkScreen(rt, m, w, h, k)
		}
	})
}

func checkScreen(rt *rapid.T, m Model, w, h int, k string) {
	v := m.View()
	lines := strings.Split(v, "\n")
	if len(lines) != h {
		rt.Fatalf("after %q at %dx%d: %d lines\n%s", k, w, h, len(lines), v)
	}
	for i, l := range lines {
		if lw := lipgloss.Width(l); lw > w {
			rt.Fatalf("after %q at %dx%d: line %d is %d wide\n%s", k, w, h, i, lw, v)
		}
	}
	if m.mission == nil {
		return
	}
	if m.pos < 0 || m.pos > m.steps {
		rt.Fatalf("after %q: position %d of %d steps", k, m.pos, m.steps)
	}
	r, err := missions.NewRunner(m.mission, m.mission.Settings(m.over))
	if err != nil {
		rt.Fatal(err)
	}
	for i := 0; i < m.pos; i++ {
		r.Step()
	}
	want := r.Case().Outcome.Effects
	if m.cas.Outcome.Effects != want {
		rt.Fatalf("after %q: the lab holds %d effects, the engine %d", k, m.cas.Outcome.Effects, want)
	}
	onLab := m.screen == screenLab && !m.fullHelp && w >= MinWidth && h >= MinHeight
	if onLab && !strings.Contains(v, fmt.Sprintf("effects %d", want)) {
		rt.Fatalf("after %q at %dx%d: the counter does not show effects %d\n%s", k, w, h, want, v)
	}
}

// TestStatusLineFitsAnyLabSize presses generated keys at generated sizes
// from the smallest the lab draws in: what the status line says always
// fits whole, in fewer words where the line is narrow, instead of being
// cut ("tab gives them back to the tim…"). An export's path is cut on
// purpose, from the left, and an error says all it has.
func TestStatusLineFitsAnyLabSize(t *testing.T) {
	all := missions.BuiltIn().Missions
	rapid.Check(t, func(rt *rapid.T) {
		id := rapid.SampledFrom(all).Draw(rt, "mission").ID
		w := rapid.IntRange(MinWidth, 90).Draw(rt, "width")
		h := rapid.IntRange(MinHeight, 40).Draw(rt, "height")
		m := newLab(t, Options{Mission: id, Dir: t.TempDir()}, w, h)
		n := rapid.IntRange(1, 40).Draw(rt, "presses")
		for i := 0; i < n; i++ {
			k := rapid.SampledFrom(labKeys).Draw(rt, "key")
			next, _ := m.Update(keyMsg(k))
			m = next.(Model)
			if m.statusErr || m.exportedTo.path != "" {
				continue
			}
			if line := m.statusLine(); strings.HasSuffix(line, "…") && !strings.HasPrefix(line, "exporting") {
				rt.Fatalf("after %q at %dx%d the status line is cut: %q (status %q)", k, w, h, line, m.status)
			}
		}
	})
}

// TestFlowCountIsTheLinesFlowBreakLays: the counter that measures every
// row of a run gives the lines flowBreak lays, for any words (wide
// characters, words longer than a line, runs of spaces) and any room.
func TestFlowCountIsTheLinesFlowBreakLays(t *testing.T) {
	pieces := []string{"a", "refund", "re_0001", "ik_42642b7ade", "“Sorry,", "退款", "✓", "🙂", "x", "   ", " ", "\t",
		"supercalifragilisticexpialidocious-and-then-some", "退款退款退款退款退款退款退款退款退款"}
	rapid.Check(t, func(rt *rapid.T) {
		var spans []span
		for range rapid.IntRange(0, 5).Draw(rt, "spans") {
			var b strings.Builder
			for range rapid.IntRange(0, 8).Draw(rt, "words") {
				b.WriteString(rapid.SampledFrom(pieces).Draw(rt, "piece"))
				if rapid.Bool().Draw(rt, "space") {
					b.WriteString(" ")
				}
			}
			spans = append(spans, span{text: b.String(), whole: rapid.Bool().Draw(rt, "whole")})
		}
		room := rapid.IntRange(-1, 60).Draw(rt, "room")
		if got, want := flowCount(spans, room), len(flowBreak(spans, room)); got != want {
			rt.Fatalf("room %d, spans %+v: flowCount %d, flowBreak lays %d lines", room, spans, got, want)
		}
	})
}
