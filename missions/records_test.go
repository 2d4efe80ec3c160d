package missions

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/replaylab/replaylab/ledger"
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
	poison()
	got := run(false).Case().Events
	if !reflect.DeepEqual(got, want) {
		t.Error("a run on another run's memory reads other than one on fresh memory")
	}
}

// poison fills the memory kept for the next long runs with records no
// run writes: a run that read its memory before writing it would read
// them.
func poison() {
	var taken [][]record
	for {
		recs, ok := takeFree(0)
		if !ok {
			break
		}
		taken = append(taken, recs)
	}
	for _, recs := range taken {
		recs = recs[:cap(recs)]
		for i := range recs {
			recs[i] = record{tick: -7, step: -7, attempt: -7, effects: -7, obj: -7, text: 9999, extra: 9999, kind: 255, flags: 255}
		}
		free(&recBuf{recs: recs[:0]})
	}
}

// rampMission waits through its first steps and then sends at every one:
// a run of it foretells, from its first events, fewer than it makes, and
// its records grow again once in memory of their own.
func rampMission() *Mission {
	m := &Mission{ID: "ramp", Title: "Ramp", Goal: "Wait, then send.", Contract: ledger.V1, Retention: 100, KeySource: KeyPerIntent}
	for i := range 10 {
		m.Intents = append(m.Intents, Intent{ID: fmt.Sprintf("r%d", i), Op: "refund", Principal: "agent", Payload: map[string]string{"order": fmt.Sprint(i)}})
	}
	for range 4500 {
		m.Schedule = append(m.Schedule, Step{Wait: 1})
	}
	// Every fixture but success: the naive caller sends at every turn.
	faults := slices.DeleteFunc(slices.Clone(Fixtures), func(f Fixture) bool { return f == Success })
	for i := range 4000 {
		st := Step{Attempt: m.Intents[i%10].ID, Fixture: faults[(i/10)%len(faults)]}
		switch st.Fixture {
		case LateCommit:
			st.Delay = 3
		case PendingFixture:
			st.Delay, st.Resolve = 3, ledger.Succeeded
		}
		m.Schedule = append(m.Schedule, st)
	}
	return m
}

// A run whose records grow more than once, on memory other runs freed
// (poisoned first), reads as the same run on fresh memory, and so do the
// cases kept from it at every growth.
func TestRecordsGrowAgainOnFreedMemory(t *testing.T) {
	m := rampMission()
	s := m.Settings(Overrides{StableKeys: ptr(false)})
	fresh := func() *Runner {
		r, err := NewRunner(m, s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Fresh memory: nothing kept for the next long runs.
	for {
		if _, ok := takeFree(0); !ok {
			break
		}
	}
	r := fresh()
	r.Seek(r.Steps())
	want := r.Case().Events
	if len(want) < 3*longRun {
		t.Fatalf("the ramp makes %d events, too few to grow twice", len(want))
	}
	// Memory other long runs freed, poisoned.
	for range 3 {
		other := fresh()
		other.Seek(other.Steps())
	}
	settle()
	poison()
	r = fresh()
	var kept []*Case
	for r.Step() {
		if r.Position()%1500 == 0 {
			kept = append(kept, r.Logged())
		}
	}
	if got := r.Case().Events; !reflect.DeepEqual(got, want) {
		t.Fatal("a run on freed memory reads other than one on fresh memory")
	}
	for _, c := range kept {
		if got := c.Whole().Events; !reflect.DeepEqual(got, want[:len(got)]) {
			t.Fatalf("a case kept at %d events reads other than the run did", len(got))
		}
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
