package main

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/export"
)

func newMissionsCmd() *cobra.Command {
	return &cobra.Command{
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
			idWidth := 0
			for _, m := range cat.Missions {
				idWidth = max(idWidth, ansi.StringWidth(m.ID))
			}
			indent := strings.Repeat(" ", idWidth+2)
			for _, m := range cat.Missions {
				id := export.CleanLine(m.ID)
				fmt.Fprintf(w, "%s%s  %s\n", id, strings.Repeat(" ", idWidth-ansi.StringWidth(id)), export.CleanLine(m.Title))
				for _, line := range wrap(goalLine(m.Goal), max(96-len(indent), 40)) {
					fmt.Fprintf(w, "%s%s\n", indent, line)
				}
			}
			return nil
		},
	}
}

// goalLine is the first sentence of a mission's goal, cleaned, on one line:
// the goal is wrapped prose, so its first sentence says more than its
// first line.
func goalLine(goal string) string {
	g := strings.Join(strings.Fields(export.CleanLine(goal)), " ")
	if i := strings.Index(g, ". "); i >= 0 {
		g = g[:i+1]
	}
	return g
}
