package render

import (
	"strings"
	"testing"
)

func TestJoinFittingBreaksBetweenItems(t *testing.T) {
	items := []string{"stable keys on", "policy naive", "contract v1", "key source intent", "seed 1", "an item far wider than any line here"}
	got := joinFitting(items, " · ", 30)
	want := []string{"stable keys on · policy naive", "contract v1", "key source intent · seed 1", "an item far wider than any", "line here"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("joinFitting:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
