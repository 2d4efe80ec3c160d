package atomicfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// TempPattern is the os.CreateTemp pattern of a temporary file or
// directory of this process named with prefix: prefix, the process id,
// a dot and a tag of the host, then the random part. Sweep finds the
// ones whose process is gone; the host's tag keeps it from taking
// another machine's (a shared folder, a container's own process ids)
// for its own.
func TempPattern(prefix, suffix string) string {
	return prefix + TempMark(os.Getpid()) + "-*" + suffix
}

// TempMark is what TempPattern puts after the prefix for process pid on
// this host: "1234.5f3a9c01".
func TempMark(pid int) string {
	return strconv.Itoa(pid) + "." + hostTag()
}

// hostTag is 8 hex digits of the host's name.
var hostTag = sync.OnceValue(func() string {
	name, _ := os.Hostname()
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:4])
})

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
		mark, _, ok := strings.Cut(rest, "-")
		pidText, tag, tagged := strings.Cut(mark, ".")
		pid, err := strconv.Atoi(pidText)
		if !ok || !tagged || tag != hostTag() || err != nil || pid <= 0 || running(pid) {
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
