package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
	"github.com/replaylab/replaylab/render"
)

func newExploreCmd() *cobra.Command {
	var (
		depth        int
		maxSchedules int
		faults       []string
		stable       []string
		policies     []string
		contracts    []string
		provs        []string
		asJSON       bool
		out          string
		force        bool
	)
	cmd := &cobra.Command{
		Use:   "explore MISSION",
		Short: "Find the shortest fault schedule that breaks a caller",
		Long: "Run every schedule of faults for the mission's intents, breadth first, up to\n" +
			"--depth attempts per intent, under each setting asked for, and report for\n" +
			"each bad verdict (duplicate, hidden_effect, phantom) the shortest schedule\n" +
			"that reaches it, or none up to the depth. Each attempt meets one fixture of\n" +
			"the alphabet (--faults; by default the mission's own fixtures and the core\n" +
			"four), then the clock moves a tick; at the end the clock settles and the\n" +
			"caller reconciles, as at the end of a mission. States two schedules reach\n" +
			"alike are run once. Reads are answered as the ledger stands: a mission's\n" +
			"reads (faults on reads) are left out; conform --explore draws those.\n\n" +
			"--out DIR writes each shortest schedule as a mission file, with its\n" +
			"expected outcome, that validate, run and lab accept.",
		Example: "  replaylab explore timeout-then-success\n" +
			"  replaylab explore timeout-then-success --stable-keys off --policy naive --depth 4\n" +
			"  replaylab explore two-intended-refunds --faults success,timeout_after_commit --out found\n" +
			"  replaylab explore saved-server-error --json",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := missionArg(cmd, args[0])
			if err != nil {
				return err
			}
			o := missions.ExploreOptions{Depth: depth, MaxSchedules: int64(maxSchedules)}
			if o.Alphabet, err = parseFaults(m, faults, cmd.Flags().Changed("faults")); err != nil {
				return err
			}
			if o.Settings, err = exploreSettings(cmd, m, stable, policies, contracts, provs); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return badInput(err)
			}
			if strings.TrimSpace(out) == "" && cmd.Flags().Changed("out") {
				return badInput(fmt.Errorf("--out is empty; give a directory for the mission files, or leave --out out"))
			}
			if out != "" {
				if err := checkDir("--out", out); err != nil {
					return err
				}
				// Refuse before exploring, so a long run does not end in
				// a directory it cannot write.
				if err := probeDir("--out", out); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			o.Progress = progressLine(ctx, cmd)
			x, err := missions.Explore(m, o)
			if err != nil {
				return badInput(err)
			}
			var jobs []counterJob
			if out != "" {
				// Every file is checked before the report is printed and
				// before the first file is written.
				if jobs, err = counterJobs(x, out, force); err != nil {
					return err
				}
			}
			if err := writeExploration(cmd, x, asJSON); err != nil {
				return err
			}
			if out != "" {
				// With --json, standard output is the report alone.
				w := cmd.OutOrStdout()
				if asJSON {
					w = cmd.ErrOrStderr()
				}
				if err := writeCounterexamples(w, jobs, out, force); err != nil {
					return err
				}
			}
			if x.Interrupted {
				return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted: the report above holds what was found so far")}
			}
			return nil
		},
	}
	cmd.Flags().Var(newWholeFlag(&depth, missions.DefaultExploreDepth, 1, missions.MaxExploreDepth,
		fmt.Sprintf("a whole number from 1 to %d", missions.MaxExploreDepth)),
		"depth", fmt.Sprintf("the most attempts per intent, from 1 to %d", missions.MaxExploreDepth))
	cmd.Flags().Var(newWholeFlag(&maxSchedules, missions.DefaultMaxSchedules, 1, missions.MaxSchedulesBound,
		fmt.Sprintf("a whole number from 1 to %d", missions.MaxSchedulesBound)),
		"max-schedules", "stop once this many schedules are covered")
	cmd.Flags().StringSliceVar(&faults, "faults", nil, "the fixtures an attempt may meet, comma-separated (default: the mission's own fixtures and the core four)")
	cmd.Flags().StringSliceVar(&stable, missions.FlagStableKeys, nil, "stable keys to explore: on, off or on,off (default both)")
	cmd.Flags().StringSliceVar(&policies, missions.FlagPolicy, nil, "caller policies to explore: naive, guarded (default both)")
	cmd.Flags().StringSliceVar(&contracts, missions.FlagContract, nil, "provider contracts to explore by their old names: v1, v2, none (default all three)")
	cmd.Flags().StringSliceVar(&provs, missions.FlagProvider, nil, "built-in providers to explore, comma-separated (replaylab providers lists them; default stripe-v1, stripe-v2, none)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON for scripts")
	cmd.Flags().StringVar(&out, "out", "", "write each shortest counterexample as a mission file into `DIR` (created if missing)")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite mission files that exist in --out")
	registerMissionsDir(cmd)
	return cmd
}

// parseFaults reads --faults: fixture names, each with the parameters the
// mission's own steps give it.
func parseFaults(m *missions.Mission, names []string, changed bool) ([]missions.Step, error) {
	if !changed {
		return missions.DefaultAlphabet(m), nil
	}
	fs, err := parseWords("faults", names, missions.ParseFixture, true, "name at least one fixture (accepted: "+termtext.JoinWords(missions.Fixtures)+")")
	if err != nil {
		return nil, err
	}
	out := make([]missions.Step, len(fs))
	for i, f := range fs {
		out[i] = missions.AlphabetStep(m, f)
	}
	return out, nil
}

func exploreSettings(cmd *cobra.Command, m *missions.Mission, stable, policies, contracts, provs []string) ([]missions.Settings, error) {
	keys, err := parseList(cmd, missions.FlagStableKeys, stable, []bool{true, false}, missions.ParseOnOff)
	if err != nil {
		return nil, err
	}
	pols, err := parseList(cmd, missions.FlagPolicy, policies, missions.Policies, missions.ParsePolicy)
	if err != nil {
		return nil, err
	}
	if cmd.Flags().Changed(missions.FlagProvider) && cmd.Flags().Changed(missions.FlagContract) {
		return nil, badInput(errors.New("--provider and --contract both choose the providers; give one (--contract v1 is --provider stripe-v1)"))
	}
	cons, err := parseList(cmd, missions.FlagContract, contracts, missions.ShortContracts, missions.ContractName)
	if err != nil {
		return nil, err
	}
	if cmd.Flags().Changed(missions.FlagProvider) {
		if cons, err = parseList(cmd, missions.FlagProvider, provs, missions.ShortContracts, builtinProvider); err != nil {
			return nil, err
		}
	}
	return m.SettingsProduct(keys, pols, cons), nil
}

func parseList[T comparable](cmd *cobra.Command, flag string, raw []string, all []T, parse func(string) (T, error)) ([]T, error) {
	if !cmd.Flags().Changed(flag) {
		return all, nil
	}
	return parseWords(flag, raw, parse, true, "give the values comma-separated, or leave it out to explore every value")
}

func progressLine(ctx context.Context, cmd *cobra.Command) func(missions.Progress) bool {
	start := time.Now()
	f, isFile := cmd.ErrOrStderr().(*os.File)
	onTerminal := isFile && term.IsTerminal(f.Fd())
	return func(p missions.Progress) bool {
		if onTerminal && time.Since(start) > time.Second {
			fmt.Fprint(f, "\r\x1b[K"+render.ExploreProgress(p))
		}
		return ctx.Err() == nil
	}
}

func writeExploration(cmd *cobra.Command, x *missions.Exploration, asJSON bool) error {
	if f, ok := cmd.ErrOrStderr().(*os.File); ok && term.IsTerminal(f.Fd()) {
		fmt.Fprint(f, "\r\x1b[K")
	}
	w := cmd.OutOrStdout()
	if asJSON {
		data, err := export.ExploreJSON(x)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	_, err := fmt.Fprint(w, termtext.Clean(render.ExploreText(x)))
	return err
}

// counterJob is one counterexample mission file to write.
type counterJob struct {
	path string
	missions.CounterFile
}

// counterJobs are the counterexamples' mission files in dir, each checked
// writable before any is written.
func counterJobs(x *missions.Exploration, dir string, force bool) ([]counterJob, error) {
	files, err := x.CounterFiles()
	if err != nil {
		return nil, err
	}
	jobs := make([]counterJob, len(files))
	for i, f := range files {
		jobs[i] = counterJob{path: filepath.Join(dir, f.Name), CounterFile: f}
		if err := checkWritable(jobs[i].path, force, true); err != nil {
			return nil, err
		}
	}
	return jobs, nil
}

func writeCounterexamples(w io.Writer, jobs []counterJob, dir string, force bool) error {
	if len(jobs) == 0 {
		fmt.Fprintf(w, "\nno counterexample to write into %s\n", termtext.CleanLine(dir))
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return badInput(fmt.Errorf("--out %s: cannot create it: %w", dir, cause(err)))
	}
	files := make([]atomicfile.File, len(jobs))
	for i, j := range jobs {
		files[i] = atomicfile.File{Path: j.path, Data: j.Data}
	}
	if err := writeAll(files, force); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, j := range jobs {
		fmt.Fprintf(w, "wrote %s\n  open it: replaylab lab %s --missions %s %s\n", termtext.CleanLine(j.path),
			termtext.ShellWord(termtext.CleanLine(j.ID)), termtext.ShellWord(termtext.CleanLine(dir)), strings.Join(j.Flags, " "))
	}
	return nil
}

// builtinProvider reads one of explore's --provider values: a built-in,
// by name. The explorer writes the schedules it finds as mission files,
// which name their provider; a profile file has no name they could carry.
func builtinProvider(s string) (ledger.Contract, error) {
	if providers.IsFile(s) {
		return "", fmt.Errorf("%q is a profile file; explore takes built-in providers by name (replaylab providers lists them), since the schedules it writes name their provider. A profile file is played by run, export, lab, serve and conform", s)
	}
	return missions.ProviderName(s)
}
