package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// TempPattern is the os.CreateTemp pattern of a temporary file or
// directory of this process named with prefix: prefix, the process id,
// then the random part. Sweep finds the ones whose process is gone.
func TempPattern(prefix, suffix string) string {
	return prefix + strconv.Itoa(os.Getpid()) + "-*" + suffix
}

// Sweep removes, in dir, the temporary files and directories made with
// TempPattern(prefix, …) by processes that no longer run: what a process
// killed mid-write left behind. A name whose process still runs (this
// one, another at work, or a new one that took the id) is left alone.
// It returns how many it removed; what it cannot read or remove it
// passes over.
func Sweep(dir, prefix string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || running(pid) {
			continue
		}
		if os.RemoveAll(filepath.Join(dir, e.Name())) == nil {
			removed++
		}
	}
	return removed
}

// running reports whether process pid exists (a signal 0 reaches it, or
// is refused for want of permission).
func running(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
