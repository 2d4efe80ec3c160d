package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

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
