package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

func newRunCmd() *cobra.Command {
	var sf settingFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "run MISSION",
		Short: "Run a mission headless and print a summary or the case JSON",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, err := loadCatalog(cmd)
			if err != nil {
				return err
			}
			m, err := cat.Get(args[0])
			if err != nil {
				return badInput(err)
			}
			o, err := sf.overrides(cmd)
			if err != nil {
				return err
			}
			c, err := missions.Run(m, m.Settings(o))
			if err != nil {
				return badInput(err)
			}
			b, err := export.Marshal(c)
			if err != nil {
				return err
			}
			if asJSON {
				_, err = cmd.OutOrStdout().Write(b)
				return err
			}
			for _, ev := range c.Events {
				fmt.Fprintf(cmd.OutOrStdout(), "t%-3d %-8s %-22s %-10s %-9s eff=%d  %s | %s\n", ev.Tick, ev.Kind, ev.Fixture, ev.Provider, ev.Observed, ev.Effects, ev.Note, ev.Say)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "effects %d intended %d verdicts %+v\n", c.Outcome.Effects, c.Outcome.Intended, c.Outcome.Verdicts)
			return nil
		},
	}
	sf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the case as JSON")
	return cmd
}
