// Package cli is replaylab's command line: the root command and one file
// per command, each turning its flags into a package's Config, validating
// it, making one call and returning an exit code (exit.go).
package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/internal/buildinfo"
	"github.com/replaylab/replaylab/internal/termtext"
)

// Main runs the command line with the process's streams and returns the
// exit code; main hands it os.Args[1:] and exits with what it returns.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(context.Background(), args, stdin, stdout, stderr)
}

// run is Main under ctx: a command that runs long (explore) stops when ctx
// ends, as it does on Ctrl-C.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return exitCode(root.ExecuteContext(ctx), stderr)
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "replaylab",
		Short: "A terminal lab: a timed-out write is not a failure",
		Long: `replaylab replays missions: scripted tool-call attempts against a simulated
provider whose ledger you can read after every step. Flip stable keys, the
caller's policy and the provider's contract, and watch the effect counter say
what really happened. Every run is a case you can export, replay and compare.

With no command it opens the interactive lab on the mission picker.`,
		Example: `  replaylab                                   # the lab
  replaylab lab timeout-then-success          # the lab, on one mission
  replaylab run timeout-then-success --stable-keys=off
  replaylab export timeout-then-success failure-then-failure --variants --dir cases
  replaylab compare cases/*.json`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          rootArgs,
		// A typo two letters off still finds its command.
		SuggestionsMinimumDistance: 2,
		Version:                    buildinfo.Version(),
	}
	root.SetVersionTemplate(buildinfo.Line() + "\n")
	var lf labFlags
	lf.register(root)
	root.RunE = func(cmd *cobra.Command, _ []string) error { return runLab(cmd, &lf, "") }
	registerMissionsDir(root)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return badInput(fmt.Errorf("%w (see: %s --help)", err, cmd.CommandPath()))
	})
	root.AddCommand(newMissionsCmd(), newProvidersCmd(), newRunCmd(), newLabCmd(), newExportCmd(), newValidateCmd(), newReplayCmd(), newCompareCmd(), newExploreCmd(), newServeCmd(), newCheckCmd(), newLearnCmd(), newConformCmd(), newVersionCmd())
	registerCompletions(root)
	// Every command names what its arguments should be when they are wrong.
	for _, c := range root.Commands() {
		registerCompletions(c)
		switch c.Name() {
		case "run", "lab", "explore":
			c.ValidArgsFunction = completeMissions(1)
		case "export":
			c.ValidArgsFunction = completeMissions(0)
		}
		if c.Args != nil {
			c.Args = explainArgs(c.Args)
		}
	}
	return root
}

// rootArgs refuses arguments to the bare command, saying what was likely
// meant: a command with a similar name, or, for a mission id, the commands
// that take one.
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	arg := termtext.CleanLine(args[0])
	if cat, err := loadCatalog(cmd); err == nil {
		if _, err := cat.Get(args[0]); err == nil {
			return badInput(fmt.Errorf("%q is a mission, not a command: open it in the lab with \"replaylab lab %s\", or run it headless with \"replaylab run %s\"", arg, arg, arg))
		}
	}
	msg := fmt.Sprintf("unknown command %q", arg)
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %s?", strings.Join(s, " or "))
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return badInput(fmt.Errorf("%s (commands: %s; see: replaylab --help)", msg, strings.Join(names, ", ")))
}

// explainArgs wraps an argument check so that its error shows the command's
// usage line: what the arguments should be.
func explainArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return badInput(fmt.Errorf("%s: %w (usage: %s)", cmd.Name(), err, cmd.UseLine()))
		}
		return nil
	}
}

// newVersionCmd is replaylab version: the same line as replaylab --version,
// from the build information Go stamps into the binary.
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print which replaylab this is, and the Go that built it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), buildinfo.Line())
			return err
		},
	}
}
