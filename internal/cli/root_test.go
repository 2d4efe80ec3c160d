package cli

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/internal/buildinfo"
)

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

// A command given the wrong number of arguments says what it takes.
func TestWrongArgumentsShowUsage(t *testing.T) {
	code, _, errOut := cli("run")
	if code != exitBadInput || !strings.Contains(errOut, "usage: replaylab run MISSION") {
		t.Errorf("exit %d, stderr %q; want 2 and the usage line", code, errOut)
	}
}

// TestRootArgumentsSayWhatWasMeant: the bare command given an argument
// says what was likely meant: the command a typo was close to, or, for a
// mission id, the commands that take one.
func TestRootArgumentsSayWhatWasMeant(t *testing.T) {
	tests := []struct{ arg, want string }{
		{"timeout-then-success", `"timeout-then-success" is a mission, not a command: open it in the lab with "replaylab lab timeout-then-success", or run it headless with "replaylab run timeout-then-success"`},
		{"exprot", `unknown command "exprot"; did you mean export?`},
		{"zzz", `unknown command "zzz" (commands: check, compare, completion, conform, explore, export, lab, learn, missions, providers, replay, run, serve, validate, version; see: replaylab --help)`},
	}
	for _, tt := range tests {
		code, out, errOut := cli(tt.arg)
		if code != exitBadInput || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("replaylab %s: exit %d, stdout %q, stderr %q; want %q", tt.arg, code, out, errOut, tt.want)
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
