package conform_test

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/conform"
	"github.com/replaylab/replaylab/missions"
)

// TestConformTextFitsItsWidth: every line of the scorecard, its first
// included, fits the terminal it is printed to.
func TestConformTextFitsItsWidth(t *testing.T) {
	rep := &conform.Report{
		Command: []string{"./a-client-with-a-long-name", "--verbose"}, Transport: "mcp", TickMillis: 100, RequestTimeoutMillis: 1000,
		Rows: []conform.Row{{
			Scenario: "timeout-then-success", Grade: conform.GradeUnsafe,
			Why:     "2 refunds stand for refund-1042, which the client was to make once.",
			Intents: []conform.RowIntent{{Intent: "refund-1042", Verdict: missions.Duplicate, Effects: 2, Beliefs: []conform.Belief{}}},
		}},
	}
	for _, width := range []int{60, 80, 100} {
		for _, line := range strings.Split(conform.Text(rep, width), "\n") {
			if w := ansi.StringWidth(line); w > width {
				t.Errorf("width %d: a line of %d: %q", width, w, line)
			}
		}
	}
}
