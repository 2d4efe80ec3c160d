package conform

import (
	"strings"
	"testing"
)

// TestBeliefLinesAreNeverMissed: every line that tries to be a belief
// line is read or named as a problem: one whose "belief" comes after the
// first 64 KiB (written in pieces, the mention split across two writes),
// a field spelled "Belief", a field given twice, bytes that are not
// UTF-8 (shown back escaped, not dropped).
func TestBeliefLinesAreNeverMissed(t *testing.T) {
	sc := &Scenario{Intents: []Intent{{Intent: "refund-1042"}}}
	cases := []struct {
		name   string
		writes []string
		says   string
	}{
		{"a belief past 64 KiB", []string{`{"intent":"refund-1042","log":"` + strings.Repeat("x", lineLimit), `","bel`, `ief":"done"}` + "\n"}, "longer than 64 KiB"},
		{"Belief", []string{`{"intent":"refund-1042","Belief":"done"}` + "\n"}, `spell it belief`},
		{"belief twice", []string{`{"intent":"refund-1042","belief":"failed","belief":"done"}` + "\n"}, `"belief" appears twice`},
		{"not UTF-8", []string{"{\"intent\":\"refund-1042\",\"belief\":\"done\",\"evidence\":\"\xff\"}\n"}, `not UTF-8 (byte 53)`},
		{"a lone surrogate", []string{`{"intent":"refund-1042","belief":"done","refund":"re_\ud800"}` + "\n"}, `half of a surrogate pair`},
	}
	for _, c := range cases {
		var w lineWriter
		for _, p := range c.writes {
			_, _ = w.Write([]byte(p))
		}
		lines, overflow := w.beliefLines()
		b := newBeliefs(sc)
		b.read(1, lines, overflow)
		if len(b.byIntent["refund-1042"]) != 0 || len(b.problems) != 1 || !strings.Contains(b.problems[0], c.says) {
			t.Errorf("%s: beliefs %v, problems %q; want one problem saying %q", c.name, b.byIntent, b.problems, c.says)
		}
	}
	// The bad byte is shown, escaped.
	var w lineWriter
	_, _ = w.Write([]byte("{\"intent\":\"refund-1042\",\"belief\":\"done\",\"evidence\":\"\xff\"}\n"))
	lines, _ := w.beliefLines()
	b := newBeliefs(sc)
	b.read(1, lines, false)
	if len(b.problems) != 1 || !strings.Contains(b.problems[0], `\xff`) {
		t.Errorf("the line shown back: %q", b.problems)
	}
}

// TestScenarioAmountsAreOnesTheProviderTakes: an amount above the
// provider's largest refund is refused when the scenario is made, since
// every create would be refused and a client that sent nothing would
// pass the row.
func TestScenarioAmountsAreOnesTheProviderTakes(t *testing.T) {
	for s, want := range map[string]int64{"45.00": 4500, "999999.99": 99999999, "1": 100} {
		if got, err := cents(s); err != nil || got != want {
			t.Errorf("%s: %d %v, want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"1000000.00", "999999.991", "92233720368547758.07"} {
		if _, err := cents(s); err == nil {
			t.Errorf("%s: taken", s)
		}
	}
	if _, err := cents("1000000.00"); err == nil || !strings.Contains(err.Error(), "999999.99") {
		t.Errorf("1000000.00: %v; want the largest refund named", err)
	}
}
