package conform

import (
	"context"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
)

// Under a profile, a row that cannot happen is graded n/a and not played
// (the command here would fail every row it ran), counted neither as a
// pass nor as a failure, and named in the tally with why.
func TestRowsThatCannotHappenUnderTheProfileAreNA(t *testing.T) {
	var rows []*Scenario
	for _, sc := range Scenarios(missions.BuiltIn()) {
		if sc.ID() == "retry-after-key-expiry" || sc.ID() == "no-idempotency-contract" {
			rows = append(rows, sc)
		}
	}
	if len(rows) != 2 {
		t.Fatalf("found %d of the two rows", len(rows))
	}
	rep, err := Run(context.Background(), Config{Command: []string{"false"}, Provider: providers.Builtin("stripe-v1"), TempDir: t.TempDir()}, rows)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Rows {
		if row.Grade != GradeNA || len(row.Runs) != 0 {
			t.Errorf("%s: %s with %d runs, want n/a and none", row.Scenario, row.Grade, len(row.Runs))
		}
	}
	if !strings.Contains(rep.Rows[0].Why+rep.Rows[1].Why, "stripe-v1 keeps keys 24 h; no retry inside a run") {
		t.Errorf("the expiry row's reason: %q / %q", rep.Rows[0].Why, rep.Rows[1].Why)
	}
	if rep.NA != 2 || rep.Passed != 0 || rep.Provider != "stripe-v1" {
		t.Errorf("report: %d n/a, %d passed, provider %q", rep.NA, rep.Passed, rep.Provider)
	}
	if end, err := rep.Ending(false); end != Passed || err != nil {
		t.Errorf("ending %v, %v: n/a rows are no failure", end, err)
	}
	if got := Tally(rep); !strings.Contains(got, "n/a: ") {
		t.Errorf("tally %q", got)
	}
	// Under the profile none, the no-contract row is played and the
	// expiry row cannot happen (no key to expire).
	none := providers.Builtin("none")
	if why := notApplicable(Config{Provider: none, Timeout: DefaultTimeoutTicks * DefaultTick}, rows[0]) + notApplicable(Config{Provider: none}, rows[1]); !strings.Contains(why, "keeps no keys") {
		t.Errorf("under none: %q", why)
	}
}
