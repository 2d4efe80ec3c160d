package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/conform"
	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
	"github.com/replaylab/replaylab/serve"
)

// conformFlags are conform's settings as given.
type conformFlags struct {
	scenarios        []string
	tick, timeout    time.Duration
	parallel         int
	junit, record    string
	mcpRevision      string
	provider         string
	asJSON, markdown bool
	list, force, mcp bool
	// conform --explore
	explore    int
	seed       uint64
	search     time.Duration
	out, shard string
	failOn     []string
	// merged: the report is conform merge's, of shards that ran before.
	merged bool
}

func newConformCmd() *cobra.Command {
	var f conformFlags
	cmd := &cobra.Command{
		Use:   "conform [flags] -- COMMAND [ARGS...]",
		Short: "Run the test matrix against your own client command and grade each row",
		Long: `Play the test matrix against a client you wrote, and grade it.

For each scenario (a catalog mission a live client can meet), conform
starts a fresh provider on a free loopback port (the same code as
replaylab serve --mission ID), runs COMMAND with the scenario in its
environment, acts where the row needs it (kills the client when its refund
commits and runs it again; runs two at once; runs it again with a changed
amount), settles the provider's clock, and judges the row from the
provider's records and the beliefs the client printed.

The contract, which a client in any language can follow, is in
docs/conform.md: the client reads REPLAYLAB_API_BASE, REPLAYLAB_API_KEY,
REPLAYLAB_INTENTS, REPLAYLAB_STATE_DIR, REPLAYLAB_REQUEST_TIMEOUT_MS and
REPLAYLAB_KEY_RETENTION_MS, and prints one JSON line per intent:
  {"intent":"refund-1042","belief":"done","refund":"re_1"}
with belief done, failed, pending or escalated.

With --mcp the client is an agent: the provider is served as MCP tools too
(create_refund, get_refund, list_refunds over Streamable HTTP) and
REPLAYLAB_MCP_URL tells the agent where; the rows and grades are the same.

Grades: pass (nothing unsafe, every belief agrees with the ledger and with
what the client was told), unsafe (a duplicate, a hidden refund, another
intent's refund, or a belief the ledger contradicts), unsettled (an
escalation or no answer where the row can be settled, "failed" when
nothing told the client so, a hang, a malformed belief line).

Exit codes: 0 every scenario passes, 1 one does not, 2 bad usage, 130
stopped by Ctrl-C, SIGTERM or a hang-up (after the partial report).`,
		Example: `  replaylab conform --list
  replaylab conform -- ./guarded-refund
  replaylab conform --junit conform.xml -- node client.js
  replaylab conform --mcp -- ./guarded-agent
  replaylab conform --scenario timeout-then-success,crash-after-send -- ./my-client --verbose
  replaylab conform --markdown --record sessions -- ./naive-refund > write-up.md`,
		RunE: func(cmd *cobra.Command, args []string) error { return runConform(cmd, &f, args) },
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.scenarios, "scenario", nil, "play only these scenarios, comma-separated `IDs` (default: every one; see --list)")
	fl.DurationVar(&f.tick, "tick", conform.DefaultTick, "how long one ledger tick lasts; the client's request timeout is 10 ticks")
	fl.DurationVar(&f.timeout, "timeout", 0, "the longest a run of the client may take from its first request; one still running then is killed with its process group (default: 200 ticks, 20s at the default tick)")
	fl.Var(newWholeFlag(&f.parallel, 0, 0, 1<<10, "a whole number from 0 (4 per core) to 1024"), "parallel", "run at most `N` scenarios at once (0: 4 per core)")
	fl.StringVar(&f.junit, "junit", "", "also write the scorecard as JUnit XML to `FILE`, a testcase per scenario")
	fl.BoolVar(&f.asJSON, "json", false, "print the report as JSON ("+conform.SchemaID+") instead of the scorecard")
	fl.BoolVar(&f.markdown, "markdown", false, "print a Markdown write-up instead of the scorecard: each row that did not pass with a sequence diagram of what the client did")
	fl.StringVar(&f.record, "record", "", "keep each scenario's session in `DIR` (created if missing) as SCENARIO.json, for replay, compare and check")
	fl.BoolVar(&f.force, "force", false, "overwrite the --junit file and session files in --record that exist")
	fl.StringVar(&f.provider, missions.FlagProvider, "", "play every row as this provider behaves: a built-in (replaylab providers lists them) or a profile `FILE`; a row that cannot happen under it is graded n/a (default: each row's own provider)")
	fl.StringVar(&f.mcpRevision, "mcp-revision", "", "with --mcp, serve one MCP revision only: 2025-11-25 (initialize and sessions) or 2026-07-28 (no sessions); the client is told it in REPLAYLAB_MCP_REVISION (default: both)")
	fl.BoolVar(&f.mcp, "mcp", false, "grade an agent: serve the provider as MCP tools too and give the client REPLAYLAB_MCP_URL (its /mcp endpoint)")
	fl.BoolVar(&f.list, "list", false, "list the scenarios, each with what it plays and what passes, and exit")
	fl.Var(newWholeFlag(&f.explore, 0, 1, conform.MaxSchedules, fmt.Sprintf("a whole number of schedules from 1 to %d", conform.MaxSchedules)), "explore", "instead of the matrix, run `N` generated schedules (faults that meet, faults on reads) and shrink each unsafe one to a mission")
	f.seed = 1
	fl.Var(seedFlag{&f.seed}, "seed", "with --explore: the `SEED` the schedules are drawn from (a whole number; the same seed draws the same schedules)")
	fl.DurationVar(&f.search, "for", 0, "with --explore: stop drawing and shrinking schedules after `DURATION` (with --explore left out: draw until then)")
	fl.StringVar(&f.out, "out", "", "with --explore: write each failure's shrunk schedule to `DIR` as ID.yaml (DIR must not exist, unless --force)")
	fl.StringVar(&f.shard, "shard", "", "play part `I/N` of the matrix or of the generated schedules, for N parallel CI jobs (merge their --json reports with replaylab conform merge)")
	fl.StringSliceVar(&f.failOn, "fail-on", nil, "with --explore: also fail on `unsettled` schedules (unsafe ones always fail)")
	cmd.AddCommand(newConformMergeCmd())
	registerMissionsDir(cmd)
	return cmd
}

func runConform(cmd *cobra.Command, f *conformFlags, args []string) error {
	dash := cmd.ArgsLenAtDash()
	if dash > 0 || (dash < 0 && len(args) > 0) {
		return badInput(fmt.Errorf("put the client command after --, so that its flags stay its own: replaylab conform -- %s", strings.Join(args, " ")))
	}
	if f.asJSON && f.markdown {
		return badInput(errors.New("--json and --markdown each replace the scorecard; give one"))
	}
	if cmd.Flags().Changed("scenario") && len(f.scenarios) == 0 {
		return badInput(errors.New("--scenario is empty; give scenario ids, comma-separated (see: replaylab conform --list), or leave --scenario out for every one"))
	}
	scenarios, err := conformScenarios(cmd, f.scenarios)
	if err != nil {
		return err
	}
	if f.list {
		for _, flag := range []string{"junit", "json", "markdown", "record", "parallel", "timeout", "tick", "force", "explore", "seed", "for", "out", "shard", "fail-on"} {
			if cmd.Flags().Changed(flag) {
				return badInput(fmt.Errorf("--list prints the scenarios and runs nothing, so --%s does nothing with it; leave one of them out", flag))
			}
		}
		if len(args) > 0 {
			return badInput(errors.New("--list prints the scenarios and runs nothing; leave the command out, or --list"))
		}
		return printed(fmt.Fprint(cmd.OutOrStdout(), conform.ListText(scenarios, textWidth(cmd.OutOrStdout(), 0))))
	}
	if len(args) == 0 {
		return badInput(errors.New("no client command; give it after --, e.g. replaylab conform -- ./my-client (or --list to see the scenarios)"))
	}
	// A value given is held to conform's own bounds, so that it is never
	// taken for the default that zero means to conform.Config.
	if err := conform.CheckTick(f.tick); err != nil {
		return badInput(fmt.Errorf("--%w", err))
	}
	if cmd.Flags().Changed("timeout") {
		if err := conform.CheckTimeout(f.timeout, f.tick); err != nil {
			return badInput(fmt.Errorf("--%w", err))
		}
	}
	if cmd.Flags().Changed("mcp-revision") {
		if err := serve.CheckMCPRevision(f.mcpRevision); err != nil {
			return badInput(fmt.Errorf("--%w", err))
		}
	}
	// conform.Run validates the Config, once, before the first row: that
	// --mcp-revision comes with --mcp among the rest.
	cfg := conform.Config{Command: args, Tick: f.tick, Timeout: f.timeout, Parallel: f.parallel, MCP: f.mcp, MCPRevision: f.mcpRevision}
	if cmd.Flags().Changed(missions.FlagProvider) {
		if cfg.Provider, err = profileArg(f.provider); err != nil {
			return err
		}
	}
	exploring := cmd.Flags().Changed("explore") || cmd.Flags().Changed("for")
	if exploring && cfg.Provider != nil && providers.IsFile(f.provider) {
		return badInput(fmt.Errorf("--provider %s: --explore writes each failure as a mission file, which names its provider; a profile file has no name it could carry. Explore under a built-in provider (replaylab providers lists them), or play the matrix under the file without --explore", f.provider))
	}
	ex, err := f.exploreConfig(cmd, exploring)
	if err != nil {
		return err
	}
	if !exploring {
		scenarios = ex.Shard.Take(scenarios)
	}
	for flag, v := range map[string]string{"--junit": f.junit, "--record": f.record} {
		if strings.TrimSpace(v) == "" && cmd.Flags().Changed(flag[2:]) {
			return badInput(fmt.Errorf("%s is empty; give a path, or leave %s out", flag, flag))
		}
	}
	// What a conform killed while it wrote its files left beside them.
	for _, dir := range []string{f.junit, f.record, f.out} {
		if dir == f.junit && dir != "" {
			dir = filepath.Dir(dir)
		}
		if dir != "" {
			atomicfile.Sweep(dir, atomicfile.TempPrefix)
		}
	}
	var search *conform.ExploreConfig
	if exploring {
		search = &ex
	}
	if err := checkConformFiles(f, args[0], conform.Recorded(scenarios, search)); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	var rep *conform.Report
	if exploring {
		rep, err = conform.Explore(ctx, cfg, ex)
	} else {
		rep, err = conform.Run(ctx, cfg, scenarios)
		if err == nil {
			rep.Shard = ex.Shard.String()
		}
	}
	if err != nil {
		return badInput(err)
	}
	stop()
	return finishConform(cmd, f, rep)
}

// exploreConfig reads the flags of a search, and refuses them without
// one (--shard plays part of the matrix too).
func (f *conformFlags) exploreConfig(cmd *cobra.Command, exploring bool) (conform.ExploreConfig, error) {
	var ex conform.ExploreConfig
	if !exploring {
		for _, flag := range []string{"seed", "out", "fail-on"} {
			if cmd.Flags().Changed(flag) {
				return ex, badInput(fmt.Errorf("--%s goes with --explore N (generated schedules); give --explore, or leave --%s out", flag, flag))
			}
		}
	} else if cmd.Flags().Changed("scenario") {
		return ex, badInput(errors.New("--scenario names matrix rows, and --explore runs generated schedules instead; give one"))
	}
	if cmd.Flags().Changed("shard") && strings.TrimSpace(f.shard) == "" {
		return ex, badInput(errors.New("--shard is empty; give I/N, e.g. 2/4, or leave --shard out"))
	}
	if f.shard != "" {
		sh, err := conform.ParseShard(f.shard)
		if err != nil {
			return ex, badInput(fmt.Errorf("--%w", err))
		}
		ex.Shard = sh
	}
	if !exploring {
		return ex, nil
	}
	seed := f.seed
	if cmd.Flags().Changed("for") && (f.search <= 0 || f.search > 24*time.Hour) {
		return ex, badInput(fmt.Errorf("--for %v: give a positive duration of at most 24h, e.g. 2m", f.search))
	}
	if cmd.Flags().Changed("missions") {
		return ex, badInput(errors.New("--missions adds mission files to the matrix's catalog, and --explore draws its own schedules; give one (conform --missions DIR --scenario ID plays a shrunk one)"))
	}
	if !cmd.Flags().Changed("explore") && f.search <= 0 {
		return ex, badInput(errors.New("--explore needs a number of schedules from 1, or --for DURATION"))
	}
	for _, v := range f.failOn {
		if strings.TrimSpace(v) != "unsettled" {
			return ex, badInput(fmt.Errorf("--fail-on %q: the one grade a search may also fail on is unsettled (unsafe always fails)", v))
		}
		ex.FailOnUnsettled = true
	}
	if cmd.Flags().Changed("fail-on") && len(f.failOn) == 0 {
		return ex, badInput(errors.New("--fail-on is empty; give unsettled, or leave --fail-on out"))
	}
	ex.Count, ex.For, ex.Seed, ex.Missions = f.explore, f.search, seed, f.out
	if ex.Count > 0 && ex.Shard.N > 1 && ex.Shard.I > ex.Count {
		return ex, badInput(fmt.Errorf("--shard %s of %d schedules holds none; give at least as many schedules as shards", ex.Shard, ex.Count))
	}
	switch {
	case cmd.Flags().Changed("out") && strings.TrimSpace(f.out) == "":
		return ex, badInput(errors.New("--out is empty; give a folder, or leave --out out"))
	case f.out == "":
	default:
		if info, err := os.Stat(f.out); err == nil {
			if !f.force {
				return ex, badInput(fmt.Errorf("--out %s exists; give a new folder for the shrunk missions, or --force to write into it", f.out))
			}
			if !info.IsDir() {
				return ex, badInput(fmt.Errorf("--out %s is a file; give a folder for the shrunk missions", f.out))
			}
		}
		if err := probeDir("--out", f.out); err != nil {
			return ex, err
		}
	}
	return ex, nil
}

// finishConform prints the report and writes what goes beside it, then
// says how the run ended in its exit code.
func finishConform(cmd *cobra.Command, f *conformFlags, rep *conform.Report) error {
	var err error
	out := cmd.OutOrStdout()
	var report []byte
	switch {
	case f.asJSON:
		if report, err = conform.MarshalReport(rep); err != nil {
			return err
		}
	case f.markdown:
		report = conform.Markdown(rep)
	default:
		report = []byte(conform.Text(rep, textWidth(out, 0)))
	}
	if err := printed(out.Write(report)); err != nil {
		return err
	}
	outs := conform.Outputs{JUnit: f.junit, RecordDir: f.record}
	if f.record != "" {
		if err := os.MkdirAll(f.record, 0o777); err != nil {
			return badInput(fmt.Errorf("--record %s: %w", f.record, cause(err)))
		}
	}
	files, err := outs.Files(rep)
	if err != nil {
		return err
	}
	if len(files) > 0 {
		if err := writeAll(files, f.force); err != nil {
			return err
		}
		if f.junit != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote the JUnit XML to %s\n", f.junit)
		}
		if f.record != "" {
			// Each recorded row writes its session and the session's
			// spans: counted apart, as what they are.
			sessions, spans := 0, 0
			for _, file := range files {
				if f.junit != "" && file.Path == f.junit {
					continue
				}
				switch export.RecordFormatOf(file.Path) {
				case export.RecordSession:
					sessions++
				case export.RecordTraces:
					spans++
				}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s and %s to %s (replay, compare or check each)\n", termtext.Plural(sessions, "session"), termtext.Plural(spans, "trace file"), f.record)
			// Each row that did not pass, as the command that steps
			// through the client's own requests in the lab.
			if hints := outs.LabHints(rep); len(hints) > 0 {
				wide := 0
				for _, h := range hints {
					wide = max(wide, len(h.Command))
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "step through each row that did not pass, request by request:")
				for _, h := range hints {
					fmt.Fprintf(cmd.ErrOrStderr(), "  %-*s  # %s\n", wide, h.Command, h.Grade)
				}
			}
		}
	}
	if f.out != "" && rep.Explore != nil {
		files, err := conform.MissionFiles(rep, f.out)
		if err != nil {
			return err
		}
		if len(files) > 0 {
			if err := os.MkdirAll(f.out, 0o777); err != nil {
				return badInput(fmt.Errorf("--out %s: %w", f.out, cause(err)))
			}
			if err := writeAll(files, f.force); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s to %s (validate, conform --missions %s and the lab open each)\n", termtext.Plural(len(files), "shrunk mission"), f.out, f.out)
		}
	}
	switch ending, why := rep.Ending(f.merged); ending {
	case conform.Interrupted:
		return &exitError{code: exitInterrupted, err: why}
	case conform.Failed:
		return &exitError{code: exitVerdict, err: why}
	}
	return nil
}

// conformScenarios are the scenarios asked for: every one the catalog
// (with --missions) offers, or those --scenario names, in its order.
func conformScenarios(cmd *cobra.Command, ids []string) ([]*conform.Scenario, error) {
	cat, err := loadCatalog(cmd)
	if err != nil {
		return nil, err
	}
	scenarios, err := conform.Select(cat, ids)
	if err != nil {
		return nil, badInput(fmt.Errorf("--scenario: %w", err))
	}
	return scenarios, nil
}

// checkConformFiles checks, before the first row runs, every file conform
// will write: the --junit file and a session per scenario in --record,
// each writable and not in the way of another or of the client itself.
func checkConformFiles(f *conformFlags, command string, ids []string) error {
	if f.record != "" {
		if err := probeDir("--record", f.record); err != nil {
			return err
		}
	}
	outs := conform.Outputs{JUnit: f.junit, RecordDir: f.record}
	for _, path := range outs.Paths(ids) {
		if err := checkWritable(path, f.force, true); err != nil {
			return err
		}
	}
	if f.junit == "" {
		return nil
	}
	if err := outs.Collision(command, ids); err != nil {
		return badInput(err)
	}
	if err := checkWritable(f.junit, f.force, outs.JUnitInRecord()); err != nil {
		return err
	}
	return probeDir("--junit", filepath.Dir(f.junit))
}

// newConformMergeCmd is conform merge: the shards' JSON reports of one
// run joined into one report, and one JUnit file.
func newConformMergeCmd() *cobra.Command {
	var asJSON bool
	var junit string
	var force bool
	cmd := &cobra.Command{
		Use:   "merge REPORT.json...",
		Short: "Merge the --json reports of conform's shards (--shard I/N) into one report",
		Long: `Merge the JSON reports that the shards of one conform run wrote
(replaylab conform --shard I/N --json, one per CI job) into one: the rows of
each, the counts added, and for a search (--explore) each distinct failure
once. It prints the scorecard (or, with --json, the merged report) and with
--junit writes one JUnit file. Exit codes as conform's: 1 when the merged run
does not pass, 2 for bad input.`,
		Example: `  replaylab conform merge shard-*.json --junit conform.xml
  replaylab conform merge --json shard-1.json shard-2.json > conform.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("give the --json reports of the run's shards, e.g. replaylab conform merge shard-*.json")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var reps []*conform.Report
			for _, name := range args {
				data, err := readLimited(name, 256<<20, "a conform report")
				if err != nil {
					return badInput(err)
				}
				r, err := conform.UnmarshalReport(name, data)
				if err != nil {
					return badInput(err)
				}
				reps = append(reps, r)
			}
			rep, err := conform.Merge(args, reps)
			if err != nil {
				return badInput(err)
			}
			if cmd.Flags().Changed("junit") {
				if strings.TrimSpace(junit) == "" {
					return badInput(errors.New("--junit is empty; give a path, or leave --junit out"))
				}
				if err := checkWritable(junit, force, false); err != nil {
					return err
				}
				if err := probeDir("--junit", filepath.Dir(junit)); err != nil {
					return err
				}
			}
			f := &conformFlags{asJSON: asJSON, junit: junit, force: force, merged: true}
			return finishConform(cmd, f, rep)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the merged report as JSON ("+conform.SchemaID+") instead of the scorecard")
	cmd.Flags().StringVar(&junit, "junit", "", "also write the merged scorecard as JUnit XML to `FILE`")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite the --junit file if it exists")
	return cmd
}
