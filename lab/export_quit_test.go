package lab

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
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

// Pins live only in the lab: q with pins not exported asks first, any
// other key stays, q again quits; once compare has exported them, q quits
// at once, and a pin made after that asks again.
func TestQuitAsksBeforeDroppingPins(t *testing.T) {
	quitAfter := func(m Model) (Model, bool) {
		next, cmd := m.Update(keyMsg("q"))
		return next.(Model), isQuit(cmd)
	}
	m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "r")
	if _, quit := quitAfter(m); !quit {
		t.Fatal("q with nothing pinned did not quit")
	}
	m = press(t, m, "m")
	m, quit := quitAfter(m)
	if quit || (!strings.Contains(m.View(), "q again quits") || !strings.Contains(m.View(), "the 1 pinned case")) {
		t.Fatalf("q with a pin quit without asking (quit %v):\n%s", quit, m.View())
	}
	m = press(t, m, "n") // any other key stays
	if m, quit = quitAfter(m); quit {
		t.Fatal("q after another key quit without asking again")
	}
	if _, quit = quitAfter(m); !quit {
		t.Fatal("q asked twice did not quit")
	}

	m = press(t, m, "k", "m", "v")
	m = pressRun(t, m, "e")
	if m.status == "" || !strings.Contains(m.View(), "exported") {
		t.Fatalf("compare's export did not end well:\n%s", m.View())
	}
	if _, quit = quitAfter(m); !quit {
		t.Fatal("q after the pins were exported asked again")
	}
	m = press(t, m, "esc", "k", "c", "m")
	if len(m.pinned) != 3 {
		t.Fatalf("%d pins, want 3", len(m.pinned))
	}
	if _, quit = quitAfter(m); quit {
		t.Fatal("q after a new pin quit without asking")
	}
}

// While compare's export of the pins is writing, q does not ask about
// them: it waits for the write. Each export's answer credits the pins it
// wrote, not those of a later export still under way.
func TestQuitWithPinsWhileTheyAreWriting(t *testing.T) {
	m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "r", "m", "k", "m", "v")
	next, first := m.Update(keyMsg("e"))
	m = next.(Model)
	if first == nil {
		t.Fatal("e on compare started no export")
	}
	next, cmd := m.Update(keyMsg("q"))
	m = next.(Model)
	if m.leaveAsked || isQuit(cmd) || !strings.Contains(m.View(), "finishing the export") {
		t.Fatalf("q while the pins are writing (asked %v):\n%s", m.leaveAsked, m.View())
	}

	// A fresh lab: an export of two pins under way, a third pin, a
	// second export; the first one ends.
	m = newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "r", "m", "k", "m", "v")
	next, first = m.Update(keyMsg("e"))
	m = next.(Model)
	m = press(t, m, "esc", "c", "m", "v")
	next, second := m.Update(keyMsg("e"))
	m = next.(Model)
	next, _ = m.Update(first())
	m = next.(Model)
	if m.savedGen == m.pinGen {
		t.Fatal("the first export was credited with the third pin")
	}
	// The second export fails: the third pin was never written, so q asks.
	failed := second().(exportedMsg)
	failed.err, failed.paths = os.ErrPermission, nil
	next, _ = m.Update(failed)
	m = next.(Model)
	if next, cmd := m.Update(keyMsg("q")); isQuit(cmd) || !next.(Model).leaveAsked {
		t.Fatal("q quit with a pin no export wrote")
	}
	if v := press(t, m, "q").View(); !strings.Contains(v, "· e exports them") {
		t.Errorf("on compare the question names e alone:\n%s", v)
	}

	// The other order: the newer export fails while the older one still
	// writes; the third pin is then written by none, and q asks.
	m = newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "r", "m", "k", "m", "v")
	next, first = m.Update(keyMsg("e"))
	m = next.(Model)
	m = press(t, m, "esc", "c", "m", "v")
	next, second = m.Update(keyMsg("e"))
	m = next.(Model)
	failed = second().(exportedMsg)
	failed.err, failed.paths = os.ErrPermission, nil
	next, _ = m.Update(failed)
	m = next.(Model)
	next, _ = m.Update(first())
	m = next.(Model)
	if next, cmd := m.Update(keyMsg("q")); isQuit(cmd) || !next.(Model).leaveAsked {
		t.Fatal("q quit with a pin whose only export failed")
	}

	// q waits for the pins' only export, which fails: the lab asks
	// again rather than quit and drop them.
	m = newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "r", "m", "v")
	next, first = m.Update(keyMsg("e"))
	m = next.(Model)
	m = press(t, m, "q")
	failed = first().(exportedMsg)
	failed.err, failed.paths = os.ErrPermission, nil
	next, cmd = m.Update(failed)
	m = next.(Model)
	if isQuit(cmd) || !m.leaveAsked || !strings.Contains(m.View(), "not exported") {
		t.Fatalf("the pins' export failed while q waited: quit %v, asked %v\n%s", isQuit(cmd), m.leaveAsked, m.View())
	}
	if _, cmd := m.Update(keyMsg("q")); !isQuit(cmd) {
		t.Fatal("q again after the failed export did not quit")
	}

	// Asked from a screen where v does not compare, the words do not
	// send the person through esc, which answers the question.
	m = newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 120, 30)
	m = press(t, m, "r", "m", "w", "q")
	if v := m.View(); !strings.Contains(v, "from the lab, v then e exports it") {
		t.Errorf("q on the glossary with a pin:\n%s", v)
	}
}

// An export writes its case on its own goroutine while the lab moves on:
// the case it writes is its own copy, not the runner's events, which a
// rewind writes again (go test -race finds the two at once without it),
// and the file is the run's case, byte for byte.
func TestExportWritesItsOwnCopy(t *testing.T) {
	dir := t.TempDir()
	m := newLab(t, Options{Mission: tts, Dir: dir}, 100, 30)
	m = press(t, m, "r")
	next, cmd := m.Update(keyMsg("e"))
	m = next.(Model)
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	for range 20 {
		m = press(t, m, "0", "r")
	}
	msg := (<-done).(exportedMsg)
	if msg.err != nil || len(msg.paths) != 1 {
		t.Fatalf("export: %+v", msg)
	}
	got, err := os.ReadFile(msg.paths[0])
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := missions.BuiltIn().Get(tts)
	c, err := missions.Run(ms, m.settings)
	if err != nil {
		t.Fatal(err)
	}
	want, err := export.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the exported case is not the run's:\n%s", got)
	}
}

// TestExportKeepsTheCasesOfItsKey: e hands the write the cases pinned
// when it was pressed; a pin made before the write runs, which shifts the
// pins in place, does not change what is written.
func TestExportKeepsTheCasesOfItsKey(t *testing.T) {
	m := press(t, newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30), "r")
	a := m.kept()
	pins := make([]*missions.Case, 1, 4)
	pins[0] = a
	cmd := exportCases(t.TempDir(), pins...)
	m = press(t, m, "k")
	pins = append(pins[:0], m.kept()) // the array the command was handed, changed
	msg := cmd().(exportedMsg)
	if msg.err != nil || len(msg.paths) != 1 || !strings.Contains(msg.paths[0], caseFileName(a)) {
		t.Fatalf("the export wrote %v (%v), want %s", msg.paths, msg.err, caseFileName(a))
	}
}
