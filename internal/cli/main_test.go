package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/buildinfo"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
)

// cli runs the command line in process and returns the exit code and what
// it printed.
func cli(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = executeIO(args, &out, &errb)
	return code, out.String(), errb.String()
}

func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := cli(args...)
	if code != exitOK {
		t.Fatalf("replaylab %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// caseJSON decodes run --json output.
func caseJSON(t *testing.T, out string) *missions.Case {
	t.Helper()
	c, err := export.Unmarshal("stdout", []byte(out))
	if err != nil {
		t.Fatalf("run --json printed something that is not a case: %v", err)
	}
	return c
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

func keysOf(c *missions.Case) string {
	var ks []string
	for _, ev := range c.Events {
		if ev.Key != "" {
			ks = append(ks, ev.Key)
		}
	}
	return strings.Join(ks, ",")
}

// TestBadInputExitCodes: usage mistakes exit 2 and say what is accepted.
func TestBadInputExitCodes(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"run", "timeout-then-sucess"}, []string{`unknown mission "timeout-then-sucess"`, "did you mean timeout-then-success"}},
		{[]string{"run", "timeout-then-success", "--stable-keys=maybe"}, []string{"--stable-keys", "accepted: on, off"}},
		{[]string{"run", "timeout-then-success", "--policy", "lucky"}, []string{"--policy", "accepted: naive, guarded"}},
		{[]string{"run", "timeout-then-success", "--contract", "v3"}, []string{"--contract", "accepted: v1, v2, none"}},
		{[]string{"run", "timeout-then-success", "--key-source", "uuid"}, []string{"--key-source", "accepted: intent, payload_hash"}},
		{[]string{"run", "timeout-then-success", "--seed", "abc"}, []string{"--seed", "see: replaylab run --help"}},
		{[]string{"run", "timeout-then-success", "--bogus"}, []string{"unknown flag: --bogus"}},
		{[]string{"run"}, []string{"accepts 1 arg"}},
		{[]string{"run", "a", "b"}, []string{"accepts 1 arg"}},
		{[]string{"export"}, []string{"requires at least 1 arg"}},
		{[]string{"export", "nope", "--dir", "x"}, []string{`unknown mission "nope"`}},
		{[]string{"export", "timeout-then-success", "--variants", "--stable-keys=off"}, []string{"--stable-keys and --variants"}},
		{[]string{"validate"}, []string{"requires at least 1 arg"}},
		{[]string{"replay"}, []string{"requires at least 1 arg"}},
		{[]string{"missions", "extra"}, []string{"unknown command"}},
		{[]string{"missions", "--missions", "/nonexistent/dir"}, []string{"--missions /nonexistent/dir: no such directory"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := cli(tt.args...)
			if code != exitBadInput {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitBadInput, out, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}

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

// userMission is timeout-then-success under another id, with escape
// sequences in its title and goal that must never reach the terminal.
func userMission(t *testing.T, id string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("missions", "catalog", "timeout-then-success.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), "id: timeout-then-success", "id: "+id, 1)
	s = strings.Replace(s, "title: Timeout, then success", "title: \"My \\e[31mred\\e[0m mission\\e]0;pwned\\a\"", 1)
	return []byte(s)
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

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	for _, name := range leftoverTemps(t, dir) {
		t.Errorf("a temporary file was left behind: %s", name)
	}
}

// leftoverTemps lists the temporary files atomicfile.WriteFile left in dir:
// it names them ".replaylab-*.tmp".
func leftoverTemps(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".replaylab-") || strings.HasSuffix(e.Name(), ".tmp") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestExportVariants(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "cases")
	out := mustCLI(t, "export", "timeout-then-success", "failure-then-failure", "--variants", "--dir", dir)
	want := map[string]int{
		"timeout-then-success.stable-keys-on.naive.v1.json":    1,
		"timeout-then-success.stable-keys-off.naive.v1.json":   2,
		"timeout-then-success.stable-keys-on.guarded.v1.json":  1,
		"failure-then-failure.stable-keys-on.naive.v1.json":    0,
		"failure-then-failure.stable-keys-off.naive.v1.json":   0,
		"failure-then-failure.stable-keys-on.guarded.v1.json":  0,
		"failure-then-failure.stable-keys-off.guarded.v1.json": -1, // only if the mission contrasts it
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range entries {
		got[e.Name()] = true
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		c, err := export.Unmarshal(e.Name(), data)
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := want[e.Name()]; ok && n >= 0 && c.Outcome.Effects != n {
			t.Errorf("%s: effects %d, want %d", e.Name(), c.Outcome.Effects, n)
		}
		if !strings.Contains(out, e.Name()) {
			t.Errorf("the output does not mention %s", e.Name())
		}
	}
	for name, n := range want {
		if n >= 0 && !got[name] {
			t.Errorf("%s was not written (got %v)", name, got)
		}
	}
	// One file per expectation of each mission, no more.
	total := 0
	for _, id := range []string{"timeout-then-success", "failure-then-failure"} {
		m, _ := missions.BuiltIn().Get(id)
		names := map[string]bool{}
		for _, e := range m.Expect {
			names[export.FileName(m.ID, m.Settings(e.When))] = true
		}
		total += len(names)
	}
	if len(entries) != total {
		t.Errorf("%d files, want %d", len(entries), total)
	}
}

func TestExportNeverOverwritesWithoutForce(t *testing.T) {
	dir := t.TempDir()
	mustCLI(t, "export", "timeout-then-success", "--dir", dir)
	name := "timeout-then-success.stable-keys-on.naive.v1.json"
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The second mission's file would be new, but nothing is written when
	// any file is in the way.
	code, _, errOut := cli("export", "failure-then-failure", "timeout-then-success", "--dir", dir)
	if code != exitBadInput || !strings.Contains(errOut, name) || !strings.Contains(errOut, "--force") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if data, _ := os.ReadFile(path); string(data) != "mine\n" {
		t.Error("the existing file was overwritten")
	}
	if _, err := os.Stat(filepath.Join(dir, "failure-then-failure.stable-keys-on.naive.v1.json")); err == nil {
		t.Error("a refused export still wrote another file")
	}
	mustCLI(t, "export", "failure-then-failure", "timeout-then-success", "--dir", dir, "--force")
	if data, _ := os.ReadFile(path); string(data) == "mine\n" {
		t.Error("--force did not overwrite")
	}
	assertNoTemp(t, dir)
}

// TestExportFailedWriteLeavesNothing: when the rename cannot happen (a
// directory is where the file should go), the export fails and leaves no
// temporary file.
func TestExportFailedWriteLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "timeout-then-success.stable-keys-on.naive.v1.json")
	if err := os.MkdirAll(filepath.Join(blocker, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := cli("export", "timeout-then-success", "--dir", dir, "--force")
	if code != exitBadInput || !strings.Contains(errOut, blocker) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	assertNoTemp(t, dir)
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := writeFileAtomic(path, []byte("one"), false); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(path, []byte("two"), false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("overwrite without force: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Fatalf("content %q", b)
	}
	if err := writeFileAtomic(path, []byte("three"), true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "three" {
		t.Fatalf("content %q", b)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", info.Mode())
	}
	if err := writeFileAtomic(filepath.Join(dir, "missing", "f.json"), []byte("x"), false); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
	assertNoTemp(t, dir)
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

// writeCase exports a case into dir and returns its path.
func writeCase(t *testing.T, dir string, args ...string) string {
	t.Helper()
	path := filepath.Join(dir, "case.json")
	mustCLI(t, append(append([]string{"run"}, args...), "--json", "--out", path)...)
	return path
}

func TestReplayIdentical(t *testing.T) {
	dir := t.TempDir()
	mustCLI(t, "export", "timeout-then-success", "timeout-before-commit", "--variants", "--dir", dir)
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(paths) < 4 {
		t.Fatalf("only %d case files", len(paths))
	}
	out := mustCLI(t, append([]string{"replay"}, paths...)...)
	if n := strings.Count(out, ": identical"); n != len(paths) {
		t.Errorf("%d of %d identical:\n%s", n, len(paths), out)
	}
	// A case with another seed replays identically too, and validates.
	seeded := writeCase(t, t.TempDir(), "timeout-then-success", "--seed", "42", "--stable-keys=off")
	if out := mustCLI(t, "replay", seeded); !strings.Contains(out, "identical") {
		t.Errorf("seeded replay: %s", out)
	}
	if out := mustCLI(t, "validate", seeded); !strings.Contains(out, "ok (case of mission timeout-then-success") || !strings.Contains(out, "--seed=42") {
		t.Errorf("validate of a case: %s", out)
	}
}

// TestReplayDifference edits a case file and expects exit 1 with the first
// difference in words.
func TestReplayDifference(t *testing.T) {
	tests := []struct {
		name string
		edit func(doc map[string]any)
		want []string
	}{
		{"outcome effects", func(d map[string]any) { d["outcome"].(map[string]any)["effects"] = 3 },
			[]string{`the outcome, field "effects": the case file says 3; the replay gives 2`}},
		{"a verdict", func(d map[string]any) {
			d["outcome"].(map[string]any)["verdicts"].([]any)[0].(map[string]any)["verdict"] = "exactly_once"
		}, []string{`the outcome for intent refund-1042, field "verdict": the case file says "exactly_once"; the replay gives "duplicate"`}},
		{"an event's effect count", func(d map[string]any) {
			for _, e := range d["events"].([]any) {
				ev := e.(map[string]any)
				if ev["kind"] == "attempt" && ev["attempt"] == float64(2) {
					ev["effects"] = 1
				}
			}
		}, []string{"event", "attempt 2 for refund-1042", `field "effects": the case file says 1; the replay gives 2`}},
		{"a missing event", func(d map[string]any) {
			evs := d["events"].([]any)
			d["events"] = evs[:len(evs)-1]
		}, []string{"the number of events"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeCase(t, t.TempDir(), "timeout-then-success", "--stable-keys=off")
			data, _ := os.ReadFile(path)
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			tt.edit(doc)
			// Keep "schema" first, as the format requires.
			b, _ := json.Marshal(doc)
			b = append([]byte(`{"schema":"replaylab.case/v3",`), bytes.TrimPrefix(b, []byte(`{`))...)
			b = bytes.Replace(b, []byte(`,"schema":"replaylab.case/v3"`), nil, 1)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := cli("replay", path)
			if code != exitVerdict {
				t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
			}
			if !strings.Contains(out, "differs from its replay") {
				t.Errorf("stdout %q", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	path := writeCase(t, dir, "timeout-then-success")
	data, _ := os.ReadFile(path)
	files := map[string]struct {
		data []byte
		want string
	}{
		"truncated.json": {data[:len(data)/3], "truncated"},
		"future.json":    {bytes.Replace(data, []byte("replaylab.case/v3"), []byte("replaylab.case/v7"), 1), "from a version this build does not read"},
		"mission.yaml":   {userMission(t, "x"), "is a mission file (mission x), not a case"},
		"bad-step.json":  {bytes.Replace(data, []byte(`"attempt": "refund-1042"`), []byte(`"attempt": "refund-9"`), 1), "refund-9"},
	}
	for name, f := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := cli("replay", p)
		if code != exitBadInput || !strings.Contains(errOut, name) || !strings.Contains(errOut, f.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 mentioning %q", name, code, errOut, f.want)
		}
	}
	code, _, errOut := cli("replay", filepath.Join(dir, "absent.json"))
	if code != exitBadInput || !strings.Contains(errOut, "absent.json: no such file") {
		t.Errorf("absent: exit %d, %q", code, errOut)
	}
}

var updateReadme = flag.Bool("update-readme", false, "rewrite the catalog table in README.md from the built-in catalog")

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
//	go test -run TestReadmeCatalog -update-readme .
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
	if *updateReadme {
		if err := writeFileAtomic("README.md", []byte(readme[:start]+want+readme[end:]), true); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the catalog table in README.md is out of date; run: go test -run TestReadmeCatalog -update-readme .\nwant:\n%s", want)
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

// A command given the wrong number of arguments says what it takes.
func TestWrongArgumentsShowUsage(t *testing.T) {
	code, _, errOut := cli("run")
	if code != exitBadInput || !strings.Contains(errOut, "usage: replaylab run MISSION") {
		t.Errorf("exit %d, stderr %q; want 2 and the usage line", code, errOut)
	}
}

// TestReplayNullPart: a case file whose events, ledger or outcome were
// replaced by null is reported, never a crash.
func TestReplayNullPart(t *testing.T) {
	for _, part := range []string{"events", "ledger", "outcome"} {
		t.Run(part, func(t *testing.T) {
			path := writeCase(t, t.TempDir(), "timeout-then-success")
			data, _ := os.ReadFile(path)
			var doc map[string]json.RawMessage
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			start := bytes.Index(data, []byte(`"`+part+`": `))
			end := start + len(part) + 4 + len(doc[part])
			edited := append(append(append([]byte{}, data[:start]...), []byte(`"`+part+`": null`)...), data[end:]...)
			if err := os.WriteFile(path, edited, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := cli("replay", path)
			if code != exitVerdict && code != exitBadInput {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			if !strings.Contains(out+errOut, part) {
				t.Errorf("the message does not name %s:\n%s%s", part, out, errOut)
			}
		})
	}
}

// TestRootArgumentsSayWhatWasMeant: the bare command given an argument
// says what was likely meant: the command a typo was close to, or, for a
// mission id, the commands that take one.
func TestRootArgumentsSayWhatWasMeant(t *testing.T) {
	tests := []struct{ arg, want string }{
		{"timeout-then-success", `"timeout-then-success" is a mission, not a command: open it in the lab with "replaylab lab timeout-then-success", or run it headless with "replaylab run timeout-then-success"`},
		{"exprot", `unknown command "exprot"; did you mean export?`},
		{"zzz", `unknown command "zzz" (commands: check, compare, completion, conform, explore, export, lab, learn, missions, replay, run, serve, validate, version; see: replaylab --help)`},
	}
	for _, tt := range tests {
		code, out, errOut := cli(tt.arg)
		if code != exitBadInput || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("replaylab %s: exit %d, stdout %q, stderr %q; want %q", tt.arg, code, out, errOut, tt.want)
		}
	}
}

// TestReplayNamesTheFirstDifferenceInReadingOrder: the first difference is
// the first a reader of the file meets, fields in the order the file has
// them: an edited fixture is named as the fixture, not as the effect count
// that changed with it (which sorts first by name).
func TestReplayNamesTheFirstDifferenceInReadingOrder(t *testing.T) {
	path := writeCase(t, t.TempDir(), "timeout-then-success")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The second scheduled attempt's fixture, in the mission part.
	edited := strings.Replace(string(data), `"fixture": "success"`, `"fixture": "failure_before_commit"`, 1)
	if edited == string(data) {
		t.Fatal("the case has no success fixture to edit")
	}
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := cli("replay", path)
	want := `first difference: event 6 (tick 1, attempt 2 for refund-1042), field "fixture": the case file says "success"; the replay gives "failure_before_commit"`
	if code != exitVerdict || !strings.Contains(out, want) {
		t.Errorf("exit %d, stdout %q; want %q", code, out, want)
	}
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

// TestVersion: replaylab --version and replaylab version print one line,
// the same, from the build information, with the Go that built it.
func TestVersion(t *testing.T) {
	var lines []string
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var out, errb bytes.Buffer
		if code := executeIO(args, &out, &errb); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		lines = append(lines, out.String())
	}
	if want := buildinfo.Line() + "\n"; lines[0] != want || lines[1] != want {
		t.Fatalf("--version %q, version %q, want %q both", lines[0], lines[1], want)
	}
	if !strings.HasPrefix(lines[0], "replaylab ") || !strings.Contains(lines[0], runtime.Version()) {
		t.Fatalf("version line %q does not name replaylab and its Go", lines[0])
	}
}
