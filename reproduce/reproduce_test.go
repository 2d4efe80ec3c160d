package reproduce_test

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/missions/missionstest"
	"github.com/replaylab/replaylab/reproduce"
)

// A case run from the catalog reproduces; one edited after the run says
// where the file and the replay part, in words, through Case and Document
// alike.
func TestACaseReproducesAndAnEditIsNamed(t *testing.T) {
	off := false
	c := missionstest.Run(t, "timeout-then-success", missions.Overrides{StableKeys: &off})
	if diff, err := reproduce.Case(c); err != nil || diff != "" {
		t.Fatalf("a fresh case: %q %v", diff, err)
	}
	edited := *c
	edited.Outcome.Effects = 1
	diff, err := reproduce.Document(export.Document{Case: &edited})
	if err != nil || !strings.Contains(diff, "the case file says 1; the replay gives 2") {
		t.Fatalf("an edited case: %q %v", diff, err)
	}
}
