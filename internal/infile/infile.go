// Package infile reads the files a command is given, bounded: at most a
// size (through a limit, not the size the file system reports, so that a
// pipe works and a device that never ends does not exhaust memory), and a
// named pipe's wait for a writer at most a while. It imports nothing else
// of this repository.
package infile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// ReadAtMost reads r to its end, but no more than limit bytes: tooBig
// says there was more. It reads through the limit rather than trust a
// size, since a device or a pipe has none, and one that never ends does
// not exhaust memory.
func ReadAtMost(r io.Reader, limit int64) (data []byte, tooBig bool, err error) {
	data, err = io.ReadAll(io.LimitReader(r, limit+1))
	if int64(len(data)) > limit {
		return data[:limit], true, err
	}
	return data, false, err
}

// Read reads a file of at most limit bytes. It reads through a
// limit rather than trusting the size the file system reports, so a pipe
// (a shell's <(…)) still works and a device that never ends does not
// exhaust memory. what names the file expected, for a directory given
// instead.
func Read(path string, limit int64, what string, pipeWait time.Duration) ([]byte, error) {
	f, err := Open(path, pipeWait)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return nil, fmt.Errorf("%s is a directory; expected %s", path, what)
	}
	data, tooBig, err := ReadAtMost(f, limit)
	if err != nil {
		return nil, err
	}
	if tooBig {
		return nil, fmt.Errorf("%s: the file is larger than %d bytes, the most %s may hold", path, limit, what)
	}
	return data, nil
}

// Open opens a file to read. Opening a named pipe waits until
// something opens it to write; a pipe nothing writes to (a mkfifo left
// alone) would wait forever, so that wait is bounded by pipeWait. A shell's
// <(…) has its writer already and opens at once.
func Open(path string, pipeWait time.Duration) (*os.File, error) {
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

// Error words a file system error for a person: the path, then what
// went wrong, without the name of the system call.
func Error(path string, err error) error {
	if path == "" {
		return errors.New("the file name is empty; give the path of a file")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errors.Is(err, fs.ErrNotExist) {
			if info, lerr := os.Lstat(path); lerr == nil && info.Mode()&fs.ModeSymlink != 0 {
				return fmt.Errorf("%s: a symbolic link to a file that does not exist", path)
			}
			return fmt.Errorf("%s: no such file", path)
		}
		return fmt.Errorf("%s: %v", path, pe.Err)
	}
	return err
}
