package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/replaylab/replaylab/export"
)

// existsError says which file is in the way and how to replace it.
func existsError(path string) error {
	return badInput(fmt.Errorf("%s %w (use --force to overwrite it)", path, export.ErrExists))
}

// checkWritable reports an error when path cannot be written: a directory
// is in its place, its directory is missing (unless the command creates
// it: dirMade), or it exists and force is off. A command checks before it
// writes anything.
func checkWritable(path string, force, dirMade bool) error {
	info, err := os.Lstat(path)
	switch {
	case err == nil && info.IsDir():
		return badInput(fmt.Errorf("%s is a directory; give the path of a file to write", path))
	case err == nil && !force:
		return existsError(path)
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

// cause is what went wrong in a file system error, without the system
// call's name: "permission denied", "not a directory".
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// writeFileAtomic writes a file whole or not at all (export.WriteFile),
// with the command line's advice when a file is in the way.
func writeFileAtomic(path string, data []byte, force bool) error {
	err := export.WriteFile(path, data, force)
	if errors.Is(err, export.ErrExists) {
		return existsError(path)
	}
	return err
}
