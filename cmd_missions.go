package main

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/internal/termtext"
)

func newMissionsCmd() *cobra.Command {
	var width int
	cmd := &cobra.Command{
		Use:   "missions",
		Short: "List the missions: the built-in catalog plus --missions DIR",
		Example: "  replaylab missions\n" +
			"  replaylab missions --missions ./my-missions",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, err := loadCatalog(cmd)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			// The listing fits the terminal (or --width), up to the
			// summary's 96 columns.
			lineW := min(textWidth(w, width), 96)
			idWidth := 0
			for _, m := range cat.Missions {
				idWidth = max(idWidth, ansi.StringWidth(termtext.CleanLine(m.ID)))
			}
			// A long id on a narrow line puts the title and goal under it.
			indentW := idWidth + 2
			if lineW-indentW < 30 {
				indentW = 4
			}
			indent := strings.Repeat(" ", indentW)
			for _, m := range cat.Missions {
				id := termtext.CleanLine(m.ID)
				var text []string
				if indentW == idWidth+2 {
					text = append(termtext.Wrap(termtext.CleanLine(m.Title), lineW-indentW), "")
					fmt.Fprintf(w, "%s%s  %s\n", id, strings.Repeat(" ", idWidth-ansi.StringWidth(id)), text[0])
					text = text[1 : len(text)-1]
				} else {
					fmt.Fprintln(w, id)
					text = termtext.Wrap(termtext.CleanLine(m.Title), lineW-indentW)
				}
				text = append(text, termtext.Wrap(goalLine(m.Goal), lineW-indentW)...)
				for _, line := range text {
					fmt.Fprintf(w, "%s%s\n", indent, line)
				}
			}
			return nil
		},
	}
	registerWidth(cmd, &width)
	registerMissionsDir(cmd)
	return cmd
}

// goalLine is the first sentence of a mission's goal, cleaned, on one line:
// the goal is wrapped prose, so its first sentence says more than its
// first line.
func goalLine(goal string) string {
	g := strings.Join(strings.Fields(termtext.CleanLine(goal)), " ")
	if i := strings.Index(g, ". "); i >= 0 {
		g = g[:i+1]
	}
	return g
}
