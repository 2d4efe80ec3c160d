package main

import (
	"errors"
	"os"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/course"
	"github.com/replaylab/replaylab/lab"
)

// labFlags are what the lab command and the bare root command accept.
type labFlags struct {
	settings settingFlags
	dir      string
}

func (f *labFlags) register(cmd *cobra.Command) {
	f.settings.register(cmd)
	cmd.Flags().StringVar(&f.dir, "dir", lab.DefaultDir, "write exported cases (e in the lab) to `DIR`")
}

func newLabCmd() *cobra.Command {
	var f labFlags
	cmd := &cobra.Command{
		Use:   "lab [MISSION]",
		Short: "Open the interactive lab, on the mission picker or straight on MISSION",
		Long: `Open the interactive lab. Step a mission's schedule against the provider's
ledger, watch the effect counter, toggle stable keys (k), the caller policy (p),
the provider contract (c) and the key source (s: one key per intent, or a hash
of the payload, which makes stable keys moot), hide or show the checkpoint rows
(h), pin cases (m) and compare them side by side (v), export the current case
as JSON (e), and, once the guarded caller has escalated, read the evidence a
person is handed (g). Press ? in the lab for every key.

The lab needs a terminal; for a headless run use "replaylab run MISSION".`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mission := ""
			if len(args) == 1 {
				mission = args[0]
			}
			return runLab(cmd, &f, mission)
		},
	}
	f.register(cmd)
	registerMissionsDir(cmd)
	return cmd
}

// runLab checks the terminal, builds the lab and runs it until the user
// quits.
func runLab(cmd *cobra.Command, f *labFlags, mission string) error {
	cat, err := loadCatalog(cmd)
	if err != nil {
		return err
	}
	o, err := f.settings.overrides(cmd)
	if err != nil {
		return err
	}
	if err := checkDir("--dir", f.dir); err != nil {
		return err
	}
	// A learner who has finished no lesson of the course starts with the
	// timeline's checkpoint rows hidden: the attempts first.
	first := true
	if path, err := progressPath(); err == nil {
		first = !course.AnyLessonDone(path)
	}
	m, err := lab.New(lab.Options{Catalog: cat, Mission: mission, Overrides: o, Dir: f.dir, FirstTime: first})
	if err != nil {
		return badInput(err)
	}
	if !term.IsTerminal(os.Stdin.Fd()) || !term.IsTerminal(os.Stdout.Fd()) {
		return badInput(errors.New("the lab needs a terminal on standard input and output; " +
			"for a run without one use `replaylab run MISSION` (add --json for the case)"))
	}
	return lab.Run(m, cmd.ErrOrStderr())
}
