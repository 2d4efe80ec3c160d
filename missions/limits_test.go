package missions_test

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// TestScheduleClockIsBounded: the provider looks at every object and key
// on every tick, so waits of 10,000 ticks behind thousands of attempts
// once ran for minutes. The clock a schedule spans is bounded; the file
// says at which step it runs over, and a case's mission is held to the
// same bound.
func TestScheduleClockIsBounded(t *testing.T) {
	src := strings.Replace(validMission, "  - wait: 3\n", "  - wait: 10000\n  - wait: 9997\n  - wait: 3\n", 1)
	_, err := missions.Parse("long.yaml", []byte(src))
	if err == nil {
		t.Fatal("a schedule of 20,001 ticks was accepted")
	}
	if want := "long.yaml:17: by this step the schedule has run 20001 ticks; a schedule may span at most 20000"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want it to contain %q", err, want)
	}
	// One tick less is accepted.
	ok := strings.Replace(validMission, "  - wait: 3\n", "  - wait: 10000\n  - wait: 9994\n  - wait: 3\n", 1)
	m, err := missions.Parse("ok.yaml", []byte(ok))
	if err != nil {
		t.Fatalf("a schedule of 20,000 ticks: %v", err)
	}
	m.Schedule = append(m.Schedule, missions.Step{Wait: 5})
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "the schedule spans 20005 ticks; it may span at most 20000") {
		t.Errorf("Validate: %v", err)
	}
}
