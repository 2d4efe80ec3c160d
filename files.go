package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/missions"
)

// existsError says which file is in the way and how to replace it.
func existsError(path string) error {
	return badInput(fmt.Errorf("%s %w (use --force to overwrite it)", path, atomicfile.ErrExists))
}

// checkWritable reports an error when path cannot be written: a directory
// is in its place, its directory is missing (unless the command creates
// it: dirMade), or it exists and force is off. A command checks before it
// writes anything.
func checkWritable(path string, force, dirMade bool) error {
	if err := atomicfile.NotAFile(path); err != nil {
		return badInput(err)
	}
	info, err := os.Lstat(path)
	switch {
	case err == nil && info.IsDir():
		return badInput(fmt.Errorf("%s is a directory; give the path of a file to write", path))
	case err == nil && !force:
		return existsError(path)
	case err == nil && info.Mode().Perm()&0o200 == 0:
		return badInput(fmt.Errorf("%s is read-only (mode %04o); --force does not replace a read-only file: make it writable first (chmod u+w %s)", path, info.Mode().Perm(), path))
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		if dirMade {
			return nil
		}
		dir := filepath.Dir(path)
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return badInput(fmt.Errorf("%s: the directory %s does not exist; create it first or choose another path", path, dir))
		}
		return nil
	}
	return badInput(fileError(path, err))
}

// checkDir reports an error when dir, which a command would create if
// missing, is something other than a directory.
func checkDir(flag, dir string) error {
	info, err := os.Stat(dir)
	switch {
	case err == nil && !info.IsDir():
		return badInput(fmt.Errorf("%s %s is a file; expected a directory (created if missing)", flag, dir))
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return badInput(fmt.Errorf("%s %s: %w", flag, dir, cause(err)))
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

// readLimited reads a file of at most limit bytes. It reads through a
// limit rather than trusting the size the file system reports, so a pipe
// (a shell's <(…)) still works and a device that never ends does not
// exhaust memory. what names the file expected, for a directory given
// instead.
func readLimited(path string, limit int64, what string) ([]byte, error) {
	f, err := openInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return nil, fmt.Errorf("%s is a directory; expected %s", path, what)
	}
	data, tooBig, err := missions.ReadAtMost(f, limit)
	if err != nil {
		return nil, err
	}
	if tooBig {
		return nil, fmt.Errorf("%s: the file is larger than %d bytes, the most %s may hold", path, limit, what)
	}
	return data, nil
}

// pipeWait is how long a named pipe may keep a reader waiting for a
// writer to open it.
var pipeWait = 3 * time.Second

// openInput opens a file to read. Opening a named pipe waits until
// something opens it to write; a pipe nothing writes to (a mkfifo left
// alone) would wait forever, so that wait is bounded by pipeWait. A shell's
// <(…) has its writer already and opens at once.
func openInput(path string) (*os.File, error) {
	info, err := os.Stat(path)
	if err != nil || info.Mode()&fs.ModeNamedPipe == 0 {
		return os.Open(path)
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-time.After(pipeWait):
		return nil, fmt.Errorf("%s is a named pipe that nothing opened to write in %v; write to it from another process, or give a file", path, pipeWait)
	}
}

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

// probe makes and removes a file in dir: a directory that cannot be
// written is found before the work, not after it. The error is the
// system's reason alone.
func probe(dir string) error {
	f, err := os.CreateTemp(dir, ".replaylab-probe-*")
	if err != nil {
		return cause(err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
