package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

var (
	examplesOnce sync.Once
	examplesDir  string
	examplesErr  error
)

// exampleClient builds examples/NAME once per test binary.
func exampleClient(t *testing.T, name string) string {
	t.Helper()
	examplesOnce.Do(func() {
		examplesDir, examplesErr = os.MkdirTemp("", "replaylab-examples-*")
		for _, ex := range []string{"naive-refund", "guarded-refund"} {
			if examplesErr != nil {
				return
			}
			if out, err := exec.Command("go", "build", "-o", filepath.Join(examplesDir, ex), "./examples/"+ex).CombinedOutput(); err != nil {
				examplesErr = fmt.Errorf("go build %s: %v\n%s", ex, err, out)
			}
		}
	})
	if examplesErr != nil {
		t.Fatal(examplesErr)
	}
	return filepath.Join(examplesDir, name)
}

func TestConformList(t *testing.T) {
	out := mustCLI(t, "conform", "--list")
	for _, m := range missions.BuiltIn().Missions {
		if !strings.Contains(out, "\n"+m.ID+": ") {
			t.Errorf("--list lacks %s", m.ID)
		}
	}
	words := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"A row passes when", "killed when the refund commits", "2 runs of the client at once", "docs/conform.md"} {
		if !strings.Contains(words, want) {
			t.Errorf("--list lacks %q:\n%s", want, out)
		}
	}
}

func TestConformBadUsage(t *testing.T) {
	dir := t.TempDir()
	taken := filepath.Join(dir, "taken.xml")
	os.WriteFile(taken, []byte("x"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"conform", "true"}, "after --"},
		{[]string{"conform"}, "no client command"},
		{[]string{"conform", "--"}, "no client command"},
		{[]string{"conform", "--scenario", "timeout-then-sucess", "--", "true"}, "did you mean timeout-then-success"},
		{[]string{"conform", "--scenario", "timeout-then-success,timeout-then-success", "--", "true"}, "twice"},
		{[]string{"conform", "--json", "--markdown", "--", "true"}, "give one"},
		{[]string{"conform", "--", "./no-such-client"}, `"./no-such-client": no such file`},
		{[]string{"conform", "--", "no-such-client-anywhere"}, "not found on PATH"},
		{[]string{"conform", "--junit", taken, "--", "true"}, "already exists"},
		{[]string{"conform", "--tick", "0s", "--", "true"}, "tick 0s"},
		{[]string{"conform", "--timeout", "10ms", "--", "true"}, "timeout 10ms"},
		{[]string{"conform", "--parallel", "-1", "--", "true"}, "--parallel"},
		{[]string{"conform", "--list", "--", "true"}, "runs nothing"},
		{[]string{"conform", "--record", taken, "--", "true"}, "is a file"},
	} {
		code, stdout, stderr := cli(c.args...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want exit 2 naming %q", c.args, code, stderr, stdout, c.want)
		}
	}
	if data, _ := os.ReadFile(taken); string(data) != "x" {
		t.Error("a refused --junit file was changed")
	}
}

func TestConformGradesTheExamples(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := cli("conform", "--junit", filepath.Join(dir, "g.xml"), "--", exampleClient(t, "guarded-refund"))
	n := len(missions.BuiltIn().Missions)
	readmeScorecard(t, "guarded-refund", out)
	if code != exitOK || !strings.Contains(out, "14 of 14 scenarios pass") || strings.Count(out, "\nPASS ") != n {
		t.Fatalf("guarded: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "g.xml")); err != nil || !strings.Contains(stderr, "JUnit XML") {
		t.Errorf("--junit: %v; stderr %q", err, stderr)
	}

	rec := filepath.Join(dir, "sessions")
	code, out, stderr = cli("conform", "--record", rec, "--", exampleClient(t, "naive-refund"))
	if code != exitVerdict || !strings.Contains(stderr, "9 of 14 scenarios did not pass") {
		t.Fatalf("naive: exit %d\n%s\n%s", code, out, stderr)
	}
	readmeScorecard(t, "naive-refund", out)
	if !strings.Contains(out, "5 of 14 scenarios pass; unsafe: timeout-then-success,") {
		t.Errorf("the tally does not name the unsafe rows:\n%s", out)
	}
	files, _ := os.ReadDir(rec)
	if len(files) != n {
		t.Fatalf("--record wrote %d sessions, want %d", len(files), n)
	}
	// A recorded session is a session like any other: it replays.
	code, out, stderr = cli("replay", filepath.Join(rec, "crash-after-send.json"))
	if code != exitOK || !strings.Contains(out, "identical") {
		t.Errorf("replay of a conform session: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, _ = cli("check", filepath.Join(rec, "timeout-then-success.json"))
	if code != exitVerdict || !strings.Contains(out, "duplicate_effect") {
		t.Errorf("check of the naive client's session: exit %d\n%s", code, out)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if examplesDir != "" {
		os.RemoveAll(examplesDir)
	}
	os.Exit(code)
}

// readmeScorecard holds the README's scorecard of examples/NAME to what
// conform printed.
func readmeScorecard(t *testing.T, name, out string) {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	mark := "<!-- conform: " + name + " -->\n```\n$ replaylab conform -- ./" + name + "\n"
	_, rest, ok := strings.Cut(string(readme), mark)
	if !ok {
		t.Fatalf("the README has no scorecard marked %q", mark)
	}
	shown, _, _ := strings.Cut(rest, "```")
	got := strings.ReplaceAll(out, exampleClient(t, name), "./"+name)
	if shown != got {
		t.Errorf("the README's scorecard of %s is not what conform prints now:\n--- README\n%s--- conform\n%s", name, shown, got)
	}
}
