package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/replaylab/replaylab/conform"
	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/serve"
)

// scorecardsPath is the page that shows the examples' scorecards,
// wherever a test runs from (taken before TestMain moves to the root).
var scorecardsPath, _ = filepath.Abs(filepath.Join("..", "..", "docs", "conform.md"))

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
		for _, ex := range []string{"naive-refund", "guarded-refund", "naive-agent", "guarded-agent", "listing-refund"} {
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
	for _, sc := range conform.Scenarios(missions.BuiltIn()) {
		if !strings.Contains(out, "\n"+sc.ID()+": ") {
			t.Errorf("--list lacks %s", sc.ID())
		}
	}
	// The missions written to contrast a provider are the lab's: the
	// matrix plays a provider with --provider.
	if strings.Contains(out, "saved-500-not-kept") || len(conform.Scenarios(missions.BuiltIn())) != 15 {
		t.Errorf("--list plays the profile missions too:\n%s", out)
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
	// An executable file that is not a program: exec refuses it.
	notAProgram := filepath.Join(dir, "not-a-program")
	os.WriteFile(notAProgram, []byte{0x7f, 'E', 'L', 'F', 0, 0, 0}, 0o755)
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
		{[]string{"conform", "--scenario", "", "--", "true"}, "--scenario is empty"},
		{[]string{"conform", "--scenario", "TIMEOUT-THEN-SUCCESS", "--", "true"}, "did you mean timeout-then-success? (list them with: replaylab conform --list)"},
		{[]string{"conform", "--list", "--junit", "x.xml"}, "--junit does nothing"},
		{[]string{"conform", "--timeout", "1000h", "--", "true"}, "to 24h"},
		{[]string{"conform", "--timeout", "1s", "--", "true"}, "from 3s"},
		{[]string{"conform", "--record", dir, "--junit", filepath.Join(dir, "timeout-then-success.json"), "--", "true"}, "the path of a session --record writes"},
		{[]string{"conform", "--junit", notAProgram, "--force", "--", notAProgram}, "the client command itself"},
		{[]string{"conform", "--scenario", "timeout-then-success", "--", notAProgram}, "could not be started"},
		{[]string{"conform", "--explore", "0", "--", "true"}, "--explore"},
		{[]string{"conform", "--explore", "-3", "--", "true"}, "--explore"},
		{[]string{"conform", "--explore", "5", "--seed", "x1", "--", "true"}, `"x1" for "--seed" flag: accepted: a whole number from 0`},
		{[]string{"conform", "--explore", "5", "--shard", "3/2", "--", "true"}, `--shard "3/2": give I/N`},
		{[]string{"conform", "--shard", "1/0", "--", "true"}, "give I/N"},
		{[]string{"conform", "--explore", "5", "--out", dir, "--", "true"}, "--out " + dir + " exists"},
		{[]string{"conform", "--seed", "4", "--", "true"}, "--seed goes with --explore"},
		{[]string{"conform", "--explore", "5", "--fail-on", "unsafe", "--", "true"}, "unsettled"},
		{[]string{"conform", "--explore", "5", "--scenario", "timeout-then-success", "--", "true"}, "give one"},
		{[]string{"conform", "--for", "0s", "--", "true"}, "--for 0s"},
		{[]string{"conform", "merge", taken}, "taken.xml"},
		{[]string{"conform", "merge"}, "give the --json reports"},
		{[]string{"conform", "--explore", "5", "--out", taken, "--force", "--", "true"}, "is a file"},
		{[]string{"conform", "--explore", "5", "--out", filepath.Join(taken, "sub"), "--", "true"}, "is a file"},
		{[]string{"conform", "--explore", "5", "--out", "  ", "--", "true"}, "--out is empty"},
		{[]string{"conform", "--explore", "5", "--missions", dir, "--", "true"}, "--missions adds mission files"},
		{[]string{"conform", "--explore", "5", "--shard", "", "--", "true"}, "--shard is empty"},
		{[]string{"conform", "--explore", "2", "--shard", "3/3", "--", "true"}, "holds none"},
		{[]string{"conform", "--explore", "5", "--for", "0s", "--", "true"}, "positive duration"},
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

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$") // this test binary, running no test
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.Pid()
}

// inExamples runs the rest of the test in the directory of the built
// examples, so that conform is given ./NAME as the README gives it (its
// scorecard's first line names the command, and wraps by its length).
func inExamples(t *testing.T) {
	t.Helper()
	t.Chdir(filepath.Dir(exampleClient(t, "guarded-refund")))
}

func TestConformGradesTheExamples(t *testing.T) {
	dir := t.TempDir()
	inExamples(t)
	code, out, stderr := cli("conform", "--junit", filepath.Join(dir, "g.xml"), "--", "./guarded-refund")
	n := len(conform.Scenarios(missions.BuiltIn()))
	readmeScorecard(t, "guarded-refund", out)
	if code != exitOK || !strings.Contains(out, fmt.Sprintf("%d of %d scenarios pass", n, n)) || strings.Count(out, "\nPASS ") != n {
		t.Fatalf("guarded: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "g.xml")); err != nil || !strings.Contains(stderr, "JUnit XML") {
		t.Errorf("--junit: %v; stderr %q", err, stderr)
	}

	rec := filepath.Join(dir, "sessions")
	// What a conform killed mid-run left: a session half-written in
	// --record's folder, a client's state directory in TMPDIR. Both are
	// swept when the next one starts.
	dead := deadPID(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	staleState := filepath.Join(tmp, "replaylab-conform-"+atomicfile.TempMark(dead)+"-1")
	staleRecord := filepath.Join(rec, ".replaylab-"+atomicfile.TempMark(dead)+"-2.tmp")
	for _, d := range []string{staleState, rec} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(staleRecord, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = cli("conform", "--record", rec, "--", "./naive-refund")
	for _, stale := range []string{staleState, staleRecord} {
		if _, err := os.Stat(stale); err == nil {
			t.Errorf("%s, left by a process that is gone, was not swept", stale)
		}
	}
	if code != exitVerdict || !strings.Contains(stderr, fmt.Sprintf("%d of %d scenarios did not pass", n-5, n)) {
		t.Fatalf("naive: exit %d\n%s\n%s", code, out, stderr)
	}
	readmeScorecard(t, "naive-refund", out)
	if !strings.Contains(out, fmt.Sprintf("5 of %d scenarios pass; unsafe: timeout-then-success,", n)) {
		t.Errorf("the tally does not name the unsafe rows:\n%s", out)
	}
	files, _ := os.ReadDir(rec)
	if len(files) != 2*n {
		t.Fatalf("--record wrote %d files, want %d: a session and its spans per row", len(files), 2*n)
	}
	// What it says it wrote is what it wrote: a session and a trace file
	// per row, counted apart.
	if want := fmt.Sprintf("wrote %d sessions and %d trace files to %s", n, n, rec); !strings.Contains(stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr)
	}
	// Beside each session, the provider's spans of it, for a trace viewer:
	// server spans, which check says are the provider's side.
	if code, _, errOut := cli("check", filepath.Join(rec, "timeout-then-success.otlp.jsonl")); code != exitBadInput || !strings.Contains(errOut, "server spans: a provider's side of the calls") {
		t.Errorf("check of a row's spans: exit %d, %s", code, errOut)
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

// readmeScorecard holds the scorecard of examples/NAME that the docs show
// (docs/conform.md, linked from the README) to what conform printed.
func readmeScorecard(t *testing.T, name, out string) {
	t.Helper()
	readme, err := os.ReadFile(scorecardsPath)
	if err != nil {
		t.Fatal(err)
	}
	flags := ""
	if strings.HasSuffix(name, "-agent") {
		flags = "--mcp "
	}
	mark := "<!-- conform: " + name + " -->\n```\n$ replaylab conform " + flags + "-- ./" + name + "\n"
	_, rest, ok := strings.Cut(string(readme), mark)
	if !ok {
		t.Fatalf("docs/conform.md has no scorecard marked %q", mark)
	}
	shown, _, _ := strings.Cut(rest, "```")
	got := out
	if shown != got {
		t.Errorf("the scorecard of %s in docs/conform.md is not what conform prints now:\n--- docs\n%s--- conform\n%s", name, shown, got)
	}
}

// TestConformGradesTheAgents: the example agents, graded over MCP, get
// the grades their REST counterparts get, and the README shows them.
func TestConformGradesTheAgents(t *testing.T) {
	n := len(conform.Scenarios(missions.BuiltIn()))
	inExamples(t)
	code, out, stderr := cli("conform", "--mcp", "--", "./guarded-agent")
	readmeScorecard(t, "guarded-agent", out)
	if code != exitOK || !strings.Contains(out, "(mcp, tick") || !strings.Contains(out, fmt.Sprintf("%d of %d scenarios pass", n, n)) {
		t.Fatalf("guarded-agent: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr = cli("conform", "--mcp", "--", "./naive-agent")
	readmeScorecard(t, "naive-agent", out)
	if code != exitVerdict || !strings.Contains(out, fmt.Sprintf("5 of %d scenarios pass; unsafe: timeout-then-success,", n)) {
		t.Fatalf("naive-agent: exit %d\n%s\n%s", code, out, stderr)
	}
	// Without --mcp an agent finds no tools: it says so, and no row passes.
	code, out, _ = cli("conform", "--scenario", "timeout-then-success", "--", "./guarded-agent")
	if code != exitVerdict || !strings.Contains(out, "REPLAYLAB_MCP_URL is not set") {
		t.Fatalf("an agent without --mcp: exit %d\n%s", code, out)
	}
}

// TestConformGradesTheAgentsUnderEitherRevision: an agent that speaks
// MCP 2026-07-28 (no session) and one that speaks 2025-11-25 (a session)
// meet the same faults and get the same grades, and each session shows
// its calls under the revision served.
func TestConformGradesTheAgentsUnderEitherRevision(t *testing.T) {
	inExamples(t)
	grades := func(args ...string) (map[string]conform.Grade, *conform.Report) {
		t.Helper()
		_, out, stderr := cli(append([]string{"conform", "--mcp", "--json"}, args...)...)
		var rep conform.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("conform %v: %v\n%s", args, err, stderr)
		}
		g := map[string]conform.Grade{}
		for _, r := range rep.Rows {
			g[r.Scenario] = r.Grade
		}
		return g, &rep
	}
	for _, agent := range []string{"./guarded-agent", "./naive-agent"} {
		both, _ := grades("--", agent)
		for _, rev := range []string{serve.MCPRevisionSession, serve.MCPRevisionPerRequest} {
			rec := filepath.Join(t.TempDir(), "sessions")
			got, rep := grades("--mcp-revision", rev, "--record", rec, "--", agent)
			if !maps.Equal(got, both) {
				t.Errorf("%s under %s: grades %v, want %v (both revisions served)", agent, rev, got, both)
			}
			if rep.MCPRevision != rev {
				t.Errorf("%s: the report's mcp_revision is %q, want %s", agent, rep.MCPRevision, rev)
			}
			name := filepath.Join(rec, "timeout-then-success.json")
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			s, err := export.UnmarshalSession(name, data)
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			for _, r := range s.Requests {
				if r.Call == nil {
					continue
				}
				calls++
				if perRequest := rev == serve.MCPRevisionPerRequest; (r.Call.Revision == rev) != perRequest || (r.Call.Session == "") != perRequest {
					t.Errorf("%s under %s: call %+v", agent, rev, *r.Call)
				}
			}
			if calls == 0 {
				t.Errorf("%s under %s: no tool call recorded", agent, rev)
			}
		}
	}
	code, _, stderr := cli("conform", "--mcp-revision", "2026-07-28", "--", "./guarded-agent")
	if code != exitBadInput || !strings.Contains(stderr, "give --mcp with it") {
		t.Errorf("--mcp-revision without --mcp: exit %d, %q", code, stderr)
	}
	code, _, stderr = cli("conform", "--mcp", "--mcp-revision", "2026", "--", "./guarded-agent")
	if code != exitBadInput || !strings.Contains(stderr, "give 2025-11-25") {
		t.Errorf("--mcp-revision 2026: exit %d, %q", code, stderr)
	}
}

// Ctrl-C during a run: every client killed, every port and state
// directory released, the partial report printed, exit 130.
func TestConformCtrlC(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marks, tmp := t.TempDir(), t.TempDir()
	client := `sleep 300 & echo $! > "$MARKS/child"; echo $$ > "$MARKS/parent"; echo "$REPLAYLAB_API_BASE" > "$MARKS/base"; wait`
	args := []string{"conform", "--scenario", "timeout-then-success,saved-server-error", "--parallel", "1", "--", "/bin/sh", "-c", client}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "MARKS="+marks, "REPLAYLAB_SERVE_ARGS="+strings.Join(args, "\x1f"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(marks, "base")); err == nil {
			break
		}
		if i == 1000 {
			_ = cmd.Process.Kill()
			t.Fatal("the client never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	_ = cmd.Process.Signal(os.Interrupt)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if strings.Count(stdout.String(), "NOT RUN") != 2 || !strings.Contains(stdout.String(), "(interrupted)") || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("the partial report:\n%s\n%s", stdout.String(), stderr.String())
	}
	for _, name := range []string{"parent", "child"} {
		data, _ := os.ReadFile(filepath.Join(marks, name))
		pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		if pid == 0 {
			t.Fatalf("no %s pid", name)
		}
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(stat), ") Z ") {
			t.Errorf("the client's %s (pid %d) outlived conform", name, pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	base, _ := os.ReadFile(filepath.Join(marks, "base"))
	if c, err := net.DialTimeout("tcp", strings.TrimPrefix(strings.TrimSpace(string(base)), "http://"), time.Second); err == nil {
		c.Close()
		t.Error("the provider's port still takes connections")
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("conform left %s in TMPDIR", left[0].Name())
	}
}

// TestConformExploreAndMerge: listing-refund passes the matrix (its
// scorecard is the one docs/conform.md shows) and fails a generated
// schedule. Two shards of the search, merged, report the failure once; the
// shrunk mission it wrote validates, and conform --missions plays it
// unsafe again.
func TestConformExploreAndMerge(t *testing.T) {
	dir := t.TempDir()
	inExamples(t)
	code, out, stderr := cli("conform", "--", "./listing-refund")
	if code != exitOK {
		t.Fatalf("listing-refund on the matrix: exit %d\n%s\n%s", code, out, stderr)
	}
	readmeScorecard(t, "listing-refund", out)
	var shards []string
	for i := 1; i <= 2; i++ {
		path := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		found := filepath.Join(dir, "found")
		args := []string{"conform", "--explore", "60", "--seed", "1", "--tick", "20ms", "--shard", fmt.Sprintf("%d/2", i), "--json", "--out", found, "--force", "--", "./listing-refund"}
		code, out, stderr := cli(args...)
		if code != exitVerdict && code != exitOK {
			t.Fatalf("shard %d: exit %d\n%s", i, code, stderr)
		}
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, path)
	}
	junit := filepath.Join(dir, "conform.xml")
	code, out, stderr = cli(append([]string{"conform", "merge", "--junit", junit}, shards...)...)
	if code != exitVerdict || !strings.Contains(out, "60 generated schedules of seed 1") || !strings.Contains(out, "UNSAFE ") {
		t.Fatalf("merge: exit %d\n%s\n%s", code, out, stderr)
	}
	if data, err := os.ReadFile(junit); err != nil || !strings.Contains(string(data), `tests="60"`) {
		t.Fatalf("the merged JUnit file: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "found", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no shrunk mission was written")
	}
	id := strings.TrimSuffix(filepath.Base(files[0]), ".yaml")
	if code, out, _ := cli("validate", files[0]); code != exitOK {
		t.Fatalf("validate %s: exit %d\n%s", files[0], code, out)
	}
	code, out, _ = cli("conform", "--missions", filepath.Join(dir, "found"), "--scenario", id, "--tick", "20ms", "--", "./listing-refund")
	if code != exitVerdict || !strings.Contains(out, "UNSAFE") {
		t.Fatalf("the shrunk mission does not fail again: exit %d\n%s", code, out)
	}
}
