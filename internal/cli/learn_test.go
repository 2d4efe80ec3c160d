package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/course"
	"github.com/replaylab/replaylab/export"
)

// TestLearnStatusAndReset: --status prints the lessons for a person or,
// with --json, for a script; --reset removes the progress; a corrupt
// progress file is set aside with a word on standard error.
func TestLearnStatusAndReset(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	path := filepath.Join(state, "replaylab", "progress.json")
	var p course.Progress
	p.Finish("a-timeout-is-not-a-failure", 4, 6)
	if err := course.WriteProgress(path, p); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := executeIO(args, &out, &errb)
		return code, out.String(), errb.String()
	}
	lessons := len(course.BuiltIn().Lessons)
	code, out, _ := run("learn", "--status")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("1 of %d lessons done", lessons)) || !strings.Contains(out, "4 of 6 right") {
		t.Errorf("--status: %d %q", code, out)
	}
	code, out, _ = run("learn", "--status", "--json")
	var st export.CourseStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 {
		t.Fatalf("--status --json: %d %v\n%s", code, err, out)
	}
	if st.Schema != export.CourseStatusSchemaID || st.Progress != path || len(st.Lessons) != lessons || !st.Lessons[0].Done || st.Lessons[0].Right != 4 || st.Lessons[1].Done {
		t.Errorf("--status --json: %+v", st)
	}
	if code, _, errs := run("learn", "--json"); code != 2 || !strings.Contains(errs, "--json goes with --status") {
		t.Errorf("--json alone: %d %q", code, errs)
	}
	if code, out, _ := run("learn", "--reset"); code != 0 || !strings.Contains(out, "progress reset: removed "+path) {
		t.Errorf("--reset: %d %q", code, out)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("--reset left the file: %v", err)
	}
	if code, out, _ := run("learn", "--reset"); code != 0 || !strings.Contains(out, "no progress to reset") {
		t.Errorf("--reset again: %d %q", code, out)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run("learn", "--status")
	if code != 0 || !strings.Contains(errs, "could not be read") || !strings.Contains(errs, "left as it is") || !strings.Contains(out, fmt.Sprintf("0 of %d lessons done", lessons)) {
		t.Errorf("a corrupt file: %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("--status moved the corrupt file: %v", err)
	}
}

// TestLearnNeedsATerminal: without a terminal the course says so and
// points at --status.
func TestLearnNeedsATerminal(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Chdir(t.TempDir())
	var out, errb bytes.Buffer
	code := executeIO([]string{"learn"}, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "the course needs a terminal") || !strings.Contains(errb.String(), "learn --status") {
		t.Errorf("%d %q", code, errb.String())
	}
}

// The course's cases go beside its progress unless --dir says otherwise,
// never into the current directory unasked.
func TestCourseCasesDir(t *testing.T) {
	if got, err := courseCasesDir("/state/replaylab/progress.json", "", false); err != nil || got != "/state/replaylab/cases" {
		t.Errorf("default: %q %v", got, err)
	}
	if got, err := courseCasesDir("/state/replaylab/progress.json", "mine", true); err != nil || got != "mine" {
		t.Errorf("--dir mine: %q %v", got, err)
	}
	if _, err := courseCasesDir("/state/replaylab/progress.json", "", true); err == nil || !strings.Contains(err.Error(), "--dir is empty") {
		t.Errorf("--dir=: %v", err)
	}
}
