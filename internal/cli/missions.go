package cli

import (
	"fmt"

	"github.com/replaylab/replaylab/render"
	"github.com/spf13/cobra"
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
			// The listing fits the terminal (or --width), up to the
			// summary's 96 columns.
			w := cmd.OutOrStdout()
			_, err = fmt.Fprint(w, render.MissionList(cat, min(textWidth(w, width), 96)))
			return err
		},
	}
	registerWidth(cmd, &width)
	registerMissionsDir(cmd)
	return cmd
}
