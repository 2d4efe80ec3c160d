package reproduce

import (
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// TestDescribePathAnyPath: a difference can be anywhere in an edited file,
// including a whole top-level part that is null or missing; naming it must
// not depend on the case having the events or verdicts the path mentions.
func TestDescribePathAnyPath(t *testing.T) {
	empty := &missions.Case{}
	paths := [][]string{
		{}, {"schema"}, {"mission"}, {"settings"}, {"events"}, {"ledger"}, {"outcome"}, {"bonus"},
		{"events", "#"}, {"events", "7"}, {"events", "x", "kind"}, {"events", "7", "kind"},
		{"outcome", "verdicts", "3", "verdict"}, {"ledger", "objects", "2", "status"}, {"mission", "title"},
	}
	for _, p := range paths {
		got := describePath(empty, p)
		if got == "" {
			t.Errorf("%v: empty description", p)
		}
	}
	if got := describePath(empty, []string{"events"}); got != "the events" {
		t.Errorf("events: %q", got)
	}
}
