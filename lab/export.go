package lab

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/replaylab/replaylab/course"
	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/missions"
)

// exportedMsg reports how an export went: the files written, in order,
// and the error that stopped it, if any.
type exportedMsg struct {
	paths []string
	// renamed counts the files that got a numeric suffix because their
	// name was taken.
	renamed int
	// same counts the files of paths that were already there with the
	// very bytes, and were not written again.
	same int
	err  error
	// pins: the files are the pinned cases, from compare, as they stood
	// at pin generation gen (see runScreen.pinGen).
	pins bool
	gen  int
	// recorded counts the pins left out because they are recorded
	// clients' runs, session files already.
	recorded int
}

// caseFileName names a case's file after its mission and settings, the
// same way the command line's export does.
func caseFileName(c *missions.Case) string { return export.CaseFileName(c) }

// exportCases returns the command that writes each case into dir. Each
// file is written whole to a temporary name and then linked into place,
// which fails rather than replaces when the name is taken; a taken name
// gets a numeric suffix instead. The lab's Update never touches the disk
// itself.
//
// A case is deterministic: one exported again is already there, byte for
// byte, under its name or a numbered one, and that file stands for it
// rather than another numbered copy.
func exportCases(dir string, cases ...*missions.Case) tea.Cmd {
	// The command runs later, on its own goroutine: it gets its own list,
	// which a pin made meanwhile cannot shift under it.
	cases = slices.Clone(cases)
	return func() tea.Msg {
		var msg exportedMsg
		var files []atomicfile.File
		// paths are the cases' files in the cases' order; at holds, for
		// each file to write, which case it is.
		paths := make([]string, len(cases))
		var at []int
		for i, c := range cases {
			data, err := export.Marshal(c)
			if err != nil {
				msg.err = fmt.Errorf("encoding the case of %s: %w", c.Mission.ID, err)
				return msg
			}
			f := atomicfile.File{Path: caseFileName(c), Data: data}
			if path, ok := sameThere(dir, f); ok {
				paths[i] = path
				msg.same++
				continue
			}
			files, at = append(files, f), append(at, i)
		}
		// All or nothing: a full disk leaves none of the cases.
		written, err := atomicfile.WriteAllNew(dir, files)
		if err != nil {
			msg.err, msg.same = err, 0
			return msg
		}
		for j, p := range written {
			paths[at[j]] = p
			if filepath.Base(p) != files[j].Path {
				msg.renamed++
			}
		}
		msg.paths = paths
		return msg
	}
}

// progressSavedMsg reports how saving the course's progress went.
type progressSavedMsg struct{ err error }

// saveProgress returns the command that writes the course's progress.
func saveProgress(path string, p course.Progress) tea.Cmd {
	return func() tea.Msg { return progressSavedMsg{err: course.WriteProgress(path, p)} }
}

// sameThere finds f's bytes in dir under f's name or one of the numbered
// names a taken name gets (name-2.json, …), as far as they go on.
func sameThere(dir string, f atomicfile.File) (string, bool) {
	ext := filepath.Ext(f.Path)
	base := strings.TrimSuffix(f.Path, ext)
	for n := 1; ; n++ {
		path := filepath.Join(dir, f.Path)
		if n > 1 {
			path = filepath.Join(dir, fmt.Sprintf("%s-%d%s", base, n, ext))
		}
		old, err := os.ReadFile(path)
		if err != nil {
			return "", false
		}
		if bytes.Equal(old, f.Data) {
			return path, true
		}
	}
}
