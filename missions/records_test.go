package missions

import (
	"reflect"
	"runtime"
	"testing"
)

// settle lets the collector find what nothing reads any more, and its
// cleanups run.
func settle() {
	runtime.GC()
	for range 5 {
		runtime.Gosched()
	}
}

// A long run's records go to the next long run once no runner or log
// reads them, never before: a case kept from one run reads the same while
// other runs come and go, and a run on another's memory reads as one on
// fresh memory.
func TestLongRunsTakeFreedRecords(t *testing.T) {
	m := longMission(8000)
	run := func(stable bool) *Runner {
		r, err := NewRunner(m, m.Settings(Overrides{StableKeys: &stable}))
		if err != nil {
			t.Fatal(err)
		}
		r.Seek(r.Steps())
		return r
	}
	r := run(false)
	if n := r.eventLog().Len(); n <= longRun {
		t.Fatalf("the long mission makes %d events, fewer than a long run's %d", n, longRun)
	}
	kept := r.Logged()
	want := kept.Whole().Events
	r = nil
	for range 3 {
		settle()
		other := run(true)
		other.Seek(other.Steps() / 2)
		if got := kept.Log().All(); !reflect.DeepEqual(got, want) {
			t.Fatal("a case kept from a run changed while other runs came and went")
		}
	}
	kept = nil

	// Nothing reads the first run now: its memory comes back, once the
	// collector has seen it go.
	freed := false
	for range 100 {
		settle()
		if recs, ok := takeFree(longRun); ok {
			free(&recBuf{recs: recs})
			freed = true
			break
		}
	}
	if !freed {
		t.Fatal("no long run's memory came back once nothing read it")
	}
	got := run(false).Case().Events
	if !reflect.DeepEqual(got, want) {
		t.Error("a run on another run's memory reads other than one on fresh memory")
	}
}

// The codes found by comparison are the ones names gives, for every word
// of each list.
func TestHotCodesAreTheNamesCodes(t *testing.T) {
	for _, w := range beliefNames.list {
		if got, want := beliefCode(w), beliefNames.code(w); got != want {
			t.Errorf("belief %q: %d, want %d", w, got, want)
		}
	}
	for _, w := range kindNames.list {
		if got, want := kindCode(w), kindNames.code(w); got != want {
			t.Errorf("kind %q: %d, want %d", w, got, want)
		}
	}
	for _, w := range checkpointNames.list {
		if got, want := checkpointCode(w), checkpointNames.code(w); got != want {
			t.Errorf("checkpoint %q: %d, want %d", w, got, want)
		}
	}
	for _, w := range append(observedNames.list, "") {
		if got, want := observedCode(w), observedNames.code(w); got != want {
			t.Errorf("observation %q: %d, want %d", w, got, want)
		}
	}
	for _, w := range providerNames.list {
		if got, want := providerCode(w), providerNames.code(w); got != want {
			t.Errorf("provider %q: %d, want %d", w, got, want)
		}
	}
}

// The scans a driver makes of a long run (the next send, the next words,
// the highest count, the events but one kind) find what reading every event finds, in a runner's
// log and in a case's whole events alike.
func TestLogScansReadAsEveryEvent(t *testing.T) {
	m := longMission(300)
	for _, p := range Policies {
		r, err := NewRunner(m, m.Settings(Overrides{Policy: &p}))
		if err != nil {
			t.Fatal(err)
		}
		r.Seek(r.Steps())
		live := r.Logged()
		for _, l := range []EventLog{live.Log(), live.Whole().Log()} {
			for from := range l.Len() + 1 {
				attempt, says, most := l.Len(), l.Len(), 0
				for i := l.Len() - 1; i >= from; i-- {
					if l.Kind(i) == EventAttempt {
						attempt = i
					}
					if l.Says(i) {
						says = i
					}
					most = max(most, l.Effects(i))
				}
				if got := l.NextAttempt(from); got != attempt {
					t.Fatalf("%s: the next send from %d is %d, not %d", p, from, got, attempt)
				}
				if got := l.NextSaid(from); got != says {
					t.Fatalf("%s: the next words from %d are at %d, not %d", p, from, got, says)
				}
				var others []int
				for i := from; i < l.Len(); i++ {
					if l.Kind(i) != EventCheckpoint {
						others = append(others, i)
					}
				}
				if got := l.AppendOthers(nil, from, EventCheckpoint); !reflect.DeepEqual(got, others) {
					t.Fatalf("%s: the events from %d but checkpoints are %v, not %v", p, from, got, others)
				}
				if got := l.MostEffects(from); got != most {
					t.Fatalf("%s: the most effects from %d are %d, not %d", p, from, got, most)
				}
			}
		}
	}
}
