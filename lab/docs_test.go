package lab

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/course"
	"github.com/replaylab/replaylab/missions"
)

// updateDocs is golden's -update, which rewrites the screens in
// README.md and docs/lab.md from the program as it rewrites the golden
// files: one flag regenerates what a package's tests compare with.
func updateDocs() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// captureMark names a screen in docs/lab.md: where the lab starts (a
// mission id, the picker or the course), the terminal's size, settings,
// and the keys pressed; "answer" answers the open question right.
var captureMark = regexp.MustCompile("(?m)^<!-- capture: (\\S+) (\\d+)x(\\d+)((?: [^ >]+)*) -->\n```\n([\\s\\S]*?)```")

// TestDocsScreensAreTheProgram: every screen in the README and the lab's
// guide is what the program draws for the keys its mark names, so they
// cannot drift. Rewrite them with: go test ./lab -run DocsScreens -update
func TestDocsScreensAreTheProgram(t *testing.T) {
	for path, least := range map[string]int{"../docs/lab.md": 6, "../README.md": 1} {
		t.Run(path, func(t *testing.T) { checkScreens(t, path, least) })
	}
}

func checkScreens(t *testing.T, path string, least int) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	marks := captureMark.FindAllStringSubmatchIndex(doc, -1)
	if len(marks) < least {
		t.Fatalf("%s has %d marked screens, want at least %d", path, len(marks), least)
	}
	var out strings.Builder
	last := 0
	for _, mk := range marks {
		start, w, h := doc[mk[2]:mk[3]], atoi(t, doc[mk[4]:mk[5]]), atoi(t, doc[mk[6]:mk[7]])
		words := strings.Fields(doc[mk[8]:mk[9]])
		got := docScreen(t, start, w, h, words)
		if want := doc[mk[10]:mk[11]]; got != want {
			if !updateDocs() {
				t.Errorf("%s: the screen %q %dx%d %v is not what the program draws; run: go test ./lab -run DocsScreens -update\nthe program:\n%s", path, start, w, h, words, got)
			}
		}
		out.WriteString(doc[last:mk[10]] + got)
		last = mk[11]
	}
	out.WriteString(doc[last:])
	if updateDocs() {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// docScreen draws the screen a capture mark names, each line's trailing
// spaces dropped, as a Markdown code block holds it.
func docScreen(t *testing.T, start string, w, h int, words []string) string {
	t.Helper()
	var o Options
	o.Dir = t.TempDir()
	var keys []string
	for _, wd := range words {
		if wd == "first" {
			// As a first-timer sees it: no progress yet, checkpoints
			// hidden.
			o.FirstTime = true
			continue
		}
		if v, ok := strings.CutPrefix(wd, "stable="); ok {
			on := v == "on"
			o.Overrides.StableKeys = &on
			continue
		}
		if p, ok := strings.CutPrefix(wd, "policy="); ok {
			pol := missions.Policy(p)
			o.Overrides.Policy = &pol
			continue
		}
		keys = append(keys, wd)
	}
	switch start {
	case "picker":
	case "course":
		o.Course = course.BuiltIn()
	default:
		o.Mission = start
	}
	m := newLab(t, o, w, h)
	for _, k := range keys {
		if k == "answer" {
			k = answerKey(t, m, false)
		}
		m = pressRun(t, m, k)
	}
	var b strings.Builder
	for _, l := range strings.Split(m.View(), "\n") {
		fmt.Fprintln(&b, strings.TrimRight(l, " "))
	}
	return b.String()
}
