package missions

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/scripts from the engine's current behaviour")

// TestScripts keeps, for every catalog mission, a script a person can read
// without reading Go: under each setting the mission contrasts, every event
// in order with the tick, what happened, what the agent said and the effect
// count, then the outcome. A change in the engine's behaviour shows up as a
// diff of these files; after checking it, rewrite them with
//
//	go test ./missions -run TestScripts -update
func TestScripts(t *testing.T) {
	for _, m := range BuiltIn().Missions {
		t.Run(m.ID, func(t *testing.T) {
			var b strings.Builder
			fmt.Fprintf(&b, "# %s: %s\n", m.ID, m.Title)
			for _, e := range m.Expect {
				c, err := Run(m, m.Settings(e.When))
				if err != nil {
					t.Fatal(err)
				}
				writeScript(&b, c, e.When)
			}
			path := filepath.Join("testdata", "scripts", m.ID+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (create it with: go test ./missions -run TestScripts -update)", err)
			}
			if got := b.String(); got != string(want) {
				t.Errorf("%s is out of date with the engine; check the difference, then rewrite with -update.\n%s", path, firstDiff(string(want), got))
			}
		})
	}
}

func writeScript(b *strings.Builder, c *Case, when Overrides) {
	s := c.Settings
	fmt.Fprintf(b, "\n## %s\n", when)
	fmt.Fprintf(b, "## stable keys %s, %s, contract %s, keys from %s\n", OnOff(s.StableKeys), s.Policy, s.Contract, s.KeySource)
	step := 0
	for _, ev := range c.Events {
		if ev.Step != step {
			step = ev.Step
			if step <= len(c.Mission.Schedule) {
				fmt.Fprintf(b, "step %d: %s\n", step, c.Mission.Schedule[step-1])
			} else {
				fmt.Fprintf(b, "after the schedule: the clock runs out\n")
			}
		}
		fmt.Fprintf(b, "  t%-2d %-10s %s  [%d]\n", ev.Tick, ev.Kind, scriptLine(ev), ev.Effects)
		if ev.Say != "" {
			fmt.Fprintf(b, "       agent: %q\n", ev.Say)
		}
	}
	o := c.Outcome
	fmt.Fprintf(b, "outcome: %s, %d intended, %d succeeded\n", count(o.Effects, "effect"), o.Intended, o.Succeeded)
	for _, v := range o.Verdicts {
		fmt.Fprintf(b, "  %s: %s (believes %s, %s)\n", v.Intent, v.Verdict, v.Belief, count(v.Effects, "live effect"))
	}
	for _, e := range o.Evidence {
		fmt.Fprintf(b, "  evidence for %s: %d attempts, %d read-backs, %d objects; %s\n", e.Intent, len(e.Attempts), len(e.Reads), len(e.Objects), e.Reason)
	}
}

func scriptLine(ev Event) string {
	switch ev.Kind {
	case EventAttempt:
		who := ev.Intent
		if ev.Worker > 0 {
			who += fmt.Sprintf(" (worker %d)", ev.Worker)
		}
		key := ev.Key
		if key == "" {
			key = "no key"
		}
		line := fmt.Sprintf("#%d %s, %s, %s: %s; sees %s", ev.Attempt, who, key, ev.Fixture, ev.Note, ev.Observed)
		if ev.Class != "" {
			line += " (" + string(ev.Class) + ")"
		}
		return line
	case EventCheckpoint:
		return fmt.Sprintf("%s → %s: %s", ev.Intent, ev.Checkpoint, ev.Note)
	}
	return ev.Note
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  file:   %s\n  engine: %s", i+1, a, b)
		}
	}
	return ""
}
