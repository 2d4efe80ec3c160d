package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// TestMain runs the tests from the repository's root, where a user runs
// replaylab: they read README.md, docs/, testdata/ and the catalog by the
// paths the documentation gives.
func TestMain(m *testing.M) {
	if err := os.Chdir("../.."); err != nil {
		panic(err)
	}
	code := m.Run()
	if examplesDir != "" {
		os.RemoveAll(examplesDir)
	}
	os.Exit(code)
}

// executeIO runs the command line with the given output streams and no
// input.
func executeIO(args []string, stdout, stderr io.Writer) int {
	return executeContext(context.Background(), args, stdout, stderr)
}

// executeContext is executeIO under ctx.
func executeContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return run(ctx, args, strings.NewReader(""), stdout, stderr)
}

// execute runs the command line on the process's own streams.
func execute(args []string) int { return Main(args, os.Stdin, os.Stdout, os.Stderr) }

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

func keysOf(c *missions.Case) string {
	var ks []string
	for _, ev := range c.Events {
		if ev.Key != "" {
			ks = append(ks, ev.Key)
		}
	}
	return strings.Join(ks, ",")
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

// writeCase exports a case into dir and returns its path.
func writeCase(t *testing.T, dir string, args ...string) string {
	t.Helper()
	path := filepath.Join(dir, "case.json")
	mustCLI(t, append(append([]string{"run"}, args...), "--json", "--out", path)...)
	return path
}
