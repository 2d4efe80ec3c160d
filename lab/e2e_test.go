package lab

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/replaylab/replaylab/export"
)

// TestSeedExercise walks the seed lab's exercise in a running program, by
// keys alone: timeout then success with stable keys on and off, failure
// before commit twice, all three pinned, compared and exported. The waits
// are upper bounds for a loaded machine, never a measure of speed.
func TestSeedExercise(t *testing.T) {
	// Exports go to a relative directory inside a temporary one, so the
	// status line that names them reads the same on every run.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := os.Chdir(tmp); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd) //nolint:errcheck
	m, err := New(Options{Catalog: seedCatalog(t), Dir: "cases"})
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	keys := []string{
		"enter",  // open timeout-then-success, the first mission
		"r", "m", // run it, pin it (stable keys on)
		"k", "r", "m", // stable keys off, run, pin
		"esc", // back to the picker
		"/",   // filter …
		"failure-then-failure",
		"enter", "enter", // … accept the filter, open the mission
		"r", "m", // run, pin (stable keys still off)
		"v", // compare the three
		"e", // export all three
	}
	for _, k := range keys {
		if len(k) > 1 && keyMsg(k).Type == tea.KeyRunes {
			tm.Type(k)
			continue
		}
		tm.Send(keyMsg(k))
	}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("exported 3 cases"))
	}, teatest.WithDuration(60*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	tm.Send(keyMsg("q"))

	final := tm.FinalModel(t, teatest.WithFinalTimeout(60*time.Second)).(Model)
	if final.screen != screenCompare || len(final.pinned) != 3 {
		t.Fatalf("ended on screen %d with %d pinned", final.screen, len(final.pinned))
	}
	if err := os.Chdir(wd); err != nil {
		t.Fatal(err)
	}
	golden.RequireEqual(t, final.View())

	want := map[string]int{
		"timeout-then-success.stable-keys-on.naive.v1.json":  1,
		"timeout-then-success.stable-keys-off.naive.v1.json": 2,
		"failure-then-failure.stable-keys-off.naive.v1.json": 0,
	}
	for name, effects := range want {
		path := filepath.Join(tmp, "cases", name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("export missing: %v", err)
		}
		c, err := export.Unmarshal(path, data)
		if err != nil {
			t.Fatal(err)
		}
		if c.Outcome.Effects != effects {
			t.Errorf("%s: %d effects, want %d", name, c.Outcome.Effects, effects)
		}
	}
}
