package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/compare"
	"github.com/replaylab/replaylab/missions"
)

// A case that contradicts its own mission and settings is refused by
// validate and compare, naming the first difference; one that claims a
// built-in id but carries another mission says so.
func TestCasesThatLie(t *testing.T) {
	dir := t.TempDir()
	honest := writeCase(t, dir, "timeout-then-success", "--stable-keys=off")
	data, err := os.ReadFile(honest)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	verdict := write("verdict.json", bytes.Replace(data, []byte(`"verdict": "duplicate"`), []byte(`"verdict": "exactly_once"`), 1))
	effects := write("effects.json", bytes.Replace(data, []byte(`"effects": 2,
    "intended"`), []byte(`"effects": 1,
    "intended"`), 1))
	mission := write("mission.json", bytes.Replace(data, []byte(`"fixture": "timeout_after_commit"`), []byte(`"fixture": "failure_before_commit"`), -1))
	for _, p := range []string{verdict, effects, mission} {
		if b, _ := os.ReadFile(p); bytes.Equal(b, data) {
			t.Fatalf("%s: the edit did not take", p)
		}
	}
	other := writeCase(t, t.TempDir(), "timeout-then-success")
	for _, tc := range []struct {
		path, want string
	}{
		{verdict, "outcome"},
		{effects, "effects"},
		{mission, "carries a different one"},
	} {
		code, out, errOut := cli("validate", tc.path)
		if code != exitBadInput || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("validate %s: exit %d, %q %q", filepath.Base(tc.path), code, out, errOut)
		}
		code, out, errOut = cli("compare", tc.path, other)
		if code != exitBadInput || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("compare %s: exit %d, %q %q", filepath.Base(tc.path), code, out, errOut)
		}
	}
	if code, out, _ := cli("validate", honest); code != 0 || !strings.Contains(out, "ok") {
		t.Errorf("an honest case: exit %d, %q", code, out)
	}
}

// compare tells missions apart by what they hold, not by their ids alone.
func TestCompareTellsEditedMissionsApart(t *testing.T) {
	m, err := missions.BuiltIn().Get("timeout-then-success")
	if err != nil {
		t.Fatal(err)
	}
	edited := *m
	edited.Schedule = append([]missions.Step{}, m.Schedule...)
	edited.Schedule[0].Fixture = missions.FailureBeforeCommit
	a, err := missions.Run(m, m.Settings(missions.Overrides{}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := missions.Run(&edited, edited.Settings(missions.Overrides{}))
	if err != nil {
		t.Fatal(err)
	}
	cmp := compare.Compare([]*missions.Case{a, b})
	if !strings.Contains(strings.Join(cmp.Notes, " "), "carry different missions under that id") {
		t.Fatalf("notes %v", cmp.Notes)
	}
}
