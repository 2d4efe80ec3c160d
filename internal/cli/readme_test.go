package cli

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
)

var update = flag.Bool("update", false, "rewrite what the tests compare with (the catalog table in README.md) from the program")

// catalogTable is the README's catalog table, from the real catalog.
func catalogTable(cat *missions.Catalog) string {
	cell := func(s string) string { return strings.ReplaceAll(termtext.CleanLine(s), "|", `\|`) }
	var b strings.Builder
	b.WriteString("| id | title | what it teaches | effects (verdicts) it expects |\n|---|---|---|---|\n")
	for _, m := range cat.Missions {
		var expect []string
		for _, e := range m.Expect {
			var vs []string
			for _, v := range e.VerdictsInOrder(m.Intents) {
				vs = append(vs, string(v))
			}
			expect = append(expect, fmt.Sprintf("`%s`: %d (%s)", e.Under(), e.Effects, strings.Join(vs, ", ")))
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.ID, cell(m.Title), cell(render.GoalLine(m.Goal)), strings.Join(expect, "<br>"))
	}
	return b.String()
}

// TestReadmeCatalog fails when the README's catalog table is out of date
// with missions.BuiltIn(). Refresh it with:
//
//	go test ./internal/cli -run TestReadmeCatalog -update
func TestReadmeCatalog(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	start := strings.Index(readme, "<!-- catalog:start")
	end := strings.Index(readme, "<!-- catalog:end -->")
	if start < 0 || end < start {
		t.Fatal("README.md has no <!-- catalog:start … --> … <!-- catalog:end --> section")
	}
	start += strings.Index(readme[start:], "-->\n") + len("-->\n")
	want := catalogTable(missions.BuiltIn())
	if readme[start:end] == want {
		return
	}
	if *update {
		if err := writeFileAtomic("README.md", []byte(readme[:start]+want+readme[end:]), true); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the catalog table in README.md is out of date; run: go test ./internal/cli -run TestReadmeCatalog -update\nwant:\n%s", want)
}

// The README stays short enough to read: at most 250 lines, the lab's path
// through the exercise with its export among them.
func TestReadmeIsShort(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 250 {
		t.Errorf("README.md has %d lines; keep it to 250 and move the rest to docs/", n)
	}
	flat := strings.Join(strings.Fields(string(data)), " ")
	for _, want := range []string{"export included, in nine keys", "`F` (replace both outcomes", "`e` (export the three cases", "replaylab lab SESSION.json"} {
		if !strings.Contains(flat, want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
}
