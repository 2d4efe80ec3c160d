package render_test

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
)

// TestWriteUpNamesMissionsDirOnlyForUserMissions: the reproduce section
// asks for --missions only when the mission is not built in.
func TestWriteUpNamesMissionsDirOnlyForUserMissions(t *testing.T) {
	c, err := missions.BuiltIn().Run("timeout-then-success", missions.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	md, _ := render.WriteUp(c)
	if strings.Contains(string(md), "--missions") {
		t.Errorf("a built-in mission's write-up asks for --missions:\n%s", md)
	}
	c.Mission.ID = "my-own-refund"
	md, _ = render.WriteUp(c)
	if !strings.Contains(string(md), "`--missions DIR`") {
		t.Errorf("a user mission's write-up does not ask for --missions:\n%s", md)
	}
}

// TestSettingsLineShowsTheBudget: a case run under a budget says so
// wherever its settings are written out; a default budget adds nothing.
func TestSettingsLineShowsTheBudget(t *testing.T) {
	var s missions.Settings
	s.StableKeys, s.Policy, s.Contract, s.KeySource, s.Seed = true, missions.Naive, "v1", missions.KeyPerIntent, 1
	if got := render.SettingsLine(s); got != "stable keys on · policy naive · contract v1 · keys from intent · seed 1" {
		t.Errorf("default budget: %q", got)
	}
	s.MaxAttempts, s.Deadline = 1, 4
	if got := render.SettingsLine(s); !strings.HasSuffix(got, " · seed 1 · at most 1 attempt per intent · deadline tick 4") {
		t.Errorf("budget: %q", got)
	}
}
