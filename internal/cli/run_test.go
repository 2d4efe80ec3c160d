package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/missions/missionstest"
	"github.com/replaylab/replaylab/render"
)

// TestRunSummaryLedgerAfterAFailedObject: the "ledger after" column names
// the objects that stand. Once re_0001 has ended failed, the retry's row
// shows re_0002, not the failed re_0001.
func TestRunSummaryLedgerAfterAFailedObject(t *testing.T) {
	out := mustCLI(t, "run", "refund-pending-then-failed", "--stable-keys=off")
	var row []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "t3 ") {
			row = append(row, line)
			continue
		}
		if len(row) > 0 && strings.HasPrefix(line, "     ") {
			row = append(row, line)
			continue
		}
		if len(row) > 0 {
			break
		}
	}
	// Nothing else in the retry's row names re_0001: the ledger column
	// alone could.
	text := strings.Join(row, "\n")
	if len(row) == 0 || strings.Contains(text, "re_0001") || !strings.Contains(text, "re_0002\n") {
		t.Errorf("the retry's row should show re_0002 standing, not the failed re_0001:\n%s", text)
	}
}

// TestRunSummaryWorkGrowsWithTheRun: each row of the summary looks at the
// few objects it names, not at every object so far. Counted in
// allocations, not time: 2,000 attempts once took about 4 million.
func TestRunSummaryWorkGrowsWithTheRun(t *testing.T) {
	m, err := missions.Parse("many.yaml", []byte(missionstest.ManyAttempts(2000)))
	if err != nil {
		t.Fatal(err)
	}
	off := false
	c, err := missions.Run(m, m.Settings(missions.Overrides{StableKeys: &off}))
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1, func() { render.WriteSummary(io.Discard, c, render.DefaultTextWidth) })
	if limit := 100 * float64(len(c.Events)); allocs > limit {
		t.Errorf("the summary of %d events made %.0f allocations; want at most %.0f", len(c.Events), allocs, limit)
	}
}

// TestOutRefusesWhatIsNotAFile: --out moves a whole file into place, which
// replaces whatever is at the path. Given a link, --force replaced the
// link and left its target as it was (--out /dev/stdout turned the link
// into a file and printed nothing); given a device or a pipe, it replaced
// that (for root, /dev/full itself). Both are refused, with or without
// --force, and nothing is written.
func TestOutRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.json")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("target.json", link); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(dir, "pipe.json")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{link, link + " is a symbolic link (to target.json); a file written here would replace the link"},
		{pipe, pipe + " is a named pipe, not a file"},
	} {
		for _, force := range []bool{false, true} {
			args := []string{"run", "timeout-then-success", "--json", "--out", tt.path}
			if force {
				args = append(args, "--force")
			}
			code, out, errOut := cli(args...)
			if code != exitBadInput || out != "" || !strings.Contains(errOut, tt.want) {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(args, " "), code, out, errOut, tt.want)
			}
		}
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", info.Mode(), err)
	}
	if info, err := os.Lstat(pipe); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v %v", info.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target changed: %q", b)
	}
	assertNoTemp(t, dir)
	// The writer itself refuses too, whoever calls it.
	if err := atomicfile.WriteFile(pipe, []byte("x"), true); err == nil {
		t.Error("atomicfile.WriteFile replaced a named pipe")
	}
}

// TestEmptyNames: an empty mission id drew three unrelated suggestions,
// and an empty file name ": no such file".
func TestEmptyNames(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", ""}, "replaylab: the mission id is empty; give one (list them with: replaylab missions)\n"},
		{[]string{"replay", ""}, "replaylab: the file name is empty; give the path of a file\n"},
		{[]string{"validate", ""}, "replaylab: the file has problems\n"},
	}
	for _, tt := range tests {
		code, out, errOut := cli(tt.args...)
		if code != exitBadInput || errOut != tt.want {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
		if tt.args[0] == "validate" && out != "the file name is empty; give the path of a file\n" {
			t.Errorf("validate '': stdout %q", out)
		}
	}
}

// TestFileNamesArePrintedClean: errors were cleaned of escape sequences,
// but the lines that name a file that is fine were not, so a file name
// picked up by a glob could drive the terminal.
func TestFileNamesArePrintedClean(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(writeCase(t, dir, "timeout-then-success"))
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "\x1b]0;pwned\a\x1b[31mcase.json")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "\x1b[2Jout")
	for _, args := range [][]string{
		{"validate", name},
		{"replay", name},
		{"run", "timeout-then-success", "--out", filepath.Join(dir, "\x1b[31mrun.json")},
		{"export", "timeout-then-success", "--dir", outDir},
	} {
		code, out, errOut := cli(args...)
		if code != exitOK {
			t.Errorf("%q: exit %d\n%s%s", args, code, out, errOut)
		}
		if strings.ContainsAny(out+errOut, "\x1b\a") {
			t.Errorf("%q printed control characters: %q %q", args, out, errOut)
		}
	}
}

// TestHeadlineFigures are the seed lab's numbers: what the effect counter
// reads for each of its three missions with stable keys on and off.
func TestHeadlineFigures(t *testing.T) {
	tests := []struct {
		mission string
		stable  string
		effects int
		verdict missions.Verdict
	}{
		{"timeout-then-success", "on", 1, missions.ExactlyOnce},
		{"timeout-then-success", "off", 2, missions.Duplicate},
		{"failure-then-failure", "on", 0, missions.FailedCleanly},
		{"failure-then-failure", "off", 0, missions.FailedCleanly},
		{"timeout-before-commit", "on", 1, missions.ExactlyOnce},
		{"timeout-before-commit", "off", 1, missions.ExactlyOnce},
	}
	for _, tt := range tests {
		t.Run(tt.mission+"/"+tt.stable, func(t *testing.T) {
			out := mustCLI(t, "run", tt.mission, "--stable-keys="+tt.stable, "--json")
			var doc struct {
				Outcome struct {
					Effects  int `json:"effects"`
					Verdicts []struct {
						Verdict missions.Verdict `json:"verdict"`
					} `json:"verdicts"`
				} `json:"outcome"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Outcome.Effects != tt.effects {
				t.Errorf("outcome.effects = %d, want %d", doc.Outcome.Effects, tt.effects)
			}
			if len(doc.Outcome.Verdicts) != 1 || doc.Outcome.Verdicts[0].Verdict != tt.verdict {
				t.Errorf("verdicts %+v, want %s", doc.Outcome.Verdicts, tt.verdict)
			}
		})
	}
}

func TestRunSummary(t *testing.T) {
	out := mustCLI(t, "run", "timeout-then-success", "--stable-keys=off")
	for _, want := range []string{
		"timeout-then-success — Timeout, then success",
		"stable keys off · policy naive · contract v1",
		"the agent says", "ledger after",
		"timeout_after_commit", "→ the caller sees: timeout",
		`"Sorry, the refund of 45.00 on`,
		"re_0001 re_0002",
		"effects 2 · intended 1",
		"duplicate",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	on := mustCLI(t, "run", "timeout-then-success", "--stable-keys=on")
	if !strings.Contains(on, "exactly_once") || !strings.Contains(on, "effects 1 · intended 1") || strings.Contains(on, "re_0002") {
		t.Errorf("stable keys on: summary should show one effect and exactly_once:\n%s", on)
	}
}

// TestRunSummaryFits runs every catalog mission under both policies and
// checks the summary stays within 100 columns by default, and within
// --width at narrower widths, with its table whole (every row's "ledger
// after" cell starts in the same column as the heading's), and holds no
// escape codes.
func TestRunSummaryFits(t *testing.T) {
	for _, m := range missions.BuiltIn().Missions {
		for _, policy := range []string{"naive", "guarded"} {
			for _, width := range []int{0, 40, 57, 80, 96} {
				args := []string{"run", m.ID, "--policy", policy, "--stable-keys=off"}
				limit := 100
				if width > 0 {
					args, limit = append(args, "--width", fmt.Sprint(width)), width
				}
				out := mustCLI(t, args...)
				lines := strings.Split(out, "\n")
				for i, line := range lines {
					if w := ansi.StringWidth(line); w > limit {
						t.Errorf("%v: line %d is %d columns, more than %d:\n%s", args, i+1, w, limit, line)
					}
				}
				// The rule under the heading marks where each column starts;
				// a "t<tick>" row starts a table row whose last cell (the
				// effect count) must start where the last rule starts.
				var rule string
				for _, line := range lines {
					if strings.HasPrefix(line, "---- ") {
						rule = line
					}
				}
				last := strings.LastIndex(rule, " -") + 1
				for i, line := range lines {
					if len(line) > 1 && line[0] == 't' && line[1] >= '0' && line[1] <= '9' {
						if r := []rune(line); len(r) <= last || r[last-1] != ' ' || r[last] < '0' || r[last] > '9' {
							t.Errorf("%v: row at line %d does not put its effect count in the last column (col %d):\n%s\n%s", args, i+1, last, rule, line)
						}
					}
				}
				if strings.ContainsRune(out, '\x1b') {
					t.Errorf("%s: escape codes in the summary", m.ID)
				}
			}
		}
	}
}

func TestRunSeed(t *testing.T) {
	a := caseJSON(t, mustCLI(t, "run", "timeout-then-success", "--json"))
	b := caseJSON(t, mustCLI(t, "run", "timeout-then-success", "--json", "--seed", "7"))
	if a.Settings.Seed != missions.DefaultSeed || b.Settings.Seed != 7 {
		t.Fatalf("seeds %d and %d", a.Settings.Seed, b.Settings.Seed)
	}
	if keysOf(a) == "" || keysOf(a) == keysOf(b) {
		t.Errorf("another seed should mint other keys: %q vs %q", keysOf(a), keysOf(b))
	}
	again := mustCLI(t, "run", "timeout-then-success", "--json", "--seed", "7")
	if want := mustCLI(t, "run", "timeout-then-success", "--json", "--seed", "7"); again != want {
		t.Error("the same seed gives different output")
	}
}

// TestRunOut: --out writes atomically and never overwrites without --force.
func TestRunOut(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "case.json")
	mustCLI(t, "run", "timeout-then-success", "--json", "--out", path)
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if c := caseJSON(t, string(first)); c.Outcome.Effects != 1 {
		t.Fatalf("effects %d", c.Outcome.Effects)
	}
	code, _, errOut := cli("run", "timeout-then-success", "--stable-keys=off", "--json", "--out", path)
	if code != exitBadInput || !strings.Contains(errOut, path) || !strings.Contains(errOut, "--force") {
		t.Fatalf("exit %d, stderr %q: want 2 naming the file and --force", code, errOut)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, first) {
		t.Fatal("the file changed without --force")
	}
	mustCLI(t, "run", "timeout-then-success", "--stable-keys=off", "--json", "--out", path, "--force")
	now, _ := os.ReadFile(path)
	if c := caseJSON(t, string(now)); c.Outcome.Effects != 2 {
		t.Fatalf("--force did not overwrite: effects %d", c.Outcome.Effects)
	}
	assertNoTemp(t, dir)
}

// The summary folds checkpoint events into the rows they belong to: one row
// per attempt, each naming the states the intent moved through.
func TestRunSummaryFoldsCheckpoints(t *testing.T) {
	out := mustCLI(t, "run", "timeout-then-success", "--stable-keys=off")
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "t0 ") || strings.HasPrefix(line, "t1 ") {
			rows++
		}
	}
	if rows != 2 {
		t.Errorf("want one row per attempt (2), got %d:\n%s", rows, out)
	}
	for _, want := range []string{"checkpoint: approved → submitted →", "checkpoint: submitted → committed →", "delivered"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// The caller's budget: one attempt leaves the refund committed but believed
// failed; the write-up's command reproduces that budget.
func TestRunBudgetFlags(t *testing.T) {
	out := mustCLI(t, "run", "timeout-then-success", "--max-attempts", "1", "--json")
	if !strings.Contains(out, `"verdict": "hidden_effect"`) || !strings.Contains(out, `"max_attempts": 1`) {
		t.Errorf("one attempt must end believed failed with the effect hidden:\n%s", out)
	}
	md := mustCLI(t, "run", "timeout-then-success", "--max-attempts", "1", "--format", "markdown")
	if !strings.Contains(md, "--max-attempts=1") {
		t.Errorf("the write-up's command drops the budget:\n%s", md)
	}
	code, _, errOut := cli("run", "timeout-then-success", "--deadline", "-1")
	if code != exitBadInput || !strings.Contains(errOut, `invalid argument "-1" for "--deadline"`) {
		t.Errorf("a negative deadline: exit %d, %q", code, errOut)
	}
}

// The matrix's headline checks, through the command line: a guarded run of
// changed-parameters escalates with an evidence bundle, and a naive retry
// under fresh keys is a duplicate.
func TestRunMatrixHeadlines(t *testing.T) {
	var c struct {
		Outcome struct {
			Verdicts []struct{ Verdict string }
			Evidence []struct {
				Intent   string
				Key      string
				Attempts []json.RawMessage
				Reads    []json.RawMessage
				Objects  []json.RawMessage
			}
		}
	}
	out := mustCLI(t, "run", "changed-parameters", "--policy", "guarded", "--json")
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Outcome.Verdicts) != 1 || c.Outcome.Verdicts[0].Verdict != "escalated" {
		t.Errorf("verdicts %+v; want escalated", c.Outcome.Verdicts)
	}
	if len(c.Outcome.Evidence) != 1 || c.Outcome.Evidence[0].Key == "" || len(c.Outcome.Evidence[0].Attempts) != 2 || len(c.Outcome.Evidence[0].Objects) != 1 {
		t.Errorf("evidence %+v; want the key, both attempts and the object", c.Outcome.Evidence)
	}
	summary := mustCLI(t, "run", "timeout-then-success", "--stable-keys=off")
	if !strings.Contains(summary, "duplicate") {
		t.Errorf("the summary lacks the duplicate verdict:\n%s", summary)
	}
}
