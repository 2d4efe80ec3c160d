package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/replaylab/replaylab/internal/termtext"
)

// Exit codes: every one the command line returns.
const (
	exitOK          = 0
	exitVerdict     = 1   // a run or replay the caller asked to fail on
	exitBadInput    = 2   // bad usage or bad input
	exitStorage     = 3   // serve stopped: a durable write failed
	exitInterrupted = 130 // stopped by Ctrl-C (128 + SIGINT), as shells report it
)

// exitError carries an exit code up to Main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func badInput(err error) error { return &exitError{code: exitBadInput, err: err} }

// exitCode prints err, if any, on stderr and returns the code it carries.
// cobra's own errors (unknown flags, wrong arguments) are usage errors.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "replaylab:", termtext.Clean(err.Error()))
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitBadInput
}
