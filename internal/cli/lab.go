package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/course"
	"github.com/replaylab/replaylab/lab"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/reproduce"
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
		Use:   "lab [MISSION | SESSION.json]",
		Short: "Open the interactive lab, on the mission picker, straight on MISSION, or on a recorded session",
		Long: `Open the interactive lab. Step a mission's schedule against the provider's
ledger, watch the effect counter, toggle stable keys (k), the caller policy (p),
the provider contract (c) and the key source (s: one key per intent, or a hash
of the payload, which makes stable keys moot), replace the current step's outcome
with the next fixture (f) or every attempt's with one (F: failure_before_commit
first, as the source exercise asks), hide or show the checkpoint rows
(h), pin cases (m) and compare them side by side (v), export the current case
as JSON (e), and, once the guarded caller has escalated, read the evidence a
person is handed (g). Press ? in the lab for every key.

Given a session that serve --record or conform --record wrote, the lab
steps through your own client's run: each request it sent, the fault it
met, the ledger after it and the verdicts. The toggles that would change
the caller (k, p, c, s, f) are off for it, since a recorded client's
choices are its own; pin it (m) and set a mission's case beside it (v, a).

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
	opts := lab.Options{Catalog: cat, Mission: mission, Overrides: o, Dir: f.dir, FirstTime: first}
	if isFileArg(mission) {
		// A recorded client's choices are its own: a setting asked for
		// would be silently left unused.
		for _, name := range append(slices.Clone(missions.SettingFlags), missions.FlagSeed) {
			if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
				return badInput(fmt.Errorf("--%s: a recorded session is your client's own run, under its own keys and policy; open a mission to try settings (replaylab lab MISSION --%s …)", name, name))
			}
		}
		run, err := reproduce.OpenSession(mission, pipeWait)
		if err != nil {
			return badInput(err)
		}
		opts.Mission, opts.Recorded, opts.RecordedName = "", run, mission
	}
	m, err := lab.New(opts)
	if err != nil {
		return badInput(err)
	}
	if !onTerminal(cmd) {
		return badInput(errors.New("the lab needs a terminal on standard input and output; " +
			"for a run without one use `replaylab run MISSION` (add --json for the case)"))
	}
	return lab.Run(m, cmd.ErrOrStderr())
}

// isFileArg reports whether the lab's argument names a file rather than a
// mission: a mission id has no dot and no slash.
func isFileArg(arg string) bool {
	return arg != "" && strings.ContainsAny(arg, `./\`)
}
