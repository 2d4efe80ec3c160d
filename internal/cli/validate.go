package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/reproduce"
)

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check mission files (or case .json files) and say what is wrong, and where",
		Long: "Check each mission file: that it parses, and that every outcome it expects\n" +
			"is what a run gives. Problems are printed as file:line: what is wrong\n" +
			"(accepted: ...). A .json file is read as an exported case. The exit code\n" +
			"is 2 if any file has a problem.",
		Example: "  replaylab validate my-missions/*.yaml\n" +
			"  replaylab validate replaylab-cases/timeout-then-success.stable-keys-on.naive.v1.json",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			bad := 0
			// The files claim their ids in the catalog --missions would
			// build, by the catalog's own rule.
			ids := missions.BuiltIn()
			for _, path := range args {
				msg, problems := reproduce.CheckFile(path, ids, runMission, pipeWait)
				if len(problems) == 0 {
					fmt.Fprintf(w, "%s: ok (%s)\n", termtext.CleanLine(path), msg)
					continue
				}
				bad++
				for _, p := range problems {
					fmt.Fprintln(w, termtext.Clean(p))
				}
			}
			if bad > 0 {
				return badInput(errors.New(validateSummary(args, bad)))
			}
			return nil
		},
	}
}

// runMission runs a mission for validate; tests count the runs.
var runMission = missions.Run

// validateSummary says how many of the paths given have problems: the
// one given, all of them, or how many of them. A directory given is a
// path, not a file.
func validateSummary(args []string, bad int) string {
	noun := "file"
	for _, path := range args {
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			noun = "path"
		}
	}
	switch {
	case len(args) == 1:
		return "the " + noun + " has problems"
	case bad == 2 && len(args) == 2:
		return "both " + noun + "s have problems"
	case bad == len(args):
		return fmt.Sprintf("all %d %ss have problems", bad, noun)
	}
	return fmt.Sprintf("%d of %d %ss %s problems", bad, len(args), noun, map[bool]string{true: "has", false: "have"}[bad == 1])
}
