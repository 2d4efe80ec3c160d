package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// errExists is returned when a file is in the way and --force was not given.
var errExists = errors.New("already exists")

// existsError says which file is in the way and how to replace it.
func existsError(path string) error {
	return badInput(fmt.Errorf("%s %w (use --force to overwrite it)", path, errExists))
}

// checkWritable reports an error when path exists and force is off, so a
// command can refuse before it writes anything.
func checkWritable(path string, force bool) error {
	if force {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return existsError(path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return badInput(fmt.Errorf("%s: %w", path, err))
	}
	return nil
}

// writeFileAtomic writes data to path so that readers see either the old
// file or the whole new one, never a part: the bytes go to a temporary file
// in the same directory, which is synced and then renamed over path. Without
// force an existing path is left alone and reported. On any failure the
// temporary file is removed, so nothing is left behind.
func writeFileAtomic(path string, data []byte, force bool) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	name := tmp.Name()
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if force {
		if err = os.Rename(name, path); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return nil
	}
	// A hard link fails if path exists, so a file that appeared since the
	// caller checked is still never overwritten.
	if err = os.Link(name, path); err == nil {
		os.Remove(name)
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return existsError(path)
	}
	// The file system has no hard links: check, then rename.
	if err = checkWritable(path, false); err != nil {
		return err
	}
	if err = os.Rename(name, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
