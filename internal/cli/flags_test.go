package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/missions"
)

// TestNumberFlagsSayWhatIsAccepted: a number flag given something it
// cannot use exits 2, names the flag and says what it accepts, in words
// rather than a parse function's name.
func TestNumberFlagsSayWhatIsAccepted(t *testing.T) {
	case1 := writeCase(t, t.TempDir(), "timeout-then-success")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "timeout-then-success", "--seed", "-1"}, `"--seed" flag: accepted: a whole number from 0 to 18446744073709551615`},
		{[]string{"run", "timeout-then-success", "--seed", "99999999999999999999999"}, `"--seed" flag: accepted: a whole number from 0`},
		{[]string{"export", "timeout-then-success", "--seed", "seven"}, `"--seed" flag: accepted: a whole number from 0`},
		{[]string{"run", "timeout-then-success", "--max-attempts", "-1"}, `"--max-attempts" flag: accepted: a whole number from 0 (as many as the schedule offers) to 20000`},
		{[]string{"run", "timeout-then-success", "--max-attempts", "lots"}, `"--max-attempts" flag: accepted: a whole number from 0`},
		{[]string{"export", "timeout-then-success", "--max-attempts", "20001"}, `"--max-attempts" flag: accepted:`},
		{[]string{"run", "timeout-then-success", "--deadline", "-5"}, `"--deadline" flag: accepted: 0 (no deadline) or a tick from 1 up`},
		{[]string{"compare", case1, case1, "--width", "10"}, `"--width" flag: accepted: a whole number of columns from 40`},
		{[]string{"compare", case1, case1, "--width", "wide"}, `"--width" flag: accepted: a whole number of columns from 40`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[2:], " "), func(t *testing.T) {
			code, out, errOut := cli(tt.args...)
			if code != exitBadInput || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr %q does not say %q", errOut, tt.want)
			}
			if strings.Contains(errOut, "strconv") || strings.Contains(errOut, "Parse") {
				t.Errorf("stderr %q names a parse function", errOut)
			}
		})
	}
	// The values they accept still work, and reach the case.
	out := mustCLI(t, "run", "timeout-then-success", "--json", "--seed", "18446744073709551615", "--max-attempts", "1", "--deadline", "3")
	c := caseJSON(t, out)
	if c.Settings.Seed != 18446744073709551615 || c.Settings.MaxAttempts != 1 || c.Settings.Deadline != 3 {
		t.Errorf("settings %+v", c.Settings)
	}
}

// TestExportVariantsKeepTheBudget: --variants varies the settings a mission
// contrasts; the seed and the caller's budget given on the command line
// still apply to every variant, and its file name says so.
func TestExportVariantsKeepTheBudget(t *testing.T) {
	dir := t.TempDir()
	out := mustCLI(t, "export", "timeout-then-success", "--variants", "--seed", "7", "--max-attempts", "1", "--deadline", "5", "--dir", dir)
	for _, name := range []string{
		"timeout-then-success.stable-keys-on.naive.v1.seed-7.attempts-1.deadline-5.json",
		"timeout-then-success.stable-keys-off.naive.v1.seed-7.attempts-1.deadline-5.json",
		"timeout-then-success.stable-keys-on.guarded.v1.seed-7.attempts-1.deadline-5.json",
	} {
		if !strings.Contains(out, name) {
			t.Errorf("%s was not written:\n%s", name, out)
			continue
		}
		c := caseJSON(t, readFile(t, filepath.Join(dir, name)))
		if c.Settings.Seed != 7 || c.Settings.MaxAttempts != 1 || c.Settings.Deadline != 5 {
			t.Errorf("%s: settings %+v", name, c.Settings)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestMissionsDirProblems: --missions that is missing or a file, and
// unreadable entries inside it, are named in words with exit 2.
func TestMissionsDirProblems(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "one.yaml")
	if err := os.WriteFile(file, userMission(t, "mine-one"), 0o644); err != nil {
		t.Fatal(err)
	}
	withLink := filepath.Join(dir, "links")
	if err := os.Mkdir(withLink, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "gone.yaml"), filepath.Join(withLink, "gone.yaml")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"missions", "--missions", filepath.Join(dir, "absent")}, "--missions " + filepath.Join(dir, "absent") + ": no such directory (expected a directory of mission *.yaml files)"},
		{[]string{"run", "mine-one", "--missions", file}, "--missions " + file + " is a file; expected a directory of mission *.yaml files"},
		{[]string{"missions", "--missions", withLink}, filepath.Join(withLink, "gone.yaml") + ": a symbolic link to a file that does not exist"},
		{[]string{"validate", dir}, dir + " is a directory; expected a mission .yaml file or a case .json file"},
	}
	for _, tt := range tests {
		code, out, errOut := cli(tt.args...)
		if code != exitBadInput || !strings.Contains(out+errOut, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, out, errOut, tt.want)
		}
		if strings.Contains(errOut, "stat ") || strings.Contains(errOut, "open ") {
			t.Errorf("%v: stderr %q names a system call", tt.args, errOut)
		}
	}
}

// TestRunSummaryShowsTheBudget: the summary's settings line names a budget
// that was set.
func TestRunSummaryShowsTheBudget(t *testing.T) {
	out := mustCLI(t, "run", "timeout-then-success", "--max-attempts", "2", "--deadline", "4")
	// The settings wrap at the table's width, between items: the lines
	// from the second to the blank one, joined, are the settings.
	lines := strings.Split(out, "\n")
	end := 1
	for end < len(lines) && lines[end] != "" {
		end++
	}
	if got := strings.Join(lines[1:end], " · "); got != "stable keys on · policy naive · contract v1 · keys from intent · seed 1 · at most 2 attempts per intent · deadline tick 4" {
		t.Errorf("the summary hides the budget:\n%s", out)
	}
	if out := mustCLI(t, "run", "timeout-then-success"); strings.Contains(out, "at most") || strings.Contains(out, "deadline") {
		t.Errorf("a default budget shows up:\n%s", out)
	}
}

// TestEmptyAndMisplacedPaths: an empty --dir or --out is refused with what
// to give instead, and the lab checks --dir before it opens.
func TestEmptyAndMisplacedPaths(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"export", "timeout-then-success", "--dir="}, "--dir is empty; give a directory (default replaylab-cases"},
		{[]string{"run", "timeout-then-success", "--out="}, "--out is empty; give a file path"},
		{[]string{"lab", "--dir", file}, "--dir " + file + " is a file; expected a directory"},
		{[]string{"--dir", file}, "--dir " + file + " is a file; expected a directory"},
	}
	for _, tt := range tests {
		code, out, errOut := cli(tt.args...)
		if code != exitBadInput || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

// TestValidateCaseNamesTheBudget: validate's line for a case file gives
// every flag that would reproduce it, the budget included.
func TestValidateCaseNamesTheBudget(t *testing.T) {
	path := writeCase(t, t.TempDir(), "timeout-then-success", "--max-attempts", "1", "--deadline", "3")
	out := mustCLI(t, "validate", path)
	if !strings.Contains(out, "--contract=v1 --max-attempts=1 --deadline=3)") {
		t.Errorf("validate hides the budget: %s", out)
	}
}

// TestRunSummaryFailedObjects: when an object ended failed, the summary
// says so beside the effect count, and a clean failure is not described as
// an empty ledger.
func TestRunSummaryFailedObjects(t *testing.T) {
	out := mustCLI(t, "run", "refund-pending-then-failed")
	if !strings.Contains(out, "effects 0 · 1 object ended failed · intended 1 · succeeded 0") {
		t.Errorf("the failed object is not named:\n%s", out)
	}
	if strings.Contains(out, "the ledger holds nothing") {
		t.Errorf("a ledger holding a failed object is described as empty:\n%s", out)
	}
}

// TestMissionsFlagOnlyWhereItCounts: --missions is offered by the commands
// that look missions up by id, and refused, as unknown, by the ones that
// read case or mission files by path and would ignore it.
func TestMissionsFlagOnlyWhereItCounts(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"missions"},
		{"run", "timeout-then-success"},
		{"export", "timeout-then-success", "--dir", filepath.Join(dir, "out")},
	} {
		code, _, errOut := cli(append(args, "--missions", filepath.Join(dir, "none"))...)
		if code != exitBadInput || !strings.Contains(errOut, "no such directory") {
			t.Errorf("%v --missions <missing>: exit %d, stderr %q; want the directory checked", args, code, errOut)
		}
	}
	for _, cmd := range []string{"validate", "replay", "compare"} {
		code, _, errOut := cli(cmd, "--missions", dir, "x.json", "y.json")
		if code != exitBadInput || !strings.Contains(errOut, "unknown flag: --missions") {
			t.Errorf("%s --missions: exit %d, stderr %q; want it refused as unknown", cmd, code, errOut)
		}
		if _, out, _ := cli(cmd, "--help"); strings.Contains(out, "--missions") {
			t.Errorf("%s --help offers --missions", cmd)
		}
	}
	if _, out, _ := cli("lab", "--help"); !strings.Contains(out, "--missions DIR") {
		t.Error("lab --help does not offer --missions")
	}
}

// TestMissionsListFitsTheWidth: the mission list wraps titles and goals
// to --width, and puts them under the id when the ids leave too little
// room beside them.
func TestMissionsListFitsTheWidth(t *testing.T) {
	for _, width := range []int{40, 50, 80, 100} {
		out := mustCLI(t, "missions", "--width", fmt.Sprint(width))
		for i, line := range strings.Split(out, "\n") {
			if w := ansi.StringWidth(line); w > width {
				t.Errorf("--width %d: line %d is %d columns: %q", width, i+1, w, line)
			}
		}
		for _, m := range missions.BuiltIn().Missions {
			if !strings.Contains(strings.Join(strings.Fields(out), " "), m.Title) {
				t.Errorf("--width %d: the title %q is not whole", width, m.Title)
			}
		}
	}
}

// TestRunFailOn: --fail-on turns the verdicts it names into exit code 1,
// after the output is printed or written whole; other verdicts exit 0, and
// a word that is not a verdict is bad usage.
func TestRunFailOn(t *testing.T) {
	code, out, errOut := cli("run", "timeout-then-success", "--stable-keys=off", "--fail-on", "hidden_effect,duplicate")
	if code != exitVerdict || !strings.Contains(out, "effects 2 · intended 1") ||
		errOut != "replaylab: refund-1042 ended duplicate, a verdict --fail-on names\n" {
		t.Errorf("a duplicate under --fail-on duplicate: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := cli("run", "timeout-then-success", "--fail-on", "duplicate"); code != exitOK || errOut != "" {
		t.Errorf("exactly_once under --fail-on duplicate: exit %d, stderr %q", code, errOut)
	}
	path := filepath.Join(t.TempDir(), "case.json")
	if code, _, _ := cli("run", "failure-then-failure", "--json", "--out", path, "--fail-on", "failed_cleanly"); code != exitVerdict {
		t.Errorf("failed_cleanly under --fail-on failed_cleanly: exit %d", code)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("--out was not written before the verdict failed the run: %v", err)
	}
	for _, bad := range []string{"duplicat", "", "duplicate,,phantom"} {
		code, out, errOut := cli("run", "timeout-then-success", "--fail-on", bad)
		if code != exitBadInput || out != "" || !strings.Contains(errOut, "accepted: exactly_once, failed_cleanly, duplicate, hidden_effect, phantom, escalated") {
			t.Errorf("--fail-on %q: exit %d, stdout %q, stderr %q", bad, code, out, errOut)
		}
	}
}
