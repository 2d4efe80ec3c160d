package lab

import (
	"fmt"
	"path/filepath"
	"slices"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// exportedMsg reports how an export went: the files written, in order,
// and the error that stopped it, if any.
type exportedMsg struct {
	paths []string
	// renamed counts the files that got a numeric suffix because their
	// name was taken.
	renamed int
	err     error
	// pins: the files are the pinned cases, from compare.
	pins bool
}

// caseFileName names a case's file after its mission and settings, the
// same way the command line's export does.
func caseFileName(c *missions.Case) string { return export.FileName(c.Mission.ID, c.Settings) }

// exportCases returns the command that writes each case into dir. Each
// file is written whole to a temporary name and then linked into place,
// which fails rather than replaces when the name is taken; a taken name
// gets a numeric suffix instead. The lab's Update never touches the disk
// itself.
func exportCases(dir string, cases ...*missions.Case) tea.Cmd {
	// The command runs later, on its own goroutine: it gets its own list,
	// which a pin made meanwhile cannot shift under it.
	cases = slices.Clone(cases)
	return func() tea.Msg {
		var msg exportedMsg
		files := make([]export.File, len(cases))
		for i, c := range cases {
			data, err := export.Marshal(c)
			if err != nil {
				msg.err = fmt.Errorf("encoding the case of %s: %w", c.Mission.ID, err)
				return msg
			}
			files[i] = export.File{Path: caseFileName(c), Data: data}
		}
		// All or nothing: a full disk leaves none of the cases.
		paths, err := export.WriteAllNew(dir, files)
		if err != nil {
			msg.err = err
			return msg
		}
		msg.paths = paths
		for i, p := range paths {
			if filepath.Base(p) != files[i].Path {
				msg.renamed++
			}
		}
		return msg
	}
}

// progressSavedMsg reports how saving the course's progress went.
type progressSavedMsg struct{ err error }

// saveProgress returns the command that writes the course's progress.
func saveProgress(path string, p export.Progress) tea.Cmd {
	return func() tea.Msg { return progressSavedMsg{err: export.WriteProgress(path, p)} }
}
