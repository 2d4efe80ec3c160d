package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

func TestExportWritesTheFullRunAndNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	m := newLab(t, Options{Mission: tts, Dir: dir}, 100, 30)
	m = press(t, m, "n") // position does not matter: the full run is exported
	next, cmd := m.Update(keyMsg("e"))
	m = next.(Model)
	if cmd == nil {
		t.Fatal("e returned no command")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatal("Update wrote to disk before the command ran")
	}
	m = runCmd(t, m, cmd)
	path := filepath.Join(dir, "timeout-then-success.stable-keys-on.naive.v1.json")
	if !strings.Contains(m.status, path) || m.statusErr {
		t.Fatalf("status %q does not name %s", m.status, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := export.Unmarshal(path, data)
	if err != nil {
		t.Fatalf("exported case does not read back: %v", err)
	}
	if c.Outcome.Effects != 1 || len(c.Events) != len(wantCase(t, tts, missions.Overrides{}, 3).Events) {
		t.Fatal("export is not the full run")
	}

	// A second export goes next to the first, which stays as it was.
	if err := os.WriteFile(path, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	m = pressRun(t, m, "e")
	second := filepath.Join(dir, "timeout-then-success.stable-keys-on.naive.v1-2.json")
	if !strings.Contains(m.status, second) {
		t.Fatalf("status %q, want %s", m.status, second)
	}
	if b, _ := os.ReadFile(path); string(b) != "keep me" {
		t.Fatal("export overwrote an existing file")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
}

func TestExportFailureIsReported(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m := newLab(t, Options{Mission: tts, Dir: filepath.Join(blocker, "sub")}, 100, 30)
	m = pressRun(t, m, "e")
	if !m.statusErr || !strings.Contains(m.status, "export failed") {
		t.Fatalf("status %q (error %v), want the failure", m.status, m.statusErr)
	}
}

// An export's status line keeps the end of the file name in sight however
// narrow the terminal: the numeric suffix of a second export is there.
func TestExportStatusKeepsTheFileNameEnd(t *testing.T) {
	dir := t.TempDir()
	m := newLab(t, Options{Mission: tts, Dir: dir}, 80, 24)
	// The case's name holds another file, edited by hand.
	if err := os.WriteFile(filepath.Join(dir, "timeout-then-success.stable-keys-on.naive.v1.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	m = pressRun(t, m, "e")
	line := m.statusLine()
	// The second export's name was taken: the line says so after the name.
	if !strings.HasPrefix(line, "exported to …") || !strings.HasSuffix(line, "stable-keys-on.naive.v1-2.json; the name was taken") || lipgloss.Width(line) > 80 {
		t.Fatalf("status line at 80 columns: %q", line)
	}
	// Wide enough, the whole sentence and path show, and the name taken.
	if wide := resize(m, 220, 24).statusLine(); !strings.HasPrefix(wide, "exported the full run to "+dir) ||
		!strings.HasSuffix(wide, "v1-2.json (timeout-then-success.stable-keys-on.naive.v1.json was there already)") {
		t.Fatalf("status line at 220 columns: %q", wide)
	}
	// The same case exported again is already there: no copy, and the
	// line says which file holds it.
	again := pressRun(t, m, "e")
	if files, _ := os.ReadDir(dir); len(files) != 2 || !strings.HasPrefix(resize(again, 220, 24).statusLine(), "already exported: "+dir) {
		t.Fatalf("exported again: %d files, status %q", len(files), resize(again, 220, 24).statusLine())
	}
	// The first export took its own name and says nothing of it.
	first := pressRun(t, newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 220, 24), "e").statusLine()
	if !strings.HasSuffix(first, "stable-keys-on.naive.v1.json") {
		t.Fatalf("first export: %q", first)
	}
	// Many cases, names taken by other files: the line says some took a
	// suffix; exported again, that they were there already.
	dir2 := t.TempDir()
	for _, name := range []string{"timeout-then-success.stable-keys-on.naive.v1.json", "timeout-then-success.stable-keys-off.naive.v1.json"} {
		if err := os.WriteFile(filepath.Join(dir2, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m = press(t, newLab(t, Options{Mission: tts, Dir: dir2}, 80, 24), "r", "m", "k", "m", "v")
	m = pressRun(t, m, "e")
	if line := m.statusLine(); !strings.HasPrefix(line, "exported 2 cases to …/") || !strings.HasSuffix(line, "; 2 got a -N suffix, the name being taken") || lipgloss.Width(line) > 80 {
		t.Fatalf("status line after exporting pins over taken names: %q", line)
	}
	m = pressRun(t, m, "e")
	if line := m.statusLine(); !strings.HasPrefix(line, "already exported: the 2 cases are in …/") || !strings.HasSuffix(line, " byte for byte, so nothing was written") || lipgloss.Width(line) > 80 {
		t.Fatalf("status line after exporting the pins again: %q", line)
	}
	if files, _ := os.ReadDir(dir2); len(files) != 4 {
		t.Fatalf("%d files after exporting the pins twice, want 4", len(files))
	}
}

func TestTakenName(t *testing.T) {
	for in, want := range map[string]string{
		"a.stable-keys-on.naive.v1-2.json":  "a.stable-keys-on.naive.v1.json",
		"a.stable-keys-on.naive.v1-12.json": "a.stable-keys-on.naive.v1.json",
		"a-b.json":                          "a-b.json",
		"a-.json":                           "a-.json",
	} {
		if got := takenName(in); got != want {
			t.Errorf("takenName(%q) = %q, want %q", in, got, want)
		}
	}
}
