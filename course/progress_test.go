package course

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProgressPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tt := range []struct {
		env  map[string]string
		home string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/s"}, "/h", "/s/replaylab/progress.json"},
		{map[string]string{}, "/h", "/h/.local/state/replaylab/progress.json"},
		// A relative XDG_STATE_HOME is to be ignored, says the spec.
		{map[string]string{"XDG_STATE_HOME": "rel"}, "/h", "/h/.local/state/replaylab/progress.json"},
	} {
		got, err := ProgressPath(env(tt.env), tt.home)
		if err != nil || got != tt.want {
			t.Errorf("%v %s: got %q %v, want %q", tt.env, tt.home, got, err, tt.want)
		}
	}
	if _, err := ProgressPath(env(nil), ""); err == nil {
		t.Error("no XDG_STATE_HOME and no home: no error")
	}
}

// TestProgressRoundTrip: progress written is read back the same, and the
// file's directory is made, private to the user.
func TestProgressRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "replaylab", "progress.json")
	p, note, err := ReadProgress(path)
	if err != nil || note != "" || len(p.Lessons) != 0 {
		t.Fatalf("no file yet: %+v %q %v", p, note, err)
	}
	p.Finish("a", 2, 3)
	p.Finish("a", 1, 3)
	if err := WriteProgress(path, p); err != nil {
		t.Fatal(err)
	}
	got, note, err := ReadProgress(path)
	if err != nil || note != "" {
		t.Fatal(err, note)
	}
	if lp := got.Lessons["a"]; !lp.Done || lp.Right != 1 || lp.Asked != 3 || lp.Best != 2 {
		t.Errorf("read back %+v", lp)
	}
	fi, err := os.Stat(filepath.Dir(path))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the progress directory: %v %v", fi.Mode(), err)
	}
}

// TestCorruptProgressIsSetAside: a progress file that does not read is
// kept beside, under a name not taken, and said so; never lost.
func TestCorruptProgressIsSetAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "progress.json")
	for i, bad := range []string{`{"schema": "replaylab.progress/v1", "lessons": {"a": {`, `{"schema": "other"}`,
		`{"schema": "replaylab.progress/v1", "lessons": {"a": {"done": true, "right": 5, "asked": 2, "best": 5}}}`,
		`{"schema": "replaylab.progress/v1", "colour": 1}`,
		`{"schema": "replaylab.progress/v1", "lessons": {}}}`,
		`{"schema": "replaylab.progress/v1", "lessons": {"a": {"done": true, "right": 1, "asked": 2, "best": 3}}}`} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		p, note, err := ReadProgress(path)
		if err != nil {
			t.Fatal(err)
		}
		want := path + ".corrupt"
		if i > 0 {
			want = path + ".corrupt-" + string(rune('1'+i))
		}
		if len(p.Lessons) != 0 || !strings.Contains(note, "kept as "+want) {
			t.Errorf("%s: %+v, note %q; want it kept as %s", bad, p, note, want)
		}
		if kept, err := os.ReadFile(want); err != nil || string(kept) != bad {
			t.Errorf("the file set aside: %q %v", kept, err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("the corrupt file is still in place: %v", err)
		}
	}
}

// A lesson left midway is in progress, and next is that lesson.
func TestCourseStatusInProgress(t *testing.T) {
	c := BuiltIn()
	var p Progress
	p.Finish(c.Lessons[0].ID, 5, 6)
	last := c.Lessons[len(c.Lessons)-1]
	p.Resume = &Resume{Lesson: last.ID, Right: 2, Asked: 3}
	st := Status(c, p)
	if !st[len(st)-1].InProgress || st[1].InProgress {
		t.Fatalf("in progress: %+v", st)
	}
	// The score so far, as the course shows it, beside the last finished
	// one (none here).
	if so := st[len(st)-1].SoFar; so == nil || so.Right != 2 || so.Asked != 3 || st[1].SoFar != nil {
		t.Fatalf("score so far: %+v", st[len(st)-1])
	}
	out := StatusText(st)
	want := fmt.Sprintf("next: lesson %d, %s, where you left it", len(c.Lessons), last.Title)
	if !strings.Contains(out, want) || !strings.Contains(out, "in progress, 2 of 3 right so far") {
		t.Fatalf("status does not say %q:\n%s", want, out)
	}
}

func TestCourseStatus(t *testing.T) {
	c := BuiltIn()
	var p Progress
	p.Finish(c.Lessons[0].ID, 5, 6)
	out := StatusText(Status(c, p))
	for _, want := range []string{fmt.Sprintf("1 of %d lessons done", len(c.Lessons)), "✓  1  A timeout is not a failure", "5 of 6 right", "·  2  Pending is not failed", "next: lesson 2, Pending is not failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("status does not say %q:\n%s", want, out)
		}
	}
}

func TestAnyLessonDone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	if AnyLessonDone(path) {
		t.Error("no file: a lesson done")
	}
	if err := os.WriteFile(path, []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if AnyLessonDone(path) {
		t.Error("a broken file: a lesson done")
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("reading set the file aside: %v", err)
	}
	var p Progress
	p.Finish("x", 1, 1)
	if err := WriteProgress(path, p); err != nil {
		t.Fatal(err)
	}
	if !AnyLessonDone(path) {
		t.Error("a finished lesson not seen")
	}
}

// TestProgressThatIsNoFile: a directory where the progress file goes is
// named as such, by the course and by --status, and left alone.
func TestProgressThatIsNoFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadProgress(path); err == nil || !strings.Contains(err.Error(), "is a directory, not a file") {
		t.Errorf("ReadProgress: %v", err)
	}
	if _, note := PeekProgress(path); !strings.Contains(note, "is a directory, not a file") {
		t.Errorf("PeekProgress: %q", note)
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		t.Errorf("the directory was moved: %v", err)
	}
}
