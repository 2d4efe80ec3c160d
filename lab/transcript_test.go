package lab

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// TestTranscriptContinuationKeepsTheLineEnd shows the end of an entry
// whose first shown line is full: the "…" that marks it as a continuation
// takes the place of its first word, not of its last one.
func TestTranscriptContinuationKeepsTheLineEnd(t *testing.T) {
	st := DefaultStyles()
	p := newTranscript(&st)
	// The words are the guarded agent's for a pending refund, said in
	// answer to attempt 1 of the pending mission.
	m := press(t, guardedAt(t, "refund-pending-then-failed", true, 100, 30), "n")
	if len(m.said.lines) == 0 {
		t.Fatal("setup: the agent said nothing at step 1")
	}
	p.log = m.said.log
	e := m.said.lines[len(m.said.lines)-1]
	if got := p.text(e); !strings.Contains(got, "still pending") || len(got) < 100 {
		t.Fatalf("setup: the words are %q; want the long words on a pending refund", got)
	}
	for w := 20; w <= 40; w++ {
		p.SetSize(w, 0)
		checkTail(t, &p, e)
	}
}

func checkTail(t *testing.T, p *transcript, e said) {
	t.Helper()
	whole := p.block(e, 0)
	for tail := 2; tail < len(whole); tail++ {
		got := p.block(e, tail)
		first := strings.TrimSpace(got[0])
		if !strings.HasPrefix(first, "…") || strings.HasSuffix(first, "…") {
			t.Fatalf("width %d, tail %d: the first line is %q; want it to start with … and keep its end", p.w, tail, first)
		}
		full := strings.TrimSpace(whole[len(whole)-tail])
		if !strings.HasSuffix(full, strings.TrimPrefix(first, "…")) {
			t.Fatalf("tail %d: %q is not the end of %q", tail, first, full)
		}
		for i, l := range got[1:] {
			if l != whole[len(whole)-tail+1+i] {
				t.Fatalf("tail %d: line %d is %q, want %q", tail, i+1, l, whole[len(whole)-tail+1+i])
			}
		}
	}
}

// Words are marked with the attempt they answer only when said at its
// step; words said later (after a read-back, a restart) carry their tick.
// "#1 Done: …" after a crash read as if the lost reply had said it.
func TestTranscriptNamesTheAttemptOnlyAtItsStep(t *testing.T) {
	off := false
	for _, tc := range []struct {
		id   string
		o    missions.Overrides
		keys []string
		want []string
	}{
		{tts, missions.Overrides{}, []string{"r"}, []string{"#1", "#2"}},
		{tts, missions.Overrides{StableKeys: &off}, []string{"p", "r"}, []string{"#1", "t1"}},
		{"crash-after-send", missions.Overrides{}, []string{"p", "r"}, []string{"t1"}},
		{"concurrent-duplicates", missions.Overrides{}, []string{"p", "r"}, []string{"#1", "#2", "t2"}},
	} {
		m := press(t, newLab(t, Options{Mission: tc.id, Overrides: tc.o}, 100, 30), tc.keys...)
		var got []string
		for _, l := range m.said.lines {
			got = append(got, l.who())
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s %v: entries marked %v, want %v", tc.id, tc.keys, got, tc.want)
		}
	}
}

func TestTranscriptSaysWhatIsAboveIt(t *testing.T) {
	m := press(t, labAt(t, "concurrent-duplicates", missions.Guarded, 80, 24), "r")
	v := m.said.View()
	if !strings.Contains(v, "more") || !strings.Contains(v, "Done: the refund") {
		t.Fatalf("the agent-said panel hides earlier entries without saying so:\n%s", v)
	}
}
