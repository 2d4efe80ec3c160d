package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/replaylab/replaylab/course"
	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/internal/infile"
	"github.com/replaylab/replaylab/reproduce"
)

// existsError says which file is in the way and how to replace it.
func existsError(path string) error {
	return badInput(fmt.Errorf("%s %w (use --force to overwrite it)", path, atomicfile.ErrExists))
}

// checkWritable reports an error when path cannot be written
// (atomicfile.Check), with the command line's advice: a command checks
// before it writes anything.
func checkWritable(path string, force, dirMade bool) error {
	err := atomicfile.Check(path, force, dirMade)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, atomicfile.ErrExists):
		return existsError(path)
	case errors.Is(err, atomicfile.ErrReadOnly):
		return badInput(fmt.Errorf("%w: make it writable first (chmod u+w %s)", err, path))
	}
	return badInput(infile.Error(path, err))
}

// checkDir reports an error when dir, which a command would create if
// missing, is something other than a directory.
func checkDir(flag, dir string) error {
	if err := atomicfile.CheckDir(dir); err != nil {
		return badInput(fmt.Errorf("%s %s%w", flag, dir, err))
	}
	return nil
}

// cause is atomicfile.Cause: what went wrong in a file system error, without
// the system call's name: "permission denied", "not a directory".
func cause(err error) error { return atomicfile.Cause(err) }

// writeFileAtomic writes a file whole or not at all (atomicfile.WriteFile),
// with the command line's advice when a file is in the way.
func writeFileAtomic(path string, data []byte, force bool) error {
	return writeFileAtomicWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, force)
}

// writeFileAtomicWith is writeFileAtomic with the contents written by
// write, for a file too large to hold whole first.
func writeFileAtomicWith(path string, write func(io.Writer) error, force bool) error {
	err := heldSignals(func() error { return atomicfile.WriteFileWith(path, write, force) })
	if errors.Is(err, atomicfile.ErrExists) {
		return existsError(path)
	}
	return err
}

// readLimited reads a file of at most limit bytes (infile.Read): a pipe
// works, a device that never ends does not exhaust memory, and a named
// pipe nothing writes to is given up after pipeWait.
func readLimited(path string, limit int64, what string) ([]byte, error) {
	return infile.Read(path, limit, what, pipeWait)
}

// pipeWait is how long a named pipe may keep a reader waiting for a
// writer to open it.
var pipeWait = 3 * time.Second

// heldSignals runs write with SIGINT, SIGTERM and SIGHUP held back, so
// that a signal cannot end the process half way through a file: the write
// finishes (whole, or not at all), and then the command stops with the
// shell's code for the signal, saying what became of the files.
func heldSignals(write func() error) error {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	err := write()
	signal.Stop(ch)
	select {
	case sig := <-ch:
		n := 128
		if s, ok := sig.(syscall.Signal); ok {
			n += int(s)
		}
		what := "the files were written whole first"
		if err != nil {
			what = "the write failed (" + err.Error() + "), and nothing was left half-written"
		}
		return &exitError{code: n, err: fmt.Errorf("interrupted by %v: %s", sig, what)}
	default:
		return err
	}
}

// writeAll writes several files all or nothing (atomicfile.WriteAll), signals
// held back meanwhile: a full disk or a file that appears meanwhile leaves
// none of the new files.
func writeAll(files []atomicfile.File, force bool) error {
	err := heldSignals(func() error { return atomicfile.WriteAll(files, force) })
	var ee *exitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		return err
	case errors.Is(err, atomicfile.ErrExists):
		return badInput(fmt.Errorf("%w; use --force to overwrite", err))
	}
	return badInput(err)
}

// probeDir says whether files can be written into dir, or into the
// directory that would hold it when it does not exist yet, without leaving
// anything behind.
func probeDir(flag, dir string) error {
	at := dir
	for {
		if info, err := os.Stat(at); err == nil {
			if !info.IsDir() {
				return badInput(fmt.Errorf("%s %s: %s is a file; expected a directory (created if missing)", flag, dir, at))
			}
			break
		}
		parent := filepath.Dir(at)
		if parent == at {
			break
		}
		at = parent
	}
	if err := atomicfile.Probe(at); err != nil {
		return badInput(fmt.Errorf("%s %s: cannot write there: %w", flag, dir, err))
	}
	return nil
}

// printed turns a failed write of the report into an error: a report that
// did not reach its reader is not a success.
func printed(_ int, err error) error {
	if err != nil {
		return fmt.Errorf("writing the report: %w", cause(err))
	}
	return nil
}

// readDocument reads a case file or a serve session file
// (reproduce.ReadDocument).
func readDocument(path string) (export.Document, error) {
	return reproduce.ReadDocument(path, pipeWait)
}

// progressPath is where the course keeps its progress on this machine.
func progressPath() (string, error) {
	home, _ := os.UserHomeDir()
	return course.ProgressPath(os.Getenv, home)
}
