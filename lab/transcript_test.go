package lab

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// An entry cut to the rows left keeps its start, marked where it goes on,
// and its ledger line: at 72x20 the apology read "…1042 failed. I'll",
// cut at the start of the very sentence the lesson is about.
func TestTranscriptCutKeepsTheStart(t *testing.T) {
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
		whole := p.block(e, 0)
		for rows := 2; rows < len(whole); rows++ {
			got := p.block(e, rows)
			if len(got) != rows || got[0] != whole[0] && rows > 2 || got[len(got)-1] != whole[len(whole)-1] {
				t.Fatalf("width %d, %d rows: %q\nwant the start of %q and its ledger line", w, rows, got, whole)
			}
			if cutLine := strings.TrimSpace(got[len(got)-2]); !strings.HasSuffix(cutLine, "…") {
				t.Fatalf("width %d, %d rows: the cut is not marked: %q", w, rows, got)
			}
			if first := strings.TrimSpace(got[0]); !strings.HasPrefix(first, "#1 ") {
				t.Fatalf("width %d, %d rows: the entry does not start with its mark: %q", w, rows, first)
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
