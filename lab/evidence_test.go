package lab

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/replaylab/replaylab/missions"
)

// guardedAt opens a built-in mission under the guarded policy, with
// stable keys as given, at a size.
func guardedAt(t *testing.T, id string, stable bool, w, h int) Model {
	t.Helper()
	p := missions.Guarded
	o := missions.Overrides{Policy: &p, StableKeys: &stable}
	return newLab(t, Options{Mission: id, Overrides: o, Dir: t.TempDir()}, w, h)
}

// flat joins a view's lines into one run of words, so text wrapped over
// several lines can be looked for whole.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestEvidenceKeyOnlyWhenThereIsEvidence(t *testing.T) {
	m := guardedAt(t, "changed-parameters", true, 80, 24)
	// Before the escalation: g is off, not offered, and does nothing.
	for m.pos < m.steps && len(m.cas.Outcome.Evidence) == 0 {
		if m.keys.Evidence.Enabled() || strings.Contains(m.helpLine(), "evidence") {
			t.Fatalf("step %d: g is offered before anything was escalated: %q", m.pos, m.helpLine())
		}
		if m = press(t, m, "g"); m.screen != screenLab {
			t.Fatalf("step %d: g left the lab screen without evidence", m.pos)
		}
		m = press(t, m, "n")
	}
	if len(m.cas.Outcome.Evidence) == 0 {
		t.Fatal("changed-parameters under the guarded policy escalated nothing")
	}
	if !m.keys.Evidence.Enabled() || !strings.Contains(m.helpLine(), "g evidence") {
		t.Fatalf("step %d: g is not offered once the intent is escalated: %q", m.pos, m.helpLine())
	}
	if !strings.Contains(m.statusLine(), "g shows the evidence") {
		t.Fatalf("the status line does not point at g: %q", m.statusLine())
	}

	m = press(t, m, "g")
	if m.screen != screenEvidence || !strings.Contains(m.View(), evidenceTitle) {
		t.Fatalf("g does not open the evidence:\n%s", m.View())
	}
	// Lab keys are off in the evidence view, and do nothing there.
	for _, b := range []struct {
		name string
		on   bool
	}{{"step back", m.keys.StepBack.Enabled()}, {"stable keys", m.keys.StableKeys.Enabled()}, {"pin", m.keys.Pin.Enabled()}} {
		if b.on {
			t.Errorf("%s is enabled in the evidence view", b.name)
		}
	}
	pos, settings := m.pos, m.settings
	if m = press(t, m, "b", "k", "p"); m.pos != pos || m.settings != settings || m.screen != screenEvidence {
		t.Fatal("lab keys acted from the evidence view")
	}
	if m = press(t, m, "esc"); m.screen != screenLab {
		t.Fatal("esc does not leave the evidence view")
	}
	if m = press(t, m, "g", "g"); m.screen != screenLab {
		t.Fatal("g does not close the evidence view it opened")
	}

	// Stepping back before the escalation, or a policy that never
	// escalates, takes the key away again.
	if m = press(t, m, "0"); m.keys.Evidence.Enabled() {
		t.Fatal("g stays enabled after restarting the run")
	}
	m = press(t, m, "r", "p") // the naive policy: no one is handed anything
	if m.settings.Policy != missions.Naive || m.keys.Evidence.Enabled() || strings.Contains(m.helpLine(), "evidence") {
		t.Fatalf("g offered under the naive policy: %q", m.helpLine())
	}
	if m = press(t, m, "g"); m.screen != screenLab {
		t.Fatal("g opened an empty evidence view")
	}
	if m = press(t, m, "esc"); m.keys.Evidence.Enabled() {
		t.Fatal("g enabled on the picker")
	}
}

func TestEvidenceViewShowsTheWholeBundle(t *testing.T) {
	cases := []struct {
		id     string
		stable bool
		want   []string
	}{
		{"changed-parameters", true, []string{
			"payload amount=45.00 order=1042", "payload amount=40.00 order=1042 ≠ #1",
			"observed mismatch · error mismatch (400) · response 400",
			"observed timeout · error timeout · response —",
			"read-backs: 1", "the provider's objects for it: 1 re_0001 succeeded",
		}},
		{"no-idempotency-contract", true, []string{
			"key none: no key was sent", "#1 t0 — amount=45.00 order=1042 timeout timeout —",
			"read-backs: 1 t0 found re_0001 succeeded", "re_0001 succeeded",
		}},
		{"timeout-before-commit", false, []string{
			"handed over at t2", "t1 found nothing t2 found nothing",
			"none: the provider holds nothing for this intent", "timeout timeout —",
		}},
	}
	for _, c := range cases {
		for _, s := range goldenSizes {
			t.Run(fmt.Sprintf("%s/%dx%d", c.id, s[0], s[1]), func(t *testing.T) {
				m := press(t, guardedAt(t, c.id, c.stable, s[0], s[1]), "r", "g")
				if m.screen != screenEvidence {
					t.Fatal("no evidence at the end of the run")
				}
				b := m.cas.Outcome.Evidence[0]
				// Everything in the bundle is on screen, and the bundle
				// fits without scrolling.
				text := m.evidence.lines
				if m.evidence.Scrolls() {
					t.Fatalf("the bundle needs %d lines; the view has %d", len(m.evidence.lines), m.evidence.rows())
				}
				got := flat(strings.Join(text, "\n"))
				want := []string{b.Intent, b.Reason}
				if b.Key != "" {
					want = append(want, "key "+b.Key)
				}
				for _, a := range b.Attempts {
					want = append(want, fmt.Sprintf("#%d", a.Attempt), fmt.Sprintf("t%d", a.Tick), a.Payload, string(a.Observed), a.Error)
					if a.Key != "" {
						want = append(want, a.Key)
					}
				}
				for _, r := range b.Reads {
					want = append(want, fmt.Sprintf("t%d found", r.Tick))
				}
				for _, o := range b.Objects {
					want = append(want, o.Object.String()+" "+o.Status.String())
				}
				if s[0] < 100 {
					want = append(want, c.want...) // the two-line layout's words
				}
				for _, w := range want {
					if !strings.Contains(got, flat(w)) {
						t.Errorf("the evidence view lacks %q:\n%s", w, m.View())
					}
				}
			})
		}
	}
}

func TestGoldenEvidence(t *testing.T) {
	for _, c := range []struct {
		id     string
		stable bool
	}{{"changed-parameters", true}, {"timeout-before-commit", false}} {
		for _, s := range goldenSizes {
			t.Run(fmt.Sprintf("%s/%dx%d", c.id, s[0], s[1]), func(t *testing.T) {
				m := press(t, guardedAt(t, c.id, c.stable, s[0], s[1]), "r", "g")
				golden.RequireEqual(t, m.View())
			})
		}
	}
}

func TestEvidenceScrollsWhenItDoesNotFit(t *testing.T) {
	m := press(t, guardedAt(t, "changed-parameters", true, MinWidth, MinHeight), "r", "g")
	if !m.evidence.Scrolls() {
		t.Fatalf("the bundle fits at %dx%d; this test needs one taller than the screen", MinWidth, MinHeight)
	}
	if !m.evidence.keys.Down.Enabled() || !strings.Contains(m.View(), "↑↓ scroll") {
		t.Fatal("a bundle taller than the screen does not offer scrolling")
	}
	top := m.View()
	if m = press(t, m, "down"); m.evidence.offset != 1 || m.View() == top {
		t.Fatalf("down: offset %d", m.evidence.offset)
	}
	m = press(t, m, "pgdown", "pgdown", "pgdown")
	if want := len(m.evidence.lines) - m.evidence.rows(); m.evidence.offset != want {
		t.Fatalf("pgdown past the end: offset %d, want %d", m.evidence.offset, want)
	}
	if !strings.Contains(m.View(), "re_0001 succeeded") {
		t.Fatalf("the end of the bundle is not reachable:\n%s", m.View())
	}
	if m = press(t, m, "pgup", "pgup", "up", "up"); m.evidence.offset != 0 {
		t.Fatalf("back to the top: offset %d", m.evidence.offset)
	}
	// A bundle that fits offers no scrolling.
	big := press(t, guardedAt(t, "changed-parameters", true, 120, 40), "r", "g")
	if big.evidence.keys.Up.Enabled() || strings.Contains(big.helpLine(), "scroll") {
		t.Fatalf("scrolling offered for a bundle that fits: %q", big.helpLine())
	}
}

func TestEvidenceScreenFillsTheTerminalExactly(t *testing.T) {
	for _, size := range [][2]int{{72, 20}, {80, 24}, {100, 30}, {120, 40}, {200, 60}} {
		w, h := size[0], size[1]
		m := press(t, guardedAt(t, "changed-parameters", true, w, h), "r", "g")
		lines := strings.Split(m.View(), "\n")
		if len(lines) != h {
			t.Errorf("%dx%d: %d lines", w, h, len(lines))
		}
		for i, l := range lines {
			if n := len([]rune(l)); n > w {
				t.Errorf("%dx%d: line %d is %d wide", w, h, i, n)
			}
		}
	}
}

// detailText is the timeline's detail strip as one run of words.
func detailText(m Model) string {
	lines := timelineLines(m)
	return flat(strings.Join(lines[len(lines)-m.timeline.detailH:], "\n"))
}

func TestDetailShowsTheWholeNote(t *testing.T) {
	m := press(t, guardedAt(t, "changed-parameters", true, 80, 24), "r")
	esc := m.cas.Whole().Events[len(m.cas.Whole().Events)-1]
	if esc.Kind != missions.EventEscalate {
		t.Fatalf("the last event is %s, want an escalation", esc.Kind)
	}
	// The row is cut at 80 columns; the strip under it is not.
	if tl := m.timeline.View(); strings.Contains(tl, esc.Note+"\n") || !strings.Contains(tl, "a person …") {
		t.Fatalf("expected the escalation row to be cut at 80 columns:\n%s", tl)
	}
	if got := detailText(m); !strings.Contains(got, "t1 "+esc.Note+" · the agent:") {
		t.Fatalf("the strip lacks the whole note %q: %q", esc.Note, got)
	}

	// Up moves the cursor to an earlier row; the strip follows it and
	// shows what the agent said with it.
	for m.timeline.Current().Kind != missions.EventCheckpoint || m.timeline.Current().Say == "" {
		before := m.timeline.cursor
		if m = press(t, m, "up"); m.timeline.cursor == before {
			t.Fatal("no checkpoint with the agent's words above the escalation")
		}
	}
	cur := m.timeline.Current()
	got := detailText(m)
	for _, want := range []string{"checkpoint → unknown · " + cur.Note, "the agent: “I don't know yet"} {
		if !strings.Contains(got, want) {
			t.Errorf("the strip for the cursor's row lacks %q: %q", want, got)
		}
	}
	if !strings.Contains(m.timeline.View(), "▸t0   checkpoint → unknown") {
		t.Errorf("the cursor's row is not marked:\n%s", m.timeline.View())
	}
	if m.keys.Up.Help().Desc != "pick row" {
		t.Errorf("↑/↓ is described as %q with the timeline focused", m.keys.Up.Help().Desc)
	}
	if m = press(t, m, "tab"); m.keys.Up.Help().Desc != "scroll" {
		t.Errorf("↑/↓ is described as %q with the ledger focused", m.keys.Up.Help().Desc)
	}
}

func TestDetailFitsEveryCatalogNoteAt80(t *testing.T) {
	// Every note of every catalog run, under both policies, is whole in
	// the strip at 80 columns: the strip's last line never ends cut
	// before the agent's words begin.
	for _, ms := range missions.BuiltIn().Missions {
		for _, p := range missions.Policies {
			m := press(t, labAt(t, ms.ID, p, 80, 24), "r")
			for i := range m.cas.Whole().Events {
				ev := &m.cas.Whole().Events[i]
				lines := m.timeline.detail(ev, m.timeline.w, m.timeline.detailH)
				got := flat(strings.Join(lines, "\n"))
				// Keys read as their letters (key A); the note is otherwise the engine's.
				if !strings.Contains(got, flat(m.timeline.names.named(ev.Note))) {
					t.Errorf("%s %s event %d: the strip cuts the note %q: %q", ms.ID, p, i, ev.Note, got)
				}
			}
		}
	}
}

func TestCursorKeepsItsEventWhenCheckpointsHide(t *testing.T) {
	m := press(t, guardedAt(t, "changed-parameters", true, 100, 30), "r", "up")
	ev := m.timeline.Current()
	if ev.Kind == missions.EventCheckpoint {
		t.Fatalf("setup: the cursor is on a checkpoint")
	}
	if m = press(t, m, "h"); m.timeline.Current().Seq != ev.Seq {
		t.Fatalf("hiding checkpoints moved the cursor from %s to %s", ev.Note, m.timeline.Current().Note)
	}
	if m = press(t, m, "h"); m.timeline.Current().Seq != ev.Seq {
		t.Fatal("showing checkpoints moved the cursor")
	}
	// Stepping follows the newest row again.
	if m = press(t, m, "b"); !m.timeline.follow || m.timeline.Current().Seq != m.cas.Log().Len() {
		t.Fatal("stepping does not bring the cursor back to the newest row")
	}
}
