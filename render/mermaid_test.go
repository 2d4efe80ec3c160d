package render_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/compare"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
)

// mermaidLine is every statement the diagrams use: participants, arrows
// (->> a send, -x a send dropped, -->> a reply, --x a reply lost) and
// notes over one or both.
var mermaidLine = regexp.MustCompile(`^    (participant [CP] as (Caller|Provider)|[CP](->>|-x|-->>|--x)[CP]: [^;#<>\n]+|Note over (C|P|C,P): [^;#<>\n]+)$`)

// Every catalog case, under every setting, draws a diagram whose every
// line parses; each attempt is an arrow with its key (or "no key"), each
// lost reply is drawn lost, and each dropped request ends in a cross.
func TestSequenceDiagramStructure(t *testing.T) {
	for _, m := range missions.BuiltIn().Missions {
		for _, stable := range []bool{true, false} {
			for _, p := range missions.Policies {
				for _, ct := range missions.ShortContracts {
					o := missions.Overrides{StableKeys: &stable, Policy: &p, Contract: &ct}
					c, err := missions.Run(m, m.Settings(o))
					if err != nil {
						t.Fatal(err)
					}
					d := render.SequenceDiagram(c)
					lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
					if lines[0] != "```mermaid" || lines[1] != "sequenceDiagram" || lines[len(lines)-1] != "```" {
						t.Fatalf("%s %s: not a fenced sequenceDiagram:\n%s", m.ID, o, d)
					}
					sends, lost, dropped := 0, 0, 0
					for _, l := range lines[2 : len(lines)-1] {
						if !mermaidLine.MatchString(l) {
							t.Fatalf("%s %s: line %q does not parse", m.ID, o, l)
						}
						switch {
						case strings.HasPrefix(l, "    C->>P: attempt "), strings.HasPrefix(l, "    C-xP: attempt "):
							sends++
							if !strings.Contains(l, ", key ") && !strings.Contains(l, ", no key") {
								t.Fatalf("%s %s: an attempt without its key: %q", m.ID, o, l)
							}
						case strings.HasPrefix(l, "    P--xC: "):
							lost++
						}
						if strings.HasPrefix(l, "    C-xP: ") {
							dropped++
						}
					}
					var attempts, timeouts, nowhere int
					for _, ev := range c.Events {
						if ev.Kind != missions.EventAttempt {
							continue
						}
						attempts++
						switch {
						case ev.Provider == "not_reached":
							nowhere++
						case ev.Observed == missions.ObservedTimeout, ev.Observed == missions.ObservedNothing:
							timeouts++
						}
					}
					if sends != attempts || lost != timeouts || dropped != nowhere {
						t.Fatalf("%s %s: %d sends, %d lost, %d dropped drawn; the case has %d, %d, %d", m.ID, o, sends, lost, dropped, attempts, timeouts, nowhere)
					}
				}
			}
		}
	}
}

// The Markdown of a write-up and of a comparison carries the diagrams.
func TestMarkdownCarriesDiagrams(t *testing.T) {
	m, _ := missions.BuiltIn().Get("timeout-then-success")
	off := false
	a, _ := missions.Run(m, m.Settings(missions.Overrides{}))
	b, _ := missions.Run(m, m.Settings(missions.Overrides{StableKeys: &off}))
	w, err := render.WriteUp(a)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(w), "```mermaid") != 1 {
		t.Error("the write-up has no diagram")
	}
	if md := string(compare.CompareMarkdown(compare.Compare([]*missions.Case{a, b}))); strings.Count(md, "```mermaid") != 2 {
		t.Errorf("the comparison has %d diagrams, want 2", strings.Count(md, "```mermaid"))
	}
}
