package missions_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// FuzzParse feeds the mission parser arbitrary bytes. It must never panic;
// what it accepts must pass Validate and run under every setting the
// mission expects.
//
//	go test -run=^$ -fuzz=^FuzzParse$ -fuzztime=30s ./missions/
func FuzzParse(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("catalog", "*.yaml"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(validMission))
	f.Add([]byte(""))
	f.Add([]byte("id: [\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Add([]byte("id: x\ntitle: t\ngoal: g\nintents: []\nschedule: []\nexpect: []\n"))
	f.Add([]byte("&a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := missions.Parse("fuzz.yaml", data)
		if err != nil {
			if m != nil {
				t.Fatalf("Parse returned a mission and an error: %v", err)
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("Parse accepted a mission Validate rejects: %v\n%s", err, data)
		}
		if cheapToRun(m) {
			for _, e := range m.Expect {
				if _, err := missions.Run(m, m.Settings(e.When)); err != nil {
					t.Fatalf("a parsed mission does not run under %s: %v", e.When, err)
				}
			}
		}
	})
}

// cheapToRun keeps the fuzzer fast: a mission may legally wait thousands of
// ticks, which is correct but slow to explore.
func cheapToRun(m *missions.Mission) bool {
	ticks := 0
	var add func(steps []missions.Step)
	add = func(steps []missions.Step) {
		for _, st := range steps {
			ticks += st.Wait + st.Delay + 1
			add(st.Together)
		}
	}
	add(m.Schedule)
	return ticks < 2000 && len(m.Schedule) < 200
}
