package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/internal/infile"
	"github.com/replaylab/replaylab/reproduce"
)

func newReplayCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "replay CASE.json...",
		Short: "Re-run a case's recorded inputs and confirm the same result",
		Long: "Read a case file, run its mission again under its settings and compare the\n" +
			"result with the file. Prints \"identical\", or the first difference in words.\n" +
			"A serve session (serve --record) is replayed by re-submitting its requests,\n" +
			"each at its tick with the fault it met, to a fresh ledger.\n" +
			"Exit code 1 when a case differs, 2 when a file cannot be read as a case.",
		Example: "  replaylab replay replaylab-cases/timeout-then-success.stable-keys-off.naive.v1.json",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Every file is read and replayed before anything is printed,
			// so a file that is not a readable case stops the command
			// with nothing half-reported.
			reports := make([]string, len(args))
			var problems []error
			differ := 0
			for i, path := range args {
				d, err := readDocument(path)
				if err != nil {
					problems = append(problems, infile.Error(path, err))
					continue
				}
				report, same, err := reproduce.Report(path, d)
				if err != nil {
					problems = append(problems, err)
					continue
				}
				if !same {
					differ++
				}
				reports[i] = report
			}
			if len(problems) > 0 {
				return badInput(errors.Join(problems...))
			}
			w := cmd.OutOrStdout()
			for _, r := range reports {
				fmt.Fprint(w, r)
			}
			if differ > 0 {
				return &exitError{code: exitVerdict, err: fmt.Errorf("%d of %d cases differ from their replay", differ, len(args))}
			}
			return nil
		},
	}
}
