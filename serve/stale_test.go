package serve

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/replaylab/replaylab/internal/atomicfile"
)

// TestRunSweepsStaleSessionFiles: a session file that a serve killed
// mid-answer left in TMPDIR is removed when the next serve starts; one of
// a process that still runs is not.
func TestRunSweepsStaleSessionFiles(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$") // a process that has exited
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	stale := filepath.Join(tmp, SessionTempPrefix+atomicfile.TempMark(cmd.ProcessState.Pid())+"-1.json")
	live := filepath.Join(tmp, SessionTempPrefix+atomicfile.TempMark(os.Getpid())+"-2.json")
	for _, f := range []string{stale, live} {
		if err := os.WriteFile(f, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, RunConfig{Addr: "127.0.0.1:0", Out: io.Discard, Log: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a dead serve's session file was not swept")
	}
	if _, err := os.Stat(live); err != nil {
		t.Error("a running process's session file was swept")
	}
}
