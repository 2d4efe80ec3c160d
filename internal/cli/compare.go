package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/compare"
	"github.com/replaylab/replaylab/internal/infile"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
	"github.com/replaylab/replaylab/reproduce"
)

func newCompareCmd() *cobra.Command {
	var format string
	var width int
	var all bool
	cmd := &cobra.Command{
		Use:   "compare CASE.json CASE.json [CASE.json...]",
		Short: "Show cases side by side, attempt by attempt",
		Long: `Show exported cases side by side, aligned by attempt number: for each case
the fixture, what the caller observed, what the agent said and the ledger's
effect count after the attempt, then how each case ended. A ◆ marks where
two cases first hold different ledgers behind the same words, and one
sentence per pair of cases says what it shows. Cases of
different missions are aligned by attempt number, with a note.

In text, the default is brief: what the cases show together, one entry per
case with how it ended and its file, and the three pairs that differ most.
--all prints every pair and the attempts side by side.

Formats: text (default; fits the terminal, or --width), markdown (a GFM
table to paste into a document, always whole) and json (for scripts).

All files are read and checked before anything is printed; a corrupt,
truncated or unknown-version case file, or one that does not reproduce (its
events, ledger or verdicts are not what its mission gives under its
settings), stops the command with exit code 2, naming the first difference.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := render.ParseFormat(format)
			if err != nil {
				return badInput(fmt.Errorf("--format: %w", err))
			}
			cases := make([]*missions.Case, len(args))
			var problems []error
			for i, path := range args {
				d, err := readDocument(path)
				if err != nil {
					problems = append(problems, infile.Error(path, err))
					continue
				}
				if p := reproduce.Problems(path, d); len(p) > 0 {
					problems = append(problems, errors.New(strings.Join(p, "\n")))
					continue
				}
				cases[i] = d.Case
				if d.Session != nil {
					cases[i] = d.Session.AsCase()
				}
			}
			if len(problems) > 0 {
				return badInput(errors.Join(problems...))
			}
			cmp := compare.Compare(cases)
			for i, path := range args {
				cmp.Cases[i].Source = path
			}
			w := textWidth(cmd.OutOrStdout(), width)
			var out []byte
			if f == render.Text && !all {
				out = compare.CompareBrief(cmp, w, "add --all")
			} else if out, err = compare.Render(cmp, f, w); err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&format, "format", string(render.Text), "output format: text, markdown or json")
	cmd.Flags().BoolVar(&all, "all", false, "text: every pair of cases, and the attempts side by side")
	registerWidth(cmd, &width)
	return cmd
}
