package render_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/missions/missionstest"
	"github.com/replaylab/replaylab/render"
)

// runMission parses a mission file's text and runs it.
func runMission(t *testing.T, src string, o missions.Overrides) *missions.Case {
	t.Helper()
	m, err := missions.Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c, err := missions.Run(m, m.Settings(o))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestWriteUpLedgerAfterAFailedObject: once a pending refund has ended
// failed, the objects that stand are not the first ones created. The
// write-up once listed re_0001, the failed one, beside the words about
// re_0002.
func TestWriteUpLedgerAfterAFailedObject(t *testing.T) {
	m, err := missions.BuiltIn().Get("refund-pending-then-failed")
	if err != nil {
		t.Fatal(err)
	}
	off := false
	c, err := missions.Run(m, m.Settings(missions.Overrides{StableKeys: &off}))
	if err != nil {
		t.Fatal(err)
	}
	md, err := render.WriteUp(c)
	if err != nil {
		t.Fatal(err)
	}
	want := "went through (re_0002). | 1 effect: `re_0002` |"
	if !strings.Contains(string(md), want) {
		t.Errorf("the transcript does not show re_0002 standing after the retry; want %q in:\n%s", want, md)
	}
	held := render.HeldAfter(c, 4, 1)
	last := held[len(held)-1]
	if last.Count != 1 || len(last.Head) != 1 || last.Head[0].String() != "re_0002" || last.Last != 0 {
		t.Errorf("held after the last event: %+v, want re_0002 alone", last)
	}
}

// TestWriteUpGrowsWithTheRun: a long run's write-up names a few objects
// per transcript row, not every object so far, so its size grows with the
// run and not with its square (20,000 attempts once wrote gigabytes).
func TestWriteUpGrowsWithTheRun(t *testing.T) {
	off := false
	c := runMission(t, missionstest.ManyAttempts(60), missions.Overrides{StableKeys: &off})
	md, err := render.WriteUp(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := "60 effects: `re_0001`, …, `re_0060` |"; !strings.Contains(string(md), want) {
		t.Errorf("the last transcript row does not abbreviate; want %q", want)
	}
	for _, line := range strings.Split(string(md), "\n") {
		if n := strings.Count(line, "`re_"); n > 10 {
			t.Fatalf("a line names %d objects: %.200s…", n, line)
		}
	}
	held := render.HeldAfter(c, 4, 1)
	for i, h := range held {
		if h.Count != c.Events[i].Effects {
			t.Fatalf("event %d: %d objects stand, the event says %d effects", i+1, h.Count, c.Events[i].Effects)
		}
		if got := strings.Join(h.IDs(), " "); h.Count > 4 && got != fmt.Sprintf("re_0001 … re_%04d", h.Count) {
			t.Fatalf("event %d: %q", i+1, got)
		}
	}
}
