package atomicfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$") // this test binary, running no test
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.Pid()
}

// TestSweepRemovesWhatDeadProcessesLeft: Sweep removes the temporary
// files and directories of processes that no longer run, and nothing
// else: not this process's, not another prefix's, not a name whose pid
// part is not a number.
func TestSweepRemovesWhatDeadProcessesLeft(t *testing.T) {
	dir := t.TempDir()
	dead := strconv.Itoa(deadPID(t)) + "." + hostTag()
	mine := strconv.Itoa(os.Getpid()) + "." + hostTag()
	otherHost := strconv.Itoa(deadPID(t)) + ".00000000"
	files := map[string]bool{ // name → kept
		TempPrefix + dead + "-123.tmp":                   false,
		TempPrefix + mine + "-456.tmp":                   true,
		TempPrefix + "probe-789":                         true,
		".other-" + dead + "-1.tmp":                      true,
		"report.json":                                    true,
		TempPrefix + dead + "x-1.tmp":                    true,
		TempPrefix + "-" + dead + ".tmp":                 true,
		TempPrefix + otherHost + "-5.tmp":                true,
		TempPrefix + strconv.Itoa(deadPID(t)) + "-6.tmp": true,
	}
	for name := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	stateDir := filepath.Join(dir, TempPrefix+dead+"-999")
	if err := os.MkdirAll(filepath.Join(stateDir, "inside"), 0o700); err != nil {
		t.Fatal(err)
	}
	if n := Sweep(dir, TempPrefix); n != 2 {
		t.Errorf("Sweep removed %d, want 2 (a dead process's file and directory)", n)
	}
	for name, kept := range files {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", name, err == nil, kept)
		}
	}
	if _, err := os.Stat(stateDir); err == nil {
		t.Error("a dead process's directory was kept")
	}
	if got := TempPattern(TempPrefix, ".tmp"); got != TempPrefix+mine+"-*.tmp" || len(hostTag()) != 8 {
		t.Errorf("TempPattern %q", got)
	}
	if n := Sweep(filepath.Join(dir, "missing"), TempPrefix); n != 0 {
		t.Errorf("a missing directory: removed %d", n)
	}
}
