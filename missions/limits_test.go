package missions_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/replaylab/replaylab/missions"
)

// TestScheduleClockIsBounded: the provider looks at every object and key
// on every tick, so waits of 10,000 ticks behind thousands of attempts
// once ran for minutes. The clock a schedule spans is bounded; the file
// says at which step it runs over, and a case's mission is held to the
// same bound.
func TestScheduleClockIsBounded(t *testing.T) {
	src := strings.Replace(validMission, "  - wait: 3\n", "  - wait: 10000\n  - wait: 9997\n  - wait: 3\n", 1)
	_, err := missions.Parse("long.yaml", []byte(src))
	if err == nil {
		t.Fatal("a schedule of 20,001 ticks was accepted")
	}
	if want := "long.yaml:17: by this step the schedule has run 20001 ticks; a schedule may span at most 20000"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want it to contain %q", err, want)
	}
	// One tick less is accepted.
	ok := strings.Replace(validMission, "  - wait: 3\n", "  - wait: 10000\n  - wait: 9994\n  - wait: 3\n", 1)
	m, err := missions.Parse("ok.yaml", []byte(ok))
	if err != nil {
		t.Fatalf("a schedule of 20,000 ticks: %v", err)
	}
	m.Schedule = append(m.Schedule, missions.Step{Wait: 5})
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "schedule step 7: by this step the schedule has run 20005 ticks; a schedule may span at most 20000") {
		t.Errorf("Validate: %v", err)
	}
}

// TestAliasesAreNamed: mission files do not expand YAML aliases. An alias
// was read as a value of the wrong kind ("goal must be text" for a goal
// that names the title's anchor); it is named as an alias, once per line,
// and however many there are, the report stays short.
func TestAliasesAreNamed(t *testing.T) {
	src := strings.Replace(validMission, "title: Small\ngoal: A timeout after commit, then a success.", "title: &t Small\ngoal: *t", 1)
	src = strings.Replace(src, "    payload:\n", "    payload: &p\n", 1) + "  - when: {stable_keys: off}\n    effects: 2\n    verdicts: {refund-1: *p}\n"
	_, err := missions.Parse("alias.yaml", []byte(src))
	if err == nil {
		t.Fatal("aliases were accepted")
	}
	want := "alias.yaml:3: the alias *t: mission files do not expand anchors, aliases or << merges; write the value out in full\n" +
		"alias.yaml:25: the alias *p: mission files do not expand anchors, aliases or << merges; write the value out in full"
	if err.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", err, want)
	}
	var laughs strings.Builder
	laughs.WriteString("a: &a [x, x, x, x, x, x, x, x, x]\n")
	for i := range 30 {
		fmt.Fprintf(&laughs, "b%d: &b%d [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n", i, i)
	}
	_, err = missions.Parse("laughs.yaml", []byte(laughs.String()))
	if err == nil || strings.Count(err.Error(), "\n") != 10 || !strings.HasSuffix(err.Error(), "laughs.yaml: aliases on 20 more lines") {
		t.Errorf("a file of aliases: %v", err)
	}
}

// TestAddFSRefusesANamedPipe: opening a named pipe waits for a writer, so
// a pipe in a directory of missions once hung every command that read it.
// It is refused by name, through a link too, and the other files are read.
func TestAddFSRefusesANamedPipe(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "good.yaml"), []byte(validMission), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pipe.yaml", filepath.Join(dir, "link.yml")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	cat := missions.BuiltIn()
	go func() { done <- cat.AddFS(os.DirFS(dir), "dir") }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("AddFS is still waiting on the named pipe after a minute")
	}
	want := "dir/link.yml: is a named pipe or a socket, not a file; a directory of missions holds mission .yaml files\n" +
		"dir/pipe.yaml: is a named pipe or a socket, not a file; a directory of missions holds mission .yaml files"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want\n%s", err, want)
	}
	if _, err := cat.Get("small"); err != nil {
		t.Errorf("the good file beside the pipe was not read: %v", err)
	}
}

// TestIntentNeverAttempted: an intent no step sends for was accepted; it
// counted as intended and could only end "failed cleanly", with nothing
// said about the step that is missing. It is reported at the intent.
func TestIntentNeverAttempted(t *testing.T) {
	src := strings.Replace(validMission, "schedule:\n", "  - id: refund-2\n    op: refund\n    principal: agent\n    payload: {order: \"2\"}\nschedule:\n  - read: refund-2\n", 1)
	_, err := missions.Parse("unused.yaml", []byte(src))
	want := "unused.yaml:12: intent refund-2 is never attempted: add a step `- attempt: refund-2` with a fixture, or remove the intent"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want\n%s", err, want)
	}
	// An attempt inside a together step counts.
	src = strings.Replace(src, "  - read: refund-2\n", "  - together:\n      - {attempt: refund-2, fixture: success}\n      - {attempt: refund-1, fixture: success}\n", 1)
	if _, err := missions.Parse("together.yaml", []byte(src)); err != nil {
		t.Errorf("an intent attempted in a together step: %v", err)
	}
}

// TestTabIndentNamed: a tab in a line's indentation gave only the YAML
// library's words ("found character that cannot start any token"); the
// error now says what is wrong with the line and what YAML takes.
func TestTabIndentNamed(t *testing.T) {
	src := strings.Replace(validMission, "  - wait: 3\n", "\t- wait: 3\n", 1)
	_, err := missions.Parse("tabs.yaml", []byte(src))
	want := "tabs.yaml:15: not valid YAML: found a tab character that violates indentation (the line is indented with a tab; YAML indents with spaces only)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want\n%s", err, want)
	}
}

// TestAddFSClashSaysWhatWouldDo: a file whose id is taken was refused
// without a word of what would be accepted.
func TestAddFSClashSaysWhatWouldDo(t *testing.T) {
	dir := t.TempDir()
	src := strings.Replace(validMission, "id: small", "id: timeout-then-success", 1)
	if err := os.WriteFile(filepath.Join(dir, "mine.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	err := missions.BuiltIn().AddFS(os.DirFS(dir), "dir")
	want := `dir/mine.yaml: mission id "timeout-then-success" is already used by catalog/timeout-then-success.yaml; mission ids must be unique: give this one another id`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want\n%s", err, want)
	}
}

// TestTogetherSaysHowManyItHas: a together step with too many attempts
// said how many it may have, not how many it had.
func TestTogetherSaysHowManyItHas(t *testing.T) {
	src := strings.Replace(validMission, "  - wait: 3\n", "  - together:\n"+strings.Repeat("      - {attempt: refund-1, fixture: success}\n", 9), 1)
	_, err := missions.Parse("nine.yaml", []byte(src))
	want := "nine.yaml:16: together must list from 2 to 8 attempts sent at the same tick; this one lists 9"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want\n%s", err, want)
	}
}
