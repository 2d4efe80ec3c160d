package missions

import (
	"encoding/json"
	"testing"
)

func exploreOne(t *testing.T, id string, depth int, alphabet []Fixture, s ...Settings) *Exploration {
	t.Helper()
	m, err := BuiltIn().Get(id)
	if err != nil {
		t.Fatal(err)
	}
	o := ExploreOptions{Depth: depth, MaxSchedules: DefaultMaxSchedules, Settings: s}
	for _, f := range alphabet {
		o.Alphabet = append(o.Alphabet, AlphabetStep(m, f))
	}
	if alphabet == nil {
		o.Alphabet = DefaultAlphabet(m)
	}
	x, err := Explore(m, o)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestExploreQuick(t *testing.T) {
	m, _ := BuiltIn().Get("timeout-then-success")
	off := false
	x := exploreOne(t, "timeout-then-success", 3, CoreFixtures, m.Settings(Overrides{StableKeys: &off}))
	r := x.Reports[0]
	t.Logf("%+v", r)
}

// TestFormatReadsBack: every catalog mission, written by Format, parses
// back as the same mission.
func TestFormatReadsBack(t *testing.T) {
	for _, m := range BuiltIn().Missions {
		data, err := Format(m)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(m.ID+".yaml", data)
		if err != nil {
			t.Fatalf("%s: %v\n%s", m.ID, err, data)
		}
		a, _ := json.Marshal(m)
		b, _ := json.Marshal(back)
		if string(a) != string(b) {
			t.Errorf("%s: read back differs\n%s\n%s", m.ID, a, b)
		}
	}
}
