package lab

import (
	"fmt"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// TestLedgerPanelAgreesWithTheTimeline runs every catalog mission under
// the settings its expectations name and checks each object that was
// pending and resolved: the ledger panel gives it the tick of the
// timeline's row where it resolved, not the tick it was created.
func TestLedgerPanelAgreesWithTheTimeline(t *testing.T) {
	st := DefaultStyles()
	checked := 0
	for _, ms := range missions.BuiltIn().Missions {
		for _, e := range ms.Expect {
			c, err := missions.Run(ms, ms.Settings(e.When))
			if err != nil {
				t.Fatal(err)
			}
			p := newLedgerPanel(&st)
			p.SetSize(60, 20)
			p.SetCase(c)
			for _, o := range c.Ledger.Objects {
				if o.ResolveAt == 0 || o.Status == ledger.Pending {
					continue
				}
				tick := -1
				for _, ev := range c.Events {
					if ev.Kind == missions.EventResolve && strings.HasPrefix(ev.Note, o.ID.String()+" ") {
						tick = ev.Tick
					}
				}
				if tick < 0 {
					t.Fatalf("%s %s: no timeline row resolves %s", ms.ID, e.When, o.ID)
				}
				want := fmt.Sprintf("%s %s t%d", o.ID, o.Status, tick)
				if got := p.objectLine(o); !strings.Contains(got, want) {
					t.Errorf("%s %s: ledger panel says %q; the timeline resolves it at t%d", ms.ID, e.When, got, tick)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no mission has a pending object that resolved: this checks nothing")
	}
}

// TestLedgerPanelKeepsTheIntent checks that where objects of several
// intents share the panel, what tells the intents apart stays on screen:
// the whole intent where it fits, else its end, never the shared start
// alone ("refund-104…" for both).
func TestLedgerPanelKeepsTheIntent(t *testing.T) {
	for _, tc := range []struct {
		w    int
		want [2]string
	}{
		{72, [2]string{"…a", "…b"}},
		{80, [2]string{"…042-a", "…042-b"}},
		{100, [2]string{" refund-1042-a", " refund-1042-b"}},
	} {
		m := press(t, newLab(t, Options{Mission: "two-intended-refunds", Dir: t.TempDir()}, tc.w, 24), "r")
		view := m.holds.View()
		for _, in := range tc.want {
			if !strings.Contains(view, in) {
				t.Errorf("at %d columns the ledger panel does not show %q:\n%s", tc.w, in, view)
			}
		}
	}
}

// A ledger longer than its panel says where it is scrolled to however
// narrow the panel: the name gives way to the position, which was dropped
// whole at 72 columns, so nothing said there was more below.
func TestLedgerScrollPositionShowsWhenNarrow(t *testing.T) {
	off := false
	m := newLab(t, Options{Mission: "two-intended-refunds", Overrides: missions.Overrides{StableKeys: &off}}, 72, 20)
	m = press(t, m, "r", "tab", "down")
	if m.holds.lineCount() <= m.holds.rows() {
		t.Fatalf("the ledger fits (%d lines in %d rows): this checks nothing", m.holds.lineCount(), m.holds.rows())
	}
	title := strings.SplitN(m.holds.View(), "\n", 2)[0]
	if want := fmt.Sprintf("2/%d ↕", m.holds.lineCount()); !strings.Contains(title, "▸ ledger") || !strings.Contains(title, want) {
		t.Fatalf("ledger title %q, want the name shortened and %q", title, want)
	}
	// Wide, the whole name stays.
	wide := resize(m, 120, 20)
	if title := strings.SplitN(wide.holds.View(), "\n", 2)[0]; !strings.Contains(title, "▸ the ledger holds") {
		t.Fatalf("ledger title at 120 columns: %q", title)
	}
}

// An empty ledger says so whole in a narrow panel ("none: nothing
// commit…" at 72 columns).
func TestEmptyLedgerFitsANarrowPanel(t *testing.T) {
	m := newLab(t, Options{Mission: tts}, 72, 20)
	v := m.holds.View()
	// Narrow, the words give way, never to "none yet", which a finished
	// run that committed nothing would contradict.
	if strings.Contains(v, "…") || strings.Contains(v, "yet") || !strings.Contains(v, " none") {
		t.Fatalf("empty ledger at 72 columns:\n%s", v)
	}
	wide := resize(m, 100, 30)
	if v := wide.holds.View(); !strings.Contains(v, " none: nothing committed") || !strings.Contains(v, " none: no key saved") {
		t.Fatalf("empty ledger at 100 columns:\n%s", v)
	}
}

// Too narrow for "objects: 0 effects, 1 failed", the heading keeps the
// count whole and drops its first word.
func TestLedgerHeadingKeepsTheFailedCount(t *testing.T) {
	m := press(t, newLab(t, Options{Mission: "refund-pending-then-failed"}, 80, 24), "r")
	head := strings.Split(m.holds.View(), "\n")[1]
	if !strings.HasPrefix(strings.TrimSpace(head), "0 effects, 1 failed") {
		t.Fatalf("ledger heading at 80x24: %q", head)
	}
	wide := press(t, newLab(t, Options{Mission: "refund-pending-then-failed"}, 140, 40), "r")
	if head := strings.Split(wide.holds.View(), "\n")[1]; !strings.HasPrefix(strings.TrimSpace(head), "objects: 0 effects, 1 failed") {
		t.Fatalf("ledger heading at 140x40: %q", head)
	}
}
