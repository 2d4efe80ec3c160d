package render

import (
	"fmt"
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// ExploreText renders an exploration for a person: per setting, what was
// covered and the shortest schedule to each bad verdict, then the cheapest
// setting change that removes each.
func ExploreText(x *missions.Exploration) string {
	var b strings.Builder
	var fx []string
	for _, st := range x.Alphabet {
		fx = append(fx, stepWords(st))
	}
	settings := termtext.Plural(x.Settings, "setting")
	if len(x.Reports) < x.Settings {
		settings = fmt.Sprintf("%d of %s", len(x.Reports), settings)
	}
	fmt.Fprintf(&b, "explore %s: %s, up to %s per intent, %s\n",
		termtext.CleanLine(x.Mission.ID), termtext.Plural(len(x.Alphabet), "fixture"), termtext.Plural(x.Depth, "attempt"), settings)
	fmt.Fprintf(&b, "fixtures: %s\n", strings.Join(fx, ", "))
	for i := range x.Reports {
		r := &x.Reports[i]
		fmt.Fprintf(&b, "\n%s\n", missions.SettingsWords(r.Settings))
		reach := fmt.Sprintf("complete to depth %d", r.Depth)
		if r.Stopped != "" {
			reach = fmt.Sprintf("%s; complete to %s", r.Stopped, termtext.Plural(r.Levels, "attempt"))
		}
		fmt.Fprintf(&b, "  %s, %s, %s\n", termtext.Plural64(r.Schedules, "schedule"), termtext.Plural64(int64(r.States), "distinct state"), reach)
		for _, v := range missions.BadVerdicts {
			c, ok := r.Reached(v)
			if !ok {
				fmt.Fprintf(&b, "  %-14s  no schedule up to %s reaches it\n", v, depthWords(r))
				continue
			}
			fmt.Fprintf(&b, "  %-14s  %s: %s (%s)\n", v, termtext.Plural(len(c.Moves), "attempt"), scheduleWords(x, c), termtext.CleanLine(c.Intent))
		}
	}
	fixes := x.Fixes()
	if len(fixes) > 0 {
		fmt.Fprintf(&b, "\ncheapest setting change that removes each bad verdict:\n")
		for _, f := range fixes {
			from := x.Reports[f.From].Settings
			fmt.Fprintf(&b, "  %s under %s\n", f.Verdict, missions.SettingsWords(from))
			if len(f.To) == 0 {
				fmt.Fprintf(&b, "    no setting explored removes it\n")
			}
			for _, j := range f.To {
				fmt.Fprintf(&b, "    %s: removes it (no schedule up to %s reaches it)\n", missions.Change(from, x.Reports[j].Settings), depthWords(&x.Reports[j]))
			}
		}
	}
	if x.Interrupted {
		fmt.Fprintf(&b, "\ninterrupted: the report holds what was found so far\n")
	}
	return b.String()
}

func depthWords(r *missions.SettingReport) string {
	if r.Stopped != "" {
		return termtext.Plural(r.Levels, "attempt") + " (stopped early)"
	}
	return fmt.Sprintf("depth %d", r.Depth)
}

func stepWords(st missions.Step) string { return string(st.Fixture) + st.DelayTerms() }

func scheduleWords(x *missions.Exploration, c missions.Counterexample) string {
	parts := make([]string, len(c.Moves))
	for i, mv := range c.Moves {
		parts[i] = stepWords(x.Alphabet[mv.Fixture])
		if len(x.Mission.Intents) > 1 {
			parts[i] = termtext.CleanLine(x.Mission.Intents[mv.Intent].ID) + " " + parts[i]
		}
	}
	return strings.Join(parts, ", ")
}

// ExploreProgress is the explorer's progress in one line, for a terminal
// that watches a long search.
func ExploreProgress(p missions.Progress) string {
	return fmt.Sprintf("explore: setting %d of %d, %d attempts deep, %s, %s",
		p.Setting+1, p.Settings, p.Level, termtext.Plural64(p.Schedules, "schedule"), termtext.Plural64(int64(p.States), "state"))
}
