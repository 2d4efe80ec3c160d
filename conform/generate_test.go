package conform

import (
	"bytes"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// TestGeneratedSchedulesAreMissions: every generated schedule is a
// mission file validate accepts (its expect block holds), that a live
// client can meet, and the same seed gives the same bytes.
func TestGeneratedSchedulesAreMissions(t *testing.T) {
	kinds := map[string]int{}
	for i := range 400 {
		m := Generate(7, i)
		data, err := missions.Format(m)
		if err != nil {
			t.Fatalf("schedule %d: %v", i, err)
		}
		again, _ := missions.Format(Generate(7, i))
		if !bytes.Equal(data, again) {
			t.Fatalf("schedule %d: two draws of seed 7 differ", i)
		}
		if _, problems := missions.ValidateFile(m.ID+".yaml", data, missions.BuiltIn(), missions.Run); len(problems) > 0 {
			t.Fatalf("schedule %d does not validate: %v\n%s", i, problems, data)
		}
		sc, err := FromMission(m)
		if err != nil {
			t.Fatalf("schedule %d: a live client cannot meet it: %v", i, err)
		}
		if sc.Workers > 1 {
			kinds["together"]++
		}
		if sc.Crash {
			kinds["crash"]++
		}
		if sc.Changed != nil {
			kinds["changed"]++
		}
		if sc.Expires {
			kinds["expires"]++
		}
		if len(m.Reads) > 0 {
			kinds["reads"]++
		}
		if len(m.Intents) > 1 {
			kinds["intents"]++
		}
	}
	for _, k := range []string{"together", "crash", "changed", "expires", "reads", "intents"} {
		if kinds[k] == 0 {
			t.Errorf("400 schedules drew no %s", k)
		}
	}
	a, _ := missions.Format(Generate(7, 1))
	b, _ := missions.Format(Generate(8, 1))
	if bytes.Equal(a, b) {
		t.Error("seeds 7 and 8 draw the same schedule 1")
	}
}
