package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/replaylab/replaylab/lab"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/reproduce"
)

// runWithStderr runs the command line with standard input from the null
// device and returns the exit code and what went to standard error.
func runWithStderr(t *testing.T, args ...string) (int, string) {
	t.Helper()
	in, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	errFile, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	oldIn, oldErr := os.Stdin, os.Stderr
	os.Stdin, os.Stderr = in, errFile
	code := execute(args)
	os.Stdin, os.Stderr = oldIn, oldErr
	b, err := os.ReadFile(errFile.Name())
	if err != nil {
		t.Fatal(err)
	}
	return code, string(b)
}

// The lab needs a terminal: under go test standard input is the null
// device, so every way of opening it refuses with exit code 2 and points
// at the headless command.
func TestLabWithoutTerminalIsUsageError(t *testing.T) {
	for _, args := range [][]string{{}, {"lab"}, {"lab", "timeout-then-success"}, {"lab", "--stable-keys=off", "--dir", t.TempDir()}} {
		code, stderr := runWithStderr(t, args...)
		if code != exitBadInput || !strings.Contains(stderr, "needs a terminal") || !strings.Contains(stderr, "replaylab run") {
			t.Errorf("replaylab %v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// Mistakes in the command line are reported as such, not as a missing
// terminal.
func TestLabRejectsBadInputFirst(t *testing.T) {
	for args, want := range map[string]string{
		"lab no-such-mission":                              "no-such-mission",
		"lab --policy reckless":                            "reckless",
		"lab timeout-then-success another-one":             "accepts at most 1 arg",
		"stray-argument":                                   "stray-argument",
		"lab --missions /no/such/dir timeout-then-success": "/no/such/dir",
	} {
		code, stderr := runWithStderr(t, strings.Fields(args)...)
		if code != exitBadInput || !strings.Contains(stderr, want) || strings.Contains(stderr, "needs a terminal") {
			t.Errorf("replaylab %s: exit %d, stderr %q (want it to mention %q)", args, code, stderr, want)
		}
	}
}

// labKey is a key as the terminal sends it.
func labKey(k string) tea.KeyMsg {
	switch k {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEscape}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// labPress sends keys to a lab and returns it as it then stands.
func labPress(m tea.Model, keys ...string) tea.Model {
	for _, k := range keys {
		m, _ = m.Update(labKey(k))
	}
	return m
}

// A row the naive example fails opens in the lab as the client's own run:
// conform --record names the command, the lab steps through the client's
// real requests with the fault each met and the ledger after it, the
// toggles that would change the caller are off with the reason, and the
// run is pinned beside the guarded caller on the same schedule.
func TestLabOpensAConformSession(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "sessions")
	inExamples(t)
	code, _, stderr := cli("conform", "--record", rec, "--scenario", "timeout-then-success", "--", "./naive-refund")
	path := filepath.Join(rec, "timeout-then-success.json")
	if code != exitVerdict || !strings.Contains(stderr, "replaylab lab "+path) {
		t.Fatalf("conform --record: exit %d, and no lab command for the row that did not pass:\n%s", code, stderr)
	}
	run, err := reproduce.OpenSession(path, pipeWait)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Steps) != 2 || run.Steps[0].Fixture != missions.TimeoutAfterCommit || run.Steps[1].Fixture != missions.Success {
		t.Fatalf("the run's steps are not the client's two creates: %+v", run.Steps)
	}
	dir := t.TempDir()
	m, err := lab.New(lab.Options{Recorded: run, RecordedName: path, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var tm tea.Model = m
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	view := tm.View()
	if !strings.Contains(view, "your client") || !strings.Contains(view, "k p c s f F off") {
		t.Fatalf("the recorded run does not show its toggles off:\n%s", view)
	}
	tm = labPress(tm, "n")
	if v := tm.View(); !strings.Contains(v, "step 1 of 3") || !strings.Contains(v, "timeout_after_commit") || !strings.Contains(v, "effects 1") {
		t.Fatalf("after the first request:\n%s", v)
	}
	tm = labPress(tm, "n")
	if v := tm.View(); !strings.Contains(v, "step 2 of 3") || !strings.Contains(v, "effects 2") || !strings.Contains(v, "re_0002 succeeded") {
		t.Fatalf("after the second request:\n%s", v)
	}
	for _, k := range []string{"k", "p", "c", "s", "f"} {
		if v := labPress(tm, k).View(); !strings.Contains(v, "f and F are off") || !strings.Contains(v, "step 2 of 3") {
			t.Errorf("%s on a recorded run does not say why it is off:\n%s", k, v)
		}
	}
	if v := labPress(tm, "e").View(); !strings.Contains(v, "a file already") {
		t.Errorf("e on a recorded run:\n%s", v)
	}
	if v := labPress(tm, "r", "g").View(); !strings.Contains(v, "the provider's records") || !strings.Contains(v, "duplicate") {
		t.Errorf("g at the end of a duplicate:\n%s", v)
	}
	tm = labPress(tm, "r", "m", "v", "a", "enter", "p", "r", "m")
	v := strings.Join(strings.Fields(tm.View()), " ")
	if !strings.Contains(v, "A stable keys off, your client") || !strings.Contains(v, "B stable keys on, policy guarded") || !strings.Contains(v, "effects 2") {
		t.Fatalf("the client beside the guarded caller:\n%s", tm.View())
	}
	// e writes the guarded caller's case; the recorded run is its session
	// file already, and the status says so.
	tm, cmd := tm.Update(labKey("e"))
	if cmd == nil {
		t.Fatal("e in compare starts no write")
	}
	tm, _ = tm.Update(cmd())
	files, _ := os.ReadDir(dir)
	if v := strings.Join(strings.Fields(tm.View()), " "); len(files) != 1 || !strings.Contains(v, "recorded run is its") {
		t.Fatalf("e with a recorded pin: %d files, status:\n%s", len(files), tm.View())
	}
}

// A session the lab cannot trust is refused with what was wrong: cut
// short, a case in its place, a ledger edited after the run.
func TestLabRefusesBadSessions(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "sessions")
	inExamples(t)
	if code, _, stderr := cli("conform", "--record", rec, "--scenario", "timeout-then-success", "--", "./naive-refund"); code != exitVerdict {
		t.Fatalf("conform: exit %d\n%s", code, stderr)
	}
	good, err := os.ReadFile(filepath.Join(rec, "timeout-then-success.json"))
	if err != nil {
		t.Fatal(err)
	}
	// A setting asked for beside a session would go unused: refused.
	if code, stderr := runWithStderr(t, "lab", "--policy", "guarded", filepath.Join(rec, "timeout-then-success.json")); code != exitBadInput || !strings.Contains(stderr, "--policy: a recorded session is your client's own run") {
		t.Errorf("lab --policy with a session: exit %d, %q", code, stderr)
	}
	// A good session is refused only for want of a terminal.
	if code, stderr := runWithStderr(t, "lab", filepath.Join(rec, "timeout-then-success.json")); code != exitBadInput || !strings.Contains(stderr, "needs a terminal") {
		t.Errorf("lab SESSION without a terminal: exit %d, %q", code, stderr)
	}
	caseFile := filepath.Join(dir, "case.json")
	if code, _, stderr := cli("run", "timeout-then-success", "--json", "--out", caseFile); code != exitOK {
		t.Fatalf("run: %d %s", code, stderr)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tampered := strings.Replace(string(good), `"effects": 2`, `"effects": 1`, 1)
	if tampered == string(good) {
		t.Fatal("the session has no effect count to tamper with")
	}
	for path, want := range map[string]string{
		write("cut.json", good[:len(good)/2]):         "unexpected end",
		caseFile:                                      "is a case, not a session",
		write("tampered.json", []byte(tampered)):      "effects",
		write("notjson.json", []byte("hello, lab\n")): "invalid JSON",
		filepath.Join(dir, "missing.json"):            "no such file; the lab opens a mission by its id",
		write("m.yaml", []byte("id: x\n")):            "is a mission file: open it with replaylab lab --missions",
		write("other.json", []byte(`{"x": 1}`)):       `not a replaylab session: no "schema" field (expected "replaylab.session/v1"); the lab opens a mission`,
	} {
		_, err := reproduce.OpenSession(path, pipeWait)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), filepath.Base(path)) {
			t.Errorf("%s: %v, want it to name the file and say %q", filepath.Base(path), err, want)
		}
	}
}
