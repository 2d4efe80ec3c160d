// Package memlimit keeps a long-running command's heap near what it
// keeps: a soft limit on the Go heap (debug.SetMemoryLimit), raised once
// what is kept grows well past it. Without a limit the collector lets the
// heap grow to twice what is kept before it runs; with a fixed one, a
// program that keeps more than the limit would collect without pause.
package memlimit

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

var (
	// base is the limit Set put in force; 0 when none is.
	base atomic.Int64
	mu   sync.Mutex
	live = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
)

// Set puts a soft limit of limit bytes on the Go heap, and returns what
// puts the old one back. With GOMEMLIMIT set it does nothing: the user
// chose.
func Set(limit int64) (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	old := debug.SetMemoryLimit(limit)
	base.Store(limit)
	return func() {
		base.Store(0)
		debug.SetMemoryLimit(old)
	}
}

// Raise puts the limit an eighth above the live heap once that is well
// (a quarter) past the limit Set put in force; it does nothing when no
// limit is. Call it now and then as what is kept grows.
func Raise() {
	b := base.Load()
	if b == 0 {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	metrics.Read(live)
	if n := int64(live[0].Value.Uint64()); n > b*5/4 {
		debug.SetMemoryLimit(n * 9 / 8)
	}
}
