package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

// q while an export is writing waits for it, then quits and says what
// became of it; q again quits at once, leaving no temporary file.
func TestQuitWaitsForTheExport(t *testing.T) {
	dir := t.TempDir()
	m := newLab(t, Options{Mission: tts, Dir: dir}, 100, 30)
	m = press(t, m, "r")
	next, export := m.Update(keyMsg("e"))
	m = next.(Model)
	if export == nil {
		t.Fatal("e started no export")
	}
	next, cmd := m.Update(keyMsg("q"))
	m = next.(Model)
	if isQuit(cmd) {
		t.Fatal("q quit while the export was writing")
	}
	if !strings.Contains(m.View(), "finishing the export") {
		t.Fatalf("the status does not say it waits:\n%s", m.View())
	}
	next, cmd = m.Update(export())
	m = next.(Model)
	if !isQuit(cmd) {
		t.Fatal("the lab did not quit once the export ended")
	}
	if !strings.Contains(m.QuitNote(), "exported") {
		t.Errorf("quit note %q", m.QuitNote())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || filepath.Ext(entries[0].Name()) != ".json" {
		t.Errorf("the directory holds %v", entries)
	}

	// Asked twice, it quits without waiting, and says so.
	m2 := press(t, newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30), "r")
	next, _ = m2.Update(keyMsg("e"))
	m2 = next.(Model)
	m2 = press(t, m2, "q")
	next, cmd = m2.Update(keyMsg("q"))
	m2 = next.(Model)
	if cmd == nil || !strings.Contains(m2.QuitNote(), "before the export finished") {
		t.Fatalf("a second q: cmd %v, note %q", cmd, m2.QuitNote())
	}
	// Without an export in flight, q quits at once.
	if _, cmd := newLab(t, Options{Mission: tts}, 100, 30).Update(keyMsg("q")); !isQuit(cmd) {
		t.Error("q does not quit")
	}
}
