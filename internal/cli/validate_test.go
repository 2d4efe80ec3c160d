package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// TestValidateAndReplayRefuseOffFormatCases: a case file with a field
// twice or a word the format does not have was "ok" to validate and
// replayed as a case; both now exit 2 naming the line, and print nothing
// on standard output for replay.
func TestValidateAndReplayRefuseOffFormatCases(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(writeCase(t, dir, "timeout-then-success"))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "twice.json")
	twice := strings.Replace(string(data), `"seed": 1,`, `"seed": 1, "seed": 7,`, 1)
	if err := os.WriteFile(bad, []byte(twice), 0o644); err != nil {
		t.Fatal(err)
	}
	want := bad + `:68:16: field "seed" appears twice in settings`
	if code, out, _ := cli("validate", bad); code != exitBadInput || !strings.Contains(out, want) {
		t.Errorf("validate: exit %d, stdout %q; want exit 2 and %q", code, out, want)
	}
	if code, out, errOut := cli("replay", bad); code != exitBadInput || out != "" || !strings.Contains(errOut, want) {
		t.Errorf("replay: exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, want)
	}
}

// TestValidateRunsEachSettingOnce: validate ran the mission once per
// expectation, and a file may list tens of thousands of them: behind a
// long schedule that was hours. Expectations under the same settings
// share a run, and each is still checked.
func TestValidateRunsEachSettingOnce(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("missions", "catalog", "timeout-then-success.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(data), "id: timeout-then-success", "id: many-expectations", 1)
	extra := strings.Repeat("  - when: {stable_keys: off}\n    effects: 2\n", 200) + "  - when: {stable_keys: off}\n    effects: 3\n"
	file := filepath.Join(t.TempDir(), "many.yaml")
	if err := os.WriteFile(file, []byte(src+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := 0
	defer func(run func(*missions.Mission, missions.Settings) (*missions.Case, error)) { runMission = run }(runMission)
	runMission = func(m *missions.Mission, s missions.Settings) (*missions.Case, error) {
		runs++
		return missions.Run(m, s)
	}
	code, out, _ := cli("validate", file)
	if runs != 3 {
		t.Errorf("%d runs for 3 settings", runs)
	}
	want := file + ":433: under --stable-keys=off, effects: got 2, expected 3\n"
	if code != exitBadInput || out != want {
		t.Errorf("exit %d, stdout %q; want 2 and %q", code, out, want)
	}
}

// TestValidateReadsACaseByWhatItHolds: a case file whose name does not end
// in .json was read as a mission and drew one "unknown key" line per part
// of the case; it is read as the case it is.
func TestValidateReadsACaseByWhatItHolds(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(writeCase(t, dir, "timeout-then-success"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "case.txt")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli("validate", file)
	if want := file + ": ok (case of mission timeout-then-success,"; code != exitOK || !strings.HasPrefix(out, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and %q", code, out, errOut, want)
	}
}

// validate given a directory says it is one, and counts it as a path.
func TestValidateADirectory(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := cli("validate", dir)
	if code != exitBadInput || !strings.Contains(stdout, "is a directory") || !strings.Contains(stderr, "the path has problems") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// validate's last line counts no "1 of 1": the one path given, all of
// them, or how many of them.
func TestValidateSummaryWords(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		bad  int
		want string
	}{
		{[]string{"a.yaml"}, 1, "the file has problems"},
		{[]string{dir}, 1, "the path has problems"},
		{[]string{"a.yaml", "b.yaml"}, 2, "both files have problems"},
		{[]string{"a.yaml", "b.yaml", "c.yaml"}, 3, "all 3 files have problems"},
		{[]string{"a.yaml", "b.yaml", "c.yaml"}, 1, "1 of 3 files has problems"},
		{[]string{"a.yaml", dir}, 1, "1 of 2 paths has problems"},
	} {
		if got := validateSummary(tc.args, tc.bad); got != tc.want {
			t.Errorf("%v with %d bad: %q, want %q", tc.args, tc.bad, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, userMission(t, "good-one"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	src := strings.Replace(string(userMission(t, "bad-one")), "fixture: success", "fixture: sucess", 1)
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	badLine := 1 + strings.Count(src[:strings.Index(src, "fixture: sucess")], "\n")
	wrong := filepath.Join(dir, "wrong.yaml")
	src = strings.Replace(string(userMission(t, "wrong-one")), "effects: 2", "effects: 3", 1)
	if err := os.WriteFile(wrong, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// The expectation starts on the line before its effects.
	wrongLine := strings.Count(src[:strings.Index(src, "effects: 3")], "\n")
	out := mustCLI(t, "validate", good, filepath.Join("missions", "catalog", "timeout-then-success.yaml"))
	if !strings.Contains(out, good+": ok (good-one)") || !strings.Contains(out, "timeout-then-success.yaml: ok (timeout-then-success)") {
		t.Errorf("validate output:\n%s", out)
	}

	code, out, errOut := cli("validate", good, bad, wrong, filepath.Join(dir, "absent.yaml"))
	if code != exitBadInput {
		t.Fatalf("exit %d, want 2", code)
	}
	for _, want := range []string{
		good + ": ok (good-one)",
		fmt.Sprintf("%s:%d: unknown fixture \"sucess\"; did you mean success? (accepted: failure_before_commit", bad, badLine),
		fmt.Sprintf("%s:%d: under --stable-keys=off, effects: got 2, expected 3", wrong, wrongLine),
		filepath.Join(dir, "absent.yaml") + ": no such file",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "3 of 4 files have problems") {
		t.Errorf("stderr %q", errOut)
	}
}
