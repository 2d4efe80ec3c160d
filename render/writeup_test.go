package render_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/replaylab/replaylab/internal/mdtest"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/missions/missionstest"
	"github.com/replaylab/replaylab/render"
)

func TestWriteUpGolden(t *testing.T) {
	off := false
	b, err := render.WriteUp(missionstest.Run(t, "timeout-then-success", missions.Overrides{StableKeys: &off}))
	if err != nil {
		t.Fatal(err)
	}
	golden.RequireEqual(t, b)
}

// An escalation's write-up carries the evidence bundle: why a person gets
// it, the key, what the caller heard on each attempt and the read-backs.
func TestWriteUpEvidenceGolden(t *testing.T) {
	guarded := missions.Guarded
	b, err := render.WriteUp(missionstest.Run(t, "changed-parameters", missions.Overrides{Policy: &guarded}))
	if err != nil {
		t.Fatal(err)
	}
	golden.RequireEqual(t, b)
}

// Every table of a write-up parses as a GFM table with as many cells in
// each row as in its header, for every built-in mission and policy.
func TestWriteUpRendersAsTables(t *testing.T) {
	cat := missions.BuiltIn()
	for _, m := range cat.Missions {
		for _, p := range missions.Policies {
			t.Run(fmt.Sprintf("%s/%s", m.ID, p), func(t *testing.T) {
				c, err := missions.Run(m, m.Settings(missions.Overrides{Policy: &p}))
				if err != nil {
					t.Fatal(err)
				}
				md, err := render.WriteUp(c)
				if err != nil {
					t.Fatal(err)
				}
				tables := mdtest.Tables(t, md)
				// Settings, timeline, verdicts and the final records at least.
				if len(tables) < 4 {
					t.Fatalf("found %d tables:\n%s", len(tables), md)
				}
				for k, tbl := range tables {
					for i, r := range tbl {
						if len(r) != len(tbl[0]) {
							t.Fatalf("table %d row %d has %d cells, header %d", k, i, len(r), len(tbl[0]))
						}
					}
				}
				timeline := tables[1]
				if len(timeline) != 1+len(c.Events) {
					t.Errorf("timeline has %d rows for %d events", len(timeline)-1, len(c.Events))
				}
				if !strings.Contains(string(md), "\n"+render.ReproduceCommand(c)+"\n") {
					t.Error("no reproduce command")
				}
			})
		}
	}
}

func TestWriteUpHostileText(t *testing.T) {
	c := missionstest.Hostile(missionstest.Seed(t)[1], "done | really\n## not a heading")
	md, err := render.WriteUp(c)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(md, []byte("\x1b")) {
		t.Error("escape sequence in write-up")
	}
	html := mdtest.HTML(t, md)
	if strings.Count(html, "<h1>") != 1 || strings.Contains(html, "<h1>heading") || !strings.Contains(html, "<h1>Evil | title # heading red</h1>") {
		t.Errorf("title not kept to one heading:\n%s", html)
	}
	if !strings.Contains(html, "<td>done | really ## not a heading</td>") {
		t.Errorf("hostile words not kept in their cell:\n%s", html)
	}
}

func TestReproduceCommand(t *testing.T) {
	off := false
	g := missions.Guarded
	ph := missions.KeyPayloadHash
	cases := []struct {
		c    *missions.Case
		want string
	}{
		{missionstest.Run(t, "timeout-then-success", missions.Overrides{StableKeys: &off}),
			"replaylab run timeout-then-success --stable-keys=off --policy=naive --contract=v1"},
		{missionstest.Run(t, "timeout-then-success", missions.Overrides{Policy: &g, KeySource: &ph}),
			"replaylab run timeout-then-success --stable-keys=on --policy=guarded --contract=v1 --key-source=payload_hash"},
	}
	for _, tc := range cases {
		if got := render.ReproduceCommand(tc.c); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
	c := missionstest.Seed(t)[0]
	c.Mission.ID = "it's mine; rm -rf"
	if got := render.ReproduceCommand(c); !strings.Contains(got, `'it'\''s mine; rm -rf'`) {
		t.Errorf("mission id not quoted for the shell: %s", got)
	}
}
