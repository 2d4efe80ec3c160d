package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/replaylab/replaylab/export"
)

// existsError says which file is in the way and how to replace it.
func existsError(path string) error {
	return badInput(fmt.Errorf("%s %w (use --force to overwrite it)", path, export.ErrExists))
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

// writeFileAtomic writes a file whole or not at all (export.WriteFile),
// with the command line's advice when a file is in the way.
func writeFileAtomic(path string, data []byte, force bool) error {
	err := export.WriteFile(path, data, force)
	if errors.Is(err, export.ErrExists) {
		return existsError(path)
	}
	return err
}
