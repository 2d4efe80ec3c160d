package memlimit

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// The limit Set puts in force is raised once what is kept is well past
// it, and restore puts the old one back.
func TestSetRaiseRestore(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	old := debug.SetMemoryLimit(-1)
	restore := Set(1 << 20)
	if got := debug.SetMemoryLimit(-1); got != 1<<20 {
		t.Fatalf("limit %d after Set(1 MiB)", got)
	}
	kept := make([]byte, 16<<20)
	for i := range kept {
		kept[i] = byte(i)
	}
	runtime.GC()
	Raise()
	if got := debug.SetMemoryLimit(-1); got < 16<<20 {
		t.Errorf("limit %d with 16 MiB kept: not raised", got)
	}
	runtime.KeepAlive(kept)
	restore()
	if got := debug.SetMemoryLimit(-1); got != old {
		t.Errorf("limit %d after restore, want %d", got, old)
	}
	Raise() // with no limit in force, nothing
	if got := debug.SetMemoryLimit(-1); got != old {
		t.Errorf("Raise with no limit set moved it to %d", got)
	}
}
