package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// ExplorationSchemaID names the machine-readable exploration report.
const ExplorationSchemaID = "replaylab.exploration/v1"

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

func stepWords(st missions.Step) string {
	s := string(st.Fixture)
	if st.Delay > 0 {
		s += fmt.Sprintf(" (+%d", st.Delay)
		if st.Resolve != 0 {
			s += " → " + st.Resolve.String()
		}
		s += ")"
	}
	return s
}

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

type exploreJSON struct {
	Schema      string            `json:"schema"`
	Mission     string            `json:"mission"`
	Fixtures    []missions.Step   `json:"fixtures"`
	Depth       int               `json:"depth"`
	Asked       int               `json:"settings_asked"`
	Interrupted bool              `json:"interrupted"`
	Settings    []exploreSettingJ `json:"settings"`
}

type exploreSettingJ struct {
	Settings  missions.Settings `json:"settings"`
	Schedules int64             `json:"schedules"`
	States    int               `json:"states"`
	Levels    int               `json:"levels_complete"`
	Depth     int               `json:"depth_complete"`
	Stopped   string            `json:"stopped,omitempty"`
	Verdicts  []exploreVerdictJ `json:"verdicts"`
}

type exploreVerdictJ struct {
	Verdict  missions.Verdict `json:"verdict"`
	Found    bool             `json:"found"`
	Intent   string           `json:"intent,omitempty"`
	Schedule []exploreMoveJ   `json:"schedule,omitempty"`
	// Fixes are the nearest settings explored without the verdict.
	Fixes []string `json:"fixes,omitempty"`
}

type exploreMoveJ struct {
	Intent  string           `json:"intent"`
	Fixture missions.Fixture `json:"fixture"`
	Delay   int              `json:"delay,omitempty"`
	Resolve string           `json:"resolve,omitempty"`
}

// ExploreJSON renders an exploration for scripts.
func ExploreJSON(x *missions.Exploration) ([]byte, error) {
	doc := exploreJSON{Schema: ExplorationSchemaID, Mission: x.Mission.ID, Fixtures: x.Alphabet, Depth: x.Depth, Asked: x.Settings, Interrupted: x.Interrupted}
	fixes := map[[2]int][]string{}
	for _, f := range x.Fixes() {
		k := [2]int{f.From, verdictIndex(f.Verdict)}
		for _, j := range f.To {
			fixes[k] = append(fixes[k], missions.Change(x.Reports[f.From].Settings, x.Reports[j].Settings))
		}
	}
	for i := range x.Reports {
		r := &x.Reports[i]
		s := exploreSettingJ{Settings: r.Settings, Schedules: r.Schedules, States: r.States, Levels: r.Levels, Depth: r.Depth, Stopped: r.Stopped, Verdicts: []exploreVerdictJ{}}
		for vi, v := range missions.BadVerdicts {
			c, ok := r.Reached(v)
			vj := exploreVerdictJ{Verdict: v, Found: ok}
			if ok {
				vj.Intent = c.Intent
				for _, mv := range c.Moves {
					st := x.Alphabet[mv.Fixture]
					m := exploreMoveJ{Intent: x.Mission.Intents[mv.Intent].ID, Fixture: st.Fixture, Delay: st.Delay}
					if st.Resolve != 0 {
						m.Resolve = st.Resolve.String()
					}
					vj.Schedule = append(vj.Schedule, m)
				}
				vj.Fixes = fixes[[2]int{i, vi}]
			}
			s.Verdicts = append(s.Verdicts, vj)
		}
		doc.Settings = append(doc.Settings, s)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return termtext.EscapeHidden(buf.Bytes()), nil
}

func verdictIndex(v missions.Verdict) int {
	for i, b := range missions.BadVerdicts {
		if b == v {
			return i
		}
	}
	return -1
}
