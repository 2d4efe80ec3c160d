package conform

import (
	"slices"
	"strings"
	"testing"
)

// FuzzBeliefLines: a line of a client's output is either ignored (it does
// not mention "belief"), taken as a belief for an intent the scenario
// gave with one of the four words, or named as a problem; never more than
// one of these, and never a panic.
func FuzzBeliefLines(f *testing.F) {
	for _, s := range []string{
		`{"intent":"refund-1042","belief":"done","refund":"re_0001"}`,
		`{"intent":"refund-1042","belief":"maybe"}`,
		`{"intent":"other","belief":"done"}`,
		`{"belief":`,
		`{"intent":"refund-1042","belief":"failed","evidence":"\u001b[31mred"}` + "\r",
		`{"intent":["x"],"belief":"done"}`,
		`plain output`,
		"\x00\"belief\"\xff",
	} {
		f.Add(s)
	}
	sc := &Scenario{Intents: []Intent{{Intent: "refund-1042"}}}
	f.Fuzz(func(t *testing.T, line string) {
		var w lineWriter
		_, _ = w.Write([]byte(line + "\n"))
		lines, overflow := w.beliefLines()
		b := newBeliefs(sc)
		b.read(1, lines, overflow)
		got := len(b.byIntent["refund-1042"])
		for id := range b.byIntent {
			if id != "refund-1042" {
				t.Fatalf("a belief taken for %q, an intent the scenario did not give", id)
			}
		}
		for _, bl := range b.byIntent["refund-1042"] {
			if !slices.Contains(beliefWords, bl.Belief) || bl.Run != 1 {
				t.Fatalf("belief %+v taken", bl)
			}
		}
		// The input may hold more than one line: each that mentions
		// "belief" gives one belief or one problem.
		mentions := 0
		for _, l := range strings.Split(line, "\n") {
			if strings.Contains(strings.ToLower(l), `"belief"`) {
				mentions++
			}
		}
		switch {
		case mentions == 0 && got > 0:
			t.Fatalf("a line without \"belief\" was read as one: %q", line)
		case mentions > 0 && got+len(b.problems) != mentions:
			t.Fatalf("%d belief lines gave %d beliefs and %d problems: %q", mentions, got, len(b.problems), line)
		}
	})
}
