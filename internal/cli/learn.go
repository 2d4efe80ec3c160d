package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/course"
	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/lab"
)

func newLearnCmd() *cobra.Command {
	var status, asJSON, reset bool
	var dir string
	cmd := &cobra.Command{
		Use:   "learn",
		Short: "The course: predict what the ledger holds, then see it",
		Long: `The course. Each lesson runs missions a step at a time and, before a step it
asks about, shows what stood before it and asks what will happen: how many
effects the ledger will hold, what the caller will observe, which verdict an
intent will get, whether the guarded caller will send. Answer with the key
beside your answer (a count with its own digit, anything else with a
letter); the step is shown after the answer, with the reason.

Lesson 1 is the whole exercise: a refund whose reply is lost, retried with
the same key, with a fresh key, and refused twice. Each lesson after it is
one more way a retried write goes wrong (a pending refund, two workers, a
changed amount, an expired key, …), a naive caller beside a guarded one;
the last is an agent's, whose model calls its tool again.

Progress is kept in $XDG_STATE_HOME/replaylab/progress.json
(~/.local/state/… where that is not set); --status prints it, --reset
starts over. q in the middle of a lesson asks first, then keeps your place:
learn reopens where you were; esc goes to the list of lessons and keeps it
too. The cases of finished runs are written beside the progress, in
$XDG_STATE_HOME/replaylab/cases (or --dir), never into the current
directory unasked; the screen says where.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON && !status {
				return badInput(errors.New("--json goes with --status (replaylab learn --status --json)"))
			}
			if reset && status {
				return badInput(errors.New("--reset and --status are two things: run one, then the other"))
			}
			path, err := progressPath()
			if err != nil {
				return badInput(err)
			}
			if reset {
				return resetProgress(cmd, path)
			}
			lessons := course.BuiltIn()
			if status {
				// A look only: a file that does not read stays put.
				prog, note := course.PeekProgress(path)
				if note != "" {
					fmt.Fprintln(cmd.ErrOrStderr(), "replaylab:", termtext.CleanLine(note))
				}
				return printCourseStatus(cmd, lessons, prog, path, asJSON)
			}
			dir, err := courseCasesDir(path, dir, cmd.Flags().Changed("dir"))
			if err != nil {
				return err
			}
			return runCourse(cmd, lessons, path, dir)
		},
	}
	cmd.Flags().BoolVar(&status, "status", false, "print the lessons, done or not, with their scores, and exit")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --status: print it as JSON, for a script")
	cmd.Flags().BoolVar(&reset, "reset", false, "forget the course's progress and start over")
	cmd.Flags().StringVar(&dir, "dir", "", "write the cases of finished runs to `DIR` (default: cases/ beside the progress file)")
	return cmd
}

// courseCasesDir is where the course writes the cases of finished runs:
// --dir when given, else cases/ beside the progress file, never the
// current directory unasked.
func courseCasesDir(progress, dir string, given bool) (string, error) {
	switch {
	case dir == "" && given:
		return "", badInput(errors.New("--dir is empty; give a directory, or leave --dir out for cases/ beside the progress file"))
	case dir == "":
		return filepath.Join(filepath.Dir(progress), "cases"), nil
	}
	return dir, nil
}

func resetProgress(cmd *cobra.Command, path string) error {
	err := os.Remove(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(cmd.OutOrStdout(), "no progress to reset (%s does not exist)\n", termtext.CleanLine(path))
		return nil
	case err != nil:
		return badInput(fmt.Errorf("resetting the progress %s: %w", termtext.CleanLine(path), atomicfile.Cause(err)))
	}
	fmt.Fprintf(cmd.OutOrStdout(), "progress reset: removed %s\n", termtext.CleanLine(path))
	return nil
}

func printCourseStatus(cmd *cobra.Command, c *course.Course, p course.Progress, path string, asJSON bool) error {
	st := course.Status(c, p)
	if !asJSON {
		fmt.Fprint(cmd.OutOrStdout(), course.StatusText(st))
		return nil
	}
	out, err := export.MarshalCourseStatus(path, st)
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), string(out))
	return nil
}

func runCourse(cmd *cobra.Command, c *course.Course, path, dir string) error {
	if err := checkDir("--dir", dir); err != nil {
		return err
	}
	if !onTerminal(cmd) {
		return badInput(errors.New("the course needs a terminal on standard input and output; " +
			"`replaylab learn --status` prints the lessons and scores without one"))
	}
	// Only a course that starts sets a progress file that does not read
	// aside, and says so before the screen opens.
	p, note, err := course.ReadProgress(path)
	if err != nil {
		return badInput(err)
	}
	if note != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "replaylab:", termtext.CleanLine(note))
	}
	m, err := lab.New(lab.Options{Course: c, Progress: p, ProgressPath: path, Dir: dir, FirstTime: len(p.Lessons) == 0})
	if err != nil {
		return badInput(err)
	}
	return lab.Run(m, cmd.ErrOrStderr())
}
