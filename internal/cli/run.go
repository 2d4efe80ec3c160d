package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
)

func newRunCmd() *cobra.Command {
	var (
		sf         settingFlags
		seed       uint64
		asJSON     bool
		formatFlag string
		out        string
		force      bool
		widthFlag  int
		failOn     []string
	)
	cmd := &cobra.Command{
		Use:   "run MISSION",
		Short: "Run a mission headless and print a summary, a write-up or the case JSON",
		Long: "Run a mission without the lab and print what happened: what the agent said\n" +
			"beside what the ledger held after each event, the effect count and the\n" +
			"verdicts. --format markdown prints a write-up to paste into a document\n" +
			"(settings, timeline, transcript beside the ledger, verdicts and the command\n" +
			"that reproduces it); --format json (or --json) prints the whole case in the\n" +
			"export format.\n\n" +
			"In scripts and CI, --fail-on names the verdicts that should fail the run:\n" +
			"the exit code is 1 when an intent ends with one of them, 0 otherwise, and 2\n" +
			"for bad usage or input.",
		Example: "  replaylab run timeout-then-success --stable-keys=off\n" +
			"  replaylab run timeout-then-success --json --out case.json\n" +
			"  replaylab run timeout-then-success --stable-keys=off --format markdown --out case.md\n" +
			"  replaylab run timeout-then-success --fail-on duplicate,hidden_effect,phantom",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := missionArg(cmd, args[0])
			if err != nil {
				return err
			}
			s, err := settingsFor(cmd, m, &sf, seed)
			if err != nil {
				return err
			}
			format, err := render.ParseFormat(formatFlag)
			if err != nil {
				return badInput(fmt.Errorf("--format: %w", err))
			}
			fail, err := parseFailOn(failOn, cmd.Flags().Changed("fail-on"))
			if err != nil {
				return err
			}
			if asJSON {
				if cmd.Flags().Changed("format") && format != render.JSON {
					return badInput(fmt.Errorf("--json and --format %s do not go together: --json is --format json", format))
				}
				format = render.JSON
			}
			if out == "" && cmd.Flags().Changed("out") {
				return badInput(fmt.Errorf("--out is empty; give a file path, or leave --out out to print to standard output"))
			}
			if out != "" {
				// Refuse before running, so nothing is half done.
				if err := checkWritable(out, force, false); err != nil {
					return err
				}
			}
			c, err := missions.Run(m, s)
			if err != nil {
				return badInput(err)
			}
			width := widthFlag
			if width == 0 {
				width = render.DefaultTextWidth
				if out == "" {
					width = textWidth(cmd.OutOrStdout(), 0)
				}
			}
			b, err := render.Case(c, format, width)
			if err != nil {
				return err
			}
			if out == "" {
				if _, err := cmd.OutOrStdout().Write(b); err != nil {
					return err
				}
			} else {
				if err := writeFileAtomic(out, b, force); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", termtext.CleanLine(out))
			}
			return failedVerdicts(c.Outcome.Verdicts, fail)
		},
	}
	sf.register(cmd)
	registerSeed(cmd, &seed)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the case as JSON (the export format); the same as --format json")
	cmd.Flags().StringVar(&formatFlag, "format", string(render.Text), "output: text (a summary), markdown (a write-up) or json (the case)")
	cmd.Flags().StringVar(&out, "out", "", "write the output to `FILE` instead of standard output")
	cmd.Flags().BoolVar(&force, "force", false, "with --out, overwrite FILE if it exists")
	registerWidth(cmd, &widthFlag)
	cmd.Flags().StringSliceVar(&failOn, "fail-on", nil, "exit 1 when an intent ends with one of these `VERDICTS` (comma-separated: "+verdictWords()+"); the output is printed or written all the same")
	registerMissionsDir(cmd)
	return cmd
}
