package lab

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// exportedMsg reports how an export went: the files written, in order,
// and the error that stopped it, if any.
type exportedMsg struct {
	paths []string
	err   error
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
	return func() tea.Msg {
		var msg exportedMsg
		for _, c := range cases {
			data, err := export.Marshal(c)
			if err != nil {
				msg.err = fmt.Errorf("encoding the case of %s: %w", c.Mission.ID, err)
				return msg
			}
			path, err := export.WriteNew(dir, caseFileName(c), data)
			if err != nil {
				msg.err = err
				return msg
			}
			msg.paths = append(msg.paths, path)
		}
		return msg
	}
}
