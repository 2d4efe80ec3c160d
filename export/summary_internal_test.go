package export

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

func TestJoinFittingBreaksBetweenItems(t *testing.T) {
	items := []string{"stable keys on", "policy naive", "contract v1", "key source intent", "seed 1", "an item far wider than any line here"}
	got := joinFitting(items, " · ", 30)
	want := []string{"stable keys on · policy naive", "contract v1", "key source intent · seed 1", "an item far wider than any", "line here"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("joinFitting:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

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
