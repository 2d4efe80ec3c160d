package course

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/internal/infile"
	"github.com/replaylab/replaylab/internal/termtext"
)

// ProgressSchema names the format of the course's progress file.
const ProgressSchema = "replaylab.progress/v1"

// Progress is what the course keeps between runs: per lesson, whether it
// was finished and how the answers went.
type Progress struct {
	Schema  string                    `json:"schema"`
	Lessons map[string]LessonProgress `json:"lessons"`
	// Resume is where the learner left a lesson midway, if they did:
	// the course reopens there, with the answers given so far.
	Resume *Resume `json:"resume,omitempty"`
}

// Resume is a place in a lesson left midway: the run, the question the
// learner was on (the run's questions are counted from 0; one past the
// last is the run's end), and the score so far.
type Resume struct {
	Lesson   string `json:"lesson"`
	Run      int    `json:"run"`
	Question int    `json:"question"`
	Right    int    `json:"right"`
	Asked    int    `json:"asked"`
	// Position is the step the run stood at, when it is known: the
	// course reopens there, so that no step is skipped unseen.
	Position *int `json:"position,omitempty"`
}

// LessonProgress is one lesson's record.
type LessonProgress struct {
	// Done: the lesson was finished at least once.
	Done bool `json:"done"`
	// Right and Asked are the last finished attempt's score.
	Right int `json:"right"`
	Asked int `json:"asked"`
	// Best is the most right answers of any finished attempt.
	Best int `json:"best"`
}

// Finish records a finished attempt at a lesson.
// The lessons' map is copied, not changed in place: a copy of the
// progress handed to a write is never changed under it.
func (p *Progress) Finish(id string, right, asked int) {
	p.Lessons = maps.Clone(p.Lessons)
	if p.Lessons == nil {
		p.Lessons = map[string]LessonProgress{}
	}
	lp := p.Lessons[id]
	lp.Done, lp.Right, lp.Asked, lp.Best = true, right, asked, max(lp.Best, right)
	p.Lessons[id] = lp
	if p.Resume != nil && p.Resume.Lesson == id {
		p.Resume = nil
	}
}

// ProgressPath is where the progress file lives: under $XDG_STATE_HOME,
// or ~/.local/state where that is unset or not an absolute path, as the
// XDG base directory rules say.
func ProgressPath(getenv func(string) string, home string) (string, error) {
	dir := getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		if home == "" {
			return "", errors.New("no place for the course's progress: neither $XDG_STATE_HOME nor $HOME is set")
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "replaylab", "progress.json"), nil
}

// ReadProgress reads the progress file at path. A file that is not there
// is a course not yet begun. A file that cannot be read as progress is set
// aside beside it, never overwritten, and note says where it went; the
// course then starts afresh.
func ReadProgress(path string) (p Progress, note string, err error) {
	p, problem, err := loadProgress(path)
	if err != nil || problem == "" {
		return p, "", err
	}
	aside, err := setAside(path)
	if err != nil {
		return Progress{}, "", fmt.Errorf("progress %s cannot be read (%s) and cannot be set aside: %w", path, problem, atomicfile.Cause(err))
	}
	return emptyProgress(), fmt.Sprintf("the progress file %s could not be read (%s); it was kept as %s and the course starts afresh", path, problem, aside), nil
}

// PeekProgress reads the progress file at path as ReadProgress does, but
// only reads: a file that cannot be read is left where it is, and note
// says so. For a look at the progress (learn --status) that should not
// move anything.
func PeekProgress(path string) (p Progress, note string) {
	p, problem, err := loadProgress(path)
	switch {
	case err != nil:
		return emptyProgress(), err.Error()
	case problem != "":
		return p, fmt.Sprintf("the progress file %s could not be read (%s); it is left as it is until replaylab learn sets it aside", path, problem)
	}
	return p, ""
}

func emptyProgress() Progress {
	return Progress{Schema: ProgressSchema, Lessons: map[string]LessonProgress{}}
}

// loadProgress reads the progress file at path: no file is no progress;
// problem says why a file that is there is not progress (and p is then
// empty); err is a path that cannot be read at all.
func loadProgress(path string) (p Progress, problem string, err error) {
	p = emptyProgress()
	if err := progressIsAFile(path); err != nil {
		return p, "", err
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, "", nil
	}
	if err != nil {
		return p, "", fmt.Errorf("progress %s: %w", path, atomicfile.Cause(err))
	}
	defer f.Close()
	data, tooBig, err := infile.ReadAtMost(f, 1<<20)
	switch {
	case err != nil:
		return p, "", fmt.Errorf("progress %s: %w", path, atomicfile.Cause(err))
	case tooBig:
		return p, "it is over 1 MiB", nil
	}
	if problem := progressProblem(data, &p); problem != "" {
		return emptyProgress(), problem, nil
	}
	return p, "", nil
}

// progressIsAFile refuses a progress path that is there but is no
// regular file (a directory, a FIFO): nothing could read it or set it
// aside.
func progressIsAFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil
	}
	kind := "a directory"
	if !fi.IsDir() {
		kind = atomicfile.FileKind(fi.Mode())
	}
	return fmt.Errorf("the progress file %s is %s, not a file; remove it, or set XDG_STATE_HOME to another directory", path, kind)
}

// progressProblem decodes data into p, strictly, and says what is wrong
// with it, or "".
func progressProblem(data []byte, p *Progress) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var got Progress
	if err := dec.Decode(&got); err != nil {
		return "not progress JSON: " + err.Error()
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "unexpected data after the progress object"
	}
	if got.Schema != ProgressSchema {
		return fmt.Sprintf("its schema is %q, not %q", got.Schema, ProgressSchema)
	}
	for id, lp := range got.Lessons {
		if lp.Right < 0 || lp.Asked < 0 || lp.Right > lp.Asked || lp.Best < lp.Right || lp.Best > lp.Asked {
			return fmt.Sprintf("lesson %q has a score that cannot be (%d right of %d, best %d)", id, lp.Right, lp.Asked, lp.Best)
		}
	}
	if r := got.Resume; r != nil && (r.Lesson == "" || r.Run < 0 || r.Question < 0 || r.Right < 0 || r.Asked < 0 || r.Right > r.Asked) {
		return fmt.Sprintf("its place to resume cannot be (lesson %q, run %d, question %d, %d right of %d)", r.Lesson, r.Run, r.Question, r.Right, r.Asked)
	}
	if got.Lessons == nil {
		got.Lessons = map[string]LessonProgress{}
	}
	*p = got
	return ""
}

// setAside moves path to the first free name of path.corrupt,
// path.corrupt-2, …, taken the way every export takes a name (never
// replacing one), and returns it.
func setAside(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for i := 1; i < 1000; i++ {
		name := path + ".corrupt"
		if i > 1 {
			name = fmt.Sprintf("%s.corrupt-%d", path, i)
		}
		err := atomicfile.WriteFile(name, data, false)
		if errors.Is(err, atomicfile.ErrExists) {
			continue
		}
		if err != nil {
			return "", err
		}
		return name, os.Remove(path)
	}
	return "", errors.New("too many progress files set aside already")
}

// AnyLessonDone says whether the progress file at path records a finished
// lesson. It only reads: a file that cannot be read counts as none, and is
// left for the course to set aside.
func AnyLessonDone(path string) bool {
	p, _ := PeekProgress(path)
	for _, lp := range p.Lessons {
		if lp.Done {
			return true
		}
	}
	return false
}

// WriteProgress writes the progress file atomically, making its directory
// (private to the user) where it is missing.
func WriteProgress(path string, p Progress) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("progress: %w", atomicfile.Cause(err))
	}
	p.Schema = ProgressSchema
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(data, '\n'), true)
}

// Status lists the course's lessons with their progress, in order.
func Status(c *Course, p Progress) []export.LessonStatus {
	out := make([]export.LessonStatus, len(c.Lessons))
	for i, l := range c.Lessons {
		lp := p.Lessons[l.ID]
		out[i] = export.LessonStatus{Number: i + 1, ID: l.ID, Title: l.Title, Done: lp.Done, Right: lp.Right, Asked: lp.Asked, Best: lp.Best,
			InProgress: p.Resume != nil && p.Resume.Lesson == l.ID}
		if out[i].InProgress {
			out[i].SoFar = &export.Score{Right: p.Resume.Right, Asked: p.Resume.Asked}
		}
	}
	return out
}

// StatusText renders the course status for a person.
func StatusText(st []export.LessonStatus) string {
	var b strings.Builder
	done := 0
	idW := 0
	for _, s := range st {
		idW = max(idW, len(s.Title))
		if s.Done {
			done++
		}
	}
	fmt.Fprintf(&b, "%d of %s done\n\n", done, termtext.Plural(len(st), "lesson"))
	for _, s := range st {
		mark, score := "·", "not done"
		if s.Done {
			mark = "✓"
			score = fmt.Sprintf("%d of %d right", s.Right, s.Asked)
			if s.Best > s.Right {
				score += fmt.Sprintf(" (best %d)", s.Best)
			}
		}
		if s.InProgress {
			mark, score = "▹", "in progress"
			if s.SoFar != nil && s.SoFar.Asked > 0 {
				score += fmt.Sprintf(", %d of %d right so far", s.SoFar.Right, s.SoFar.Asked)
			}
		}
		fmt.Fprintf(&b, "%s %2d  %-*s  %s\n", mark, s.Number, idW, s.Title, score)
	}
	if at := slices.IndexFunc(st, func(s export.LessonStatus) bool { return s.InProgress }); at >= 0 {
		fmt.Fprintf(&b, "\nnext: lesson %d, %s, where you left it (replaylab learn)\n", st[at].Number, st[at].Title)
		return b.String()
	}
	next := slices.IndexFunc(st, func(s export.LessonStatus) bool { return !s.Done })
	if next >= 0 {
		fmt.Fprintf(&b, "\nnext: lesson %d, %s (replaylab learn)\n", st[next].Number, st[next].Title)
	}
	return b.String()
}
