// Package atomicfile writes files so that a reader sees the old file or
// the whole new one, never a part, and never overwrites without being
// asked. It imports nothing else of this repository.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// TempPrefix names the temporary files WriteFile writes beside their
// target; Sweep(dir, TempPrefix) removes those a dead process left.
const TempPrefix = ".replaylab-"

// ErrExists is returned when a file is in the way and overwriting was not
// asked for.
var ErrExists = errors.New("already exists")

// WriteFile writes data to path so that readers see either no file, the old
// file or the whole new one, never a part: the bytes go to a temporary file
// in the same directory, which is synced and then moved into place. Without
// force an existing path is left alone and ErrExists returned. On any
// failure the temporary file is removed. Errors name path and say what
// stood in the way, never the temporary file's name.
//
// A new file gets the permissions the umask leaves of 0666, as a file the
// shell creates does; a file --force replaces keeps its own mode, and a
// read-only one is not replaced.
func WriteFile(path string, data []byte, force bool) error {
	return WriteFileWith(path, bytesOf(data), force)
}

// WriteFileWith is WriteFile with the file's contents written by write,
// for a file too large to hold whole first, as a long session is.
func WriteFileWith(path string, write func(io.Writer) error, force bool) error {
	if err := NotAFile(path); err != nil {
		return err
	}
	mode := newFileMode()
	if info, err := os.Stat(path); err == nil && force {
		if info.Mode().Perm()&0o200 == 0 {
			return fmt.Errorf("%s is read-only (mode %04o); make it writable first (chmod u+w %s) if it is to be replaced", path, info.Mode().Perm(), path)
		}
		mode = info.Mode().Perm()
	}
	tmp, err := writeTemp(filepath.Dir(path), write, mode)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer removeTemp(tmp)
	if force {
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("%s: cannot replace it: %w", path, cause(err))
		}
		return nil
	}
	return place(tmp, path)
}

// NotAFile says why path, which exists, cannot be replaced by a written
// file: it is a directory, a symbolic link, a device, a named pipe or a
// socket. A file is written whole and moved into place, which replaces
// whatever is at the path: the link rather than what it points to (so
// /dev/stdout stopped printing), or, for root, a device such as /dev/full
// itself. It is nil for a regular file and for a path that does not exist.
func NotAFile(path string) error {
	info, err := os.Lstat(path)
	if err != nil {
		return nil
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		if to, err := os.Stat(path); err == nil && to.IsDir() {
			info = to
		} else {
			dest, _ := os.Readlink(path)
			return fmt.Errorf("%s is a symbolic link (to %s); a file written here would replace the link, not what it points to: give the path of the file itself, or redirect standard output to print", path, dest)
		}
	}
	switch {
	case info.IsDir():
		return fmt.Errorf("%s is a directory; give the path of a file to write", path)
	case !info.Mode().IsRegular():
		return fmt.Errorf("%s is %s, not a file; a file written here would take its place: to print, redirect standard output instead", path, FileKind(info.Mode()))
	}
	return nil
}

// FileKind names a file mode's type in words.
func FileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// Cause is what went wrong in a file system error, without the operation
// and the path (which may be a temporary file's): "permission denied".
func Cause(err error) error { return cause(err) }

func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// unfinished holds the temporary files being written, so that a program
// that must stop before they are placed can take them away.
var unfinished = struct {
	sync.Mutex
	names map[string]bool
}{names: map[string]bool{}}

// RemoveUnfinished removes the temporary files of writes not yet placed,
// and the new files of an all-or-nothing write not yet whole: for a
// program about to stop in the middle of one.
func RemoveUnfinished() {
	unfinished.Lock()
	defer unfinished.Unlock()
	for name := range unfinished.names {
		os.Remove(name)
		delete(unfinished.names, name)
	}
}

// notePlaced marks a new file an all-or-nothing write has placed but not
// yet finished; forgetPlaced clears the mark.
func notePlaced(path string) {
	unfinished.Lock()
	unfinished.names[path] = true
	unfinished.Unlock()
}

func forgetPlaced(path string) { forget(path) }

// removeTemp removes a temporary file and forgets it.
func removeTemp(name string) {
	os.Remove(name)
	forget(name)
}

func forget(name string) {
	unfinished.Lock()
	delete(unfinished.names, name)
	unfinished.Unlock()
}

// umask is the process's file mode creation mask, read once at start.
var umask = func() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}()

// newFileMode is the mode of a new file: 0666 less the umask.
func newFileMode() os.FileMode { return 0o666 &^ umask }

// writeTemp writes data to a new temporary file in dir with mode, synced
// and closed, and returns its name.
// bytesOf writes data.
func bytesOf(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

func writeTemp(dir string, write func(io.Writer) error, mode os.FileMode) (name string, err error) {
	f, err := os.CreateTemp(dir, TempPattern(TempPrefix, ".tmp"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("the directory %s does not exist", dir)
		}
		return "", fmt.Errorf("cannot write in the directory %s: %w", dir, cause(err))
	}
	unfinished.Lock()
	unfinished.names[f.Name()] = true
	unfinished.Unlock()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("cannot write in the directory %s: %w", dir, cause(err))
		}
	}()
	if err = write(f); err != nil {
		return "", err
	}
	if err = f.Chmod(mode); err != nil {
		return "", err
	}
	if err = f.Sync(); err != nil {
		return "", err
	}
	return f.Name(), f.Close()
}

// place moves the temporary file to path unless path exists. A hard link
// fails when path exists, so a file that appears meanwhile is still never
// replaced; where the file system has no hard links, it checks, then
// renames.
func place(tmp, path string) error {
	err := os.Link(tmp, path)
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s %w", path, ErrExists)
	}
	if _, serr := os.Lstat(path); serr == nil {
		return fmt.Errorf("%s %w", path, ErrExists)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("%s: cannot write it: %w", path, cause(err))
	}
	return nil
}

// File is one file to write: its path and its bytes.
type File struct {
	Path string
	Data []byte
}

// WriteAll writes several files all or nothing. Every file is first
// written whole to a temporary file beside its path and synced; only when
// all are on disk are they moved into place, and if one cannot be (a file
// that appeared meanwhile, without force) those already placed are taken
// back: new ones removed, replaced ones restored. A full disk, a racing
// writer or a refusal leaves none of the new files. Errors name the file.
func WriteAll(files []File, force bool) (err error) {
	type staged struct {
		path, tmp, backup string
		placed, replaced  bool
	}
	var st []*staged
	defer func() {
		for _, s := range st {
			if s.tmp != "" {
				removeTemp(s.tmp)
			}
			if err == nil && s.backup != "" {
				os.Remove(s.backup)
			}
		}
	}()
	for _, f := range files {
		if e := NotAFile(f.Path); e != nil {
			return e
		}
		mode := newFileMode()
		if info, e := os.Stat(f.Path); e == nil && force {
			if info.Mode().Perm()&0o200 == 0 {
				return fmt.Errorf("%s is read-only (mode %04o); make it writable first (chmod u+w %s) if it is to be replaced", f.Path, info.Mode().Perm(), f.Path)
			}
			mode = info.Mode().Perm()
		}
		tmp, e := writeTemp(filepath.Dir(f.Path), bytesOf(f.Data), mode)
		if e != nil {
			return fmt.Errorf("%s: %w (nothing was written)", f.Path, e)
		}
		st = append(st, &staged{path: f.Path, tmp: tmp})
	}
	// kept lists what a rollback could not put back, to say so.
	var kept []string
	rollback := func() {
		for _, s := range st {
			if !s.placed {
				continue
			}
			switch {
			case s.backup != "":
				if e := os.Rename(s.backup, s.path); e != nil {
					kept = append(kept, fmt.Sprintf("the old %s is kept as %s", s.path, s.backup))
				}
				s.backup = ""
			case !s.replaced:
				os.Remove(s.path)
			}
			forgetPlaced(s.path)
		}
	}
	failed := func(e error) error {
		rollback()
		if len(kept) > 0 {
			return fmt.Errorf("%w (nothing was written, but %s)", e, strings.Join(kept, "; "))
		}
		return fmt.Errorf("%w (nothing was written)", e)
	}
	for _, s := range st {
		if force {
			if _, e := os.Lstat(s.path); e == nil {
				// The old file keeps a second name, to be put back if a
				// later file cannot be placed; the new one then takes
				// the path in one rename, so the path is never empty.
				s.replaced = true
				backup := fmt.Sprintf("%s.replaylab-%d.old", s.tmp, os.Getpid())
				if os.Link(s.path, backup) == nil {
					s.backup = backup
				}
			}
			if e := os.Rename(s.tmp, s.path); e != nil {
				return failed(fmt.Errorf("%s: cannot replace it: %w", s.path, cause(e)))
			}
			forget(s.tmp)
			s.tmp, s.placed = "", true
			if !s.replaced {
				notePlaced(s.path)
			}
			continue
		}
		if e := place(s.tmp, s.path); e != nil {
			return failed(e)
		}
		s.placed = true
		notePlaced(s.path)
	}
	for _, s := range st {
		forgetPlaced(s.path)
	}
	return nil
}

// WriteAllNew writes files (each File's Path a name) into dir, created if
// missing, all or nothing and never over a file: each is staged whole and
// synced first, then placed under its name, or its name with a suffix
// (-2, -3, …) when that is taken. If one cannot be placed, those already
// placed are removed. It returns the paths written, in order.
func WriteAllNew(dir string, files []File) (paths []string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the directory %s: %w", dir, cause(err))
	}
	var tmps []string
	defer func() {
		for _, t := range tmps {
			removeTemp(t)
		}
		for _, p := range paths {
			if err != nil {
				os.Remove(p)
			}
			forgetPlaced(p)
		}
		if err != nil {
			paths = nil
		}
	}()
	for _, f := range files {
		tmp, e := writeTemp(dir, bytesOf(f.Data), newFileMode())
		if e != nil {
			return nil, fmt.Errorf("%w (nothing was written)", e)
		}
		tmps = append(tmps, tmp)
	}
	const maxSuffix = 999
	for i, f := range files {
		ext := filepath.Ext(f.Path)
		base := strings.TrimSuffix(f.Path, ext)
		placed := false
		for n := 1; n <= maxSuffix && !placed; n++ {
			path := filepath.Join(dir, f.Path)
			if n > 1 {
				path = filepath.Join(dir, fmt.Sprintf("%s-%d%s", base, n, ext))
			}
			e := place(tmps[i], path)
			switch {
			case e == nil:
				paths = append(paths, path)
				notePlaced(path)
				placed = true
			case !errors.Is(e, ErrExists):
				return paths, fmt.Errorf("%w (nothing was written)", e)
			}
		}
		if !placed {
			return paths, fmt.Errorf("%s and %d numbered versions of it already exist in %s; move some away or choose another directory (nothing was written)", f.Path, maxSuffix-1, dir)
		}
	}
	return paths, nil
}

// ErrReadOnly is returned for a file that is read-only: force does not
// replace it.
var ErrReadOnly = errors.New("is read-only")

// Check reports why path cannot be written, before anything is: a
// directory is in its place, its directory is missing (unless the writer
// creates it: dirMade), it exists and force is off (ErrExists), or it is
// read-only (ErrReadOnly, which force does not override).
func Check(path string, force, dirMade bool) error {
	if err := NotAFile(path); err != nil {
		return err
	}
	info, err := os.Lstat(path)
	switch {
	case err == nil && info.IsDir():
		return fmt.Errorf("%s is a directory; give the path of a file to write", path)
	case err == nil && !force:
		return fmt.Errorf("%s %w", path, ErrExists)
	case err == nil && info.Mode().Perm()&0o200 == 0:
		return fmt.Errorf("%s %w (mode %04o); --force does not replace a read-only file", path, ErrReadOnly, info.Mode().Perm())
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		if dirMade {
			return nil
		}
		dir := filepath.Dir(path)
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return fmt.Errorf("%s: the directory %s does not exist; create it first or choose another path", path, dir)
		}
		return nil
	}
	return err
}

// CheckDir reports why dir, which a writer creates if it is missing,
// cannot be one: a file stands there, or the system refuses to look. The
// words start after dir's name: " is a file; …" or ": permission denied".
func CheckDir(dir string) error {
	info, err := os.Stat(dir)
	switch {
	case err == nil && !info.IsDir():
		return errors.New(" is a file; expected a directory (created if missing)")
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf(": %w", cause(err))
	}
	return nil
}

// Probe makes and removes a file in dir: a directory that cannot be
// written is found before the work, not after it. The error is the
// system's reason alone.
func Probe(dir string) error {
	f, err := os.CreateTemp(dir, ".replaylab-probe-*")
	if err != nil {
		return cause(err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// SamePath reports whether a and b name one file: the same path once
// cleaned, or, when both exist, the same file.
func SamePath(a, b string) bool {
	if x, err := filepath.Abs(a); err == nil {
		if y, err := filepath.Abs(b); err == nil && x == y {
			return true
		}
	}
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}
