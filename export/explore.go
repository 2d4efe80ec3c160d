package export

import (
	"bytes"
	"encoding/json"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// ExplorationSchemaID names the machine-readable exploration report.
const ExplorationSchemaID = "replaylab.exploration/v1"

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
