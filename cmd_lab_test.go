package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
