package cli

import (
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
)

// registerSeed adds --seed, the seed of the run's key generator, and the
// caller's budget: --max-attempts and --deadline.
func registerSeed(cmd *cobra.Command, seed *uint64) {
	*seed = missions.DefaultSeed
	cmd.Flags().Var(seedFlag{seed}, "seed", "seed for the key generator: any whole number from 0 up; the same seed gives the same case")
	var maxAttempts, deadline int
	cmd.Flags().Var(newWholeFlag(&maxAttempts, 0, 0, missions.MaxSteps,
		fmt.Sprintf("a whole number from 0 (as many as the schedule offers) to %d", missions.MaxSteps)),
		"max-attempts", "the caller's budget of sends per intent (default 0: as many as the schedule offers)")
	cmd.Flags().Var(newWholeFlag(&deadline, 0, 0, math.MaxInt, "0 (no deadline) or a tick from 1 up"),
		"deadline", "the tick after which the caller sends nothing (default 0: no deadline)")
}

// settingsFor is the mission's default settings with the user's flags and
// seed applied.
func settingsFor(cmd *cobra.Command, m *missions.Mission, sf *settingFlags, seed uint64) (missions.Settings, error) {
	o, err := sf.overrides(cmd)
	if err != nil {
		return missions.Settings{}, err
	}
	return withRunFlags(cmd, m.Settings(o), seed)
}

// withRunFlags is s with the seed and the caller's budget (--max-attempts,
// --deadline) from the flags, checked.
func withRunFlags(cmd *cobra.Command, s missions.Settings, seed uint64) (missions.Settings, error) {
	s.Seed = seed
	s.MaxAttempts, _ = cmd.Flags().GetInt("max-attempts")
	s.Deadline, _ = cmd.Flags().GetInt("deadline")
	if err := s.Validate(); err != nil {
		return missions.Settings{}, badInput(err)
	}
	return s, nil
}

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

// verdictWords lists the verdicts, comma-separated.
func verdictWords() string { return termtext.JoinWords(missions.Verdicts) }

// parseFailOn reads --fail-on: verdict words, each checked; given, it may
// not be empty.
func parseFailOn(words []string, given bool) (map[missions.Verdict]bool, error) {
	fail := map[missions.Verdict]bool{}
	if !given {
		return fail, nil
	}
	vs, err := parseWords("fail-on", words, missions.ParseVerdict, true, "give one or more verdicts, comma-separated (accepted: "+verdictWords()+")")
	for _, v := range vs {
		fail[v] = true
	}
	return fail, err
}

// failedVerdicts is the exit-1 error for the intents whose verdict the
// caller asked to fail on, or nil: run's and serve's --fail-on.
func failedVerdicts(verdicts []missions.IntentVerdict, fail map[missions.Verdict]bool) error {
	var hit []string
	for _, v := range verdicts {
		if fail[v.Verdict] {
			hit = append(hit, fmt.Sprintf("%s ended %s", termtext.Escaped(v.Intent), v.Verdict))
		}
	}
	if len(hit) == 0 {
		return nil
	}
	return &exitError{code: exitVerdict, err: fmt.Errorf("%s, a verdict --fail-on names", strings.Join(hit, "; "))}
}
