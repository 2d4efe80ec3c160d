package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

func TestMissionsList(t *testing.T) {
	out := mustCLI(t, "missions")
	for _, m := range missions.BuiltIn().Missions {
		if !strings.Contains(out, m.ID) || !strings.Contains(out, m.Title) {
			t.Errorf("the list lacks %s (%s)", m.ID, m.Title)
		}
	}
	if !strings.Contains(out, "A timeout can hide a refund that already committed") {
		t.Errorf("the list lacks the goal of timeout-then-success:\n%s", out)
	}
}

func TestMissionsDirAndCleaning(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine.yaml"), userMission(t, "my-mission"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustCLI(t, "missions", "--missions", dir)
	if !strings.Contains(out, "my-mission") || !strings.Contains(out, "My red mission") {
		t.Errorf("the user mission is missing or not cleaned:\n%q", out)
	}
	run := mustCLI(t, "run", "my-mission", "--missions", dir)
	for name, s := range map[string]string{"missions": out, "run": run} {
		if strings.ContainsAny(s, "\x1b\a") || strings.Contains(s, "pwned\a") {
			t.Errorf("%s printed control sequences from a mission file:\n%q", name, s)
		}
	}
	// A broken file in the directory is reported with its line; exit 2.
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("id: broken\ntitle: x\ngoal: y\nintents: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := cli("missions", "--missions", dir)
	if code != exitBadInput || !strings.Contains(errOut, "broken.yaml:4:") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
}
