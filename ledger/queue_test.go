package ledger

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// ledgerOp is one generated driver move: a submit or a clock advance.
type ledgerOp struct {
	advance int
	req     Request
	ex      Execution
}

func genOps(t *rapid.T) []ledgerOp {
	// Few keys make repeats; many pass the size where the ledger starts
	// to index its records.
	keys := []string{""}
	for i := range rapid.SampledFrom([]int{4, 40}).Draw(t, "keys") {
		keys = append(keys, fmt.Sprintf("k%d", i+1))
	}
	digests := []string{"d1", "d2"}
	intents := []string{"a", "b"}
	n := rapid.IntRange(1, 200).Draw(t, "n")
	ops := make([]ledgerOp, n)
	for i := range ops {
		if rapid.IntRange(0, 3).Draw(t, "kind") == 0 {
			// Short and long moves: work due within near's reach
			// and beyond it, in the heap.
			ops[i].advance = rapid.OneOf(rapid.IntRange(1, 12), rapid.IntRange(50, 150)).Draw(t, "ticks")
			continue
		}
		ex := Execution{Kind: ExecKind(rapid.IntRange(int(Reject), int(CommitPending)).Draw(t, "exec"))}
		if ex.Kind == CommitLater || ex.Kind == CommitPending {
			ex.Delay = rapid.OneOf(rapid.IntRange(1, 15), rapid.IntRange(60, 130)).Draw(t, "delay")
		}
		if ex.Kind == CommitPending {
			ex.Terminal = rapid.SampledFrom([]Status{Succeeded, Failed}).Draw(t, "terminal")
		}
		ops[i].ex = ex
		ops[i].req = Request{
			Intent: rapid.SampledFrom(intents).Draw(t, "intent"),
			Key:    rapid.SampledFrom(keys).Draw(t, "key"),
			Digest: rapid.SampledFrom(digests).Draw(t, "digest"),
		}
	}
	return ops
}

func genConfig(t *rapid.T) Config {
	return Config{
		Profile:   rapid.SampledFrom(testProfiles).Draw(t, "profile"),
		Retention: rapid.OneOf(rapid.IntRange(1, 20), rapid.IntRange(60, 200)).Draw(t, "retention"),
	}
}

// refSnapshot is the reference ledger's state in Snapshot's shape.
func refSnapshot(r *refLedger) Snapshot {
	s := Snapshot{Tick: r.now, Effects: r.Effects(), Objects: append([]Object{}, r.objects...), Records: append([]Record{}, r.records...)}
	for _, lc := range r.late {
		s.InFlight = append(s.InFlight, InFlight{At: lc.at, Request: lc.req})
	}
	return s
}

// TestQueueAgreesWithReference: the due-time queue does, change for
// change, what the tick-by-tick ledger did, under every contract.
func TestQueueAgreesWithReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := genConfig(t)
		l, _ := New(cfg)
		r, _ := newRef(cfg)
		for i, op := range genOps(t) {
			if op.advance > 0 {
				got, want := l.Advance(op.advance), r.Advance(op.advance)
				if !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
					t.Fatalf("op %d advance %d: changes\n got %+v\nwant %+v", i, op.advance, got, want)
				}
			} else {
				got, want := l.Submit(op.req, op.ex), r.Submit(op.req, op.ex)
				if got != want {
					t.Fatalf("op %d submit %+v %+v: got %+v, want %+v", i, op.req, op.ex, got, want)
				}
			}
			if l.Busy() != r.Busy() || l.Effects() != r.Effects() {
				t.Fatalf("op %d: busy %v/%v effects %d/%d", i, l.Busy(), r.Busy(), l.Effects(), r.Effects())
			}
			if got, want := l.Snapshot(), refSnapshot(r); !reflect.DeepEqual(got, want) {
				t.Fatalf("op %d: snapshot\n got %+v\nwant %+v", i, got, want)
			}
		}
	})
}

// TestRestoreAndCloneContinue: a ledger restored from a snapshot, a clone
// and a CopyFrom into a used ledger each behave, from the point they were
// taken, exactly as the original does.
func TestRestoreAndCloneContinue(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := genConfig(t)
		ops := genOps(t)
		cut := rapid.IntRange(0, len(ops)).Draw(t, "cut")
		l, _ := New(cfg)
		for _, op := range ops[:cut] {
			apply(l, op)
		}
		restored, _ := New(cfg)
		restored.Submit(Request{Intent: "x", Key: "old", Digest: "d9"}, Execution{Kind: CommitLater, Delay: 3})
		if err := restored.Restore(l.Snapshot()); err != nil {
			t.Fatalf("restore: %v", err)
		}
		copied, _ := New(cfg)
		copied.Submit(Request{Intent: "x", Key: "old", Digest: "d9"}, Execution{Kind: CommitPending, Delay: 2, Terminal: Failed})
		copied.CopyFrom(l)
		others := map[string]*Ledger{"restored": restored, "clone": l.Clone(), "copied": copied}
		if !bytes.Equal(restored.AppendState(nil), l.AppendState(nil)) {
			t.Fatalf("restored state encodes differently")
		}
		for _, op := range ops[cut:] {
			want := apply(l, op)
			for name, o := range others {
				if got := apply(o, op); got != want {
					t.Fatalf("%s after %+v: %s, original %s", name, op, got, want)
				}
			}
		}
		for name, o := range others {
			if !reflect.DeepEqual(o.Snapshot(), l.Snapshot()) {
				t.Fatalf("%s ends\n%+v\noriginal\n%+v", name, o.Snapshot(), l.Snapshot())
			}
		}
	})
}

func apply(l *Ledger, op ledgerOp) string {
	if op.advance > 0 {
		return fmt.Sprintf("%+v", l.Advance(op.advance))
	}
	return fmt.Sprintf("%+v", l.Submit(op.req, op.ex))
}

// TestRestoreRefusesImpossible names what is wrong with a snapshot no
// ledger could reach, and leaves the ledger as it was.
func TestRestoreRefusesImpossible(t *testing.T) {
	good := Snapshot{Objects: []Object{{ID: 1, Intent: "a", Status: Succeeded}}}
	tests := []struct {
		name string
		edit func(*Snapshot)
		want string
	}{
		{"ids out of order", func(s *Snapshot) { s.Objects[0].ID = 2 }, "ids run re_0001"},
		{"pending with nowhere to go", func(s *Snapshot) { s.Objects[0].Status = Pending }, "no terminal status"},
		{"no status", func(s *Snapshot) { s.Objects[0].Status = 0 }, "has no status"},
		{"a key twice", func(s *Snapshot) {
			s.Records = []Record{{Key: "k", State: RecordSaved, ExpiresAt: 9}, {Key: "k", State: RecordSaved, ExpiresAt: 9}}
		}, "appears twice"},
		{"an object not held", func(s *Snapshot) {
			s.Records = []Record{{Key: "k", State: RecordSaved, ExpiresAt: 9, Response: Response{Object: 7}}}
		}, "does not hold"},
		{"negative tick", func(s *Snapshot) { s.Tick = -1 }, "tick -1"},
		{"pending past its tick", func(s *Snapshot) {
			s.Tick = 5
			s.Objects[0].Status, s.Objects[0].ResolveAt, s.Objects[0].ResolvesTo = Pending, 3, Succeeded
		}, "past its resolve_at 3"},
		{"in flight past its tick", func(s *Snapshot) {
			s.Tick = 5
			s.InFlight = []InFlight{{At: 5, Request: Request{Intent: "a", Key: "k", Digest: "d"}}}
		}, "past the tick it commits at (5)"},
		{"saved past its expiry", func(s *Snapshot) {
			s.Tick = 9
			s.Records = []Record{{Key: "k", State: RecordSaved, ExpiresAt: 9}}
		}, "past its expiry 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good
			s.Objects = append([]Object{}, good.Objects...)
			tt.edit(&s)
			l, _ := New(Config{Profile: testV1, Retention: 5})
			l.Submit(Request{Intent: "z", Key: "kz", Digest: "d"}, Execution{Kind: Commit})
			before := l.Snapshot()
			err := l.Restore(s)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tt.want)) {
				t.Fatalf("Restore: %v, want an error with %q", err, tt.want)
			}
			if !reflect.DeepEqual(l.Snapshot(), before) {
				t.Error("a refused restore changed the ledger")
			}
		})
	}
}

// TestPruneKeepsLaterRecordsInPlace: pruning many records, interleaved
// with new ones, keeps the saved order and every live key reachable, and
// compacts its tombstones.
func TestPruneKeepsLaterRecordsInPlace(t *testing.T) {
	l, _ := New(Config{Profile: testV1, Retention: 3})
	for i := range 200 {
		l.Submit(Request{Intent: "a", Key: fmt.Sprintf("k%d", i), Digest: "d"}, Execution{Kind: Commit})
		l.Advance(1)
	}
	snap := l.Snapshot()
	if len(snap.Records) != 2 || snap.Records[0].Key != "k198" || snap.Records[1].Key != "k199" {
		t.Fatalf("records after 200 sends with retention 3: %+v", snap.Records)
	}
	if len(l.records) > 2*len(snap.Records)+33 {
		t.Errorf("%d slots hold %d live records: tombstones were never compacted", len(l.records), len(snap.Records))
	}
	if res := l.Submit(Request{Intent: "a", Key: "k199", Digest: "d"}, Execution{Kind: Commit}); res.Action != Replayed {
		t.Errorf("k199 after compaction: %s, want replayed", res.Action)
	}
}

// A mark brings the ledger back to the moment it was taken, and the
// ledger then behaves as a copy taken at that moment would; however the
// ledger moved in between (other submits, amends, cancels, a reset,
// rewinds to other marks) and whichever marks it went back to before. A
// state Kept reads as it did, however the ledger moved since.
func TestMarkAndRewind(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := genConfig(t)
		ops := genOps(t)
		l, _ := New(cfg)
		type kept struct {
			m     *Mark
			snap  Snapshot
			state []byte
			clone *Ledger
		}
		var marks []kept
		// views are states kept by Kept, each beside a copy taken with it.
		var views [][2]Snapshot
		// twin is a copy that makes every move l makes since its last
		// rewind (or from the start), for l's answers to be checked by.
		twin := l.Clone()
		both := func(what string, f func(*Ledger) string) {
			if got, want := f(l), f(twin); got != want {
				t.Fatalf("%s: %s, a copy %s", what, got, want)
			}
		}
		for _, op := range ops {
			switch rapid.IntRange(0, 12).Draw(t, "move") {
			case 0:
				marks = append(marks, kept{l.Mark(), l.Snapshot(), l.AppendState(nil), l.Clone()})
			case 12:
				views = append(views, [2]Snapshot{l.Kept(), l.Snapshot()})
			case 1:
				if len(marks) == 0 {
					continue
				}
				k := marks[rapid.IntRange(0, len(marks)-1).Draw(t, "mark")]
				l.Rewind(k.m)
				if got := l.Snapshot(); !reflect.DeepEqual(got, k.snap) {
					t.Fatalf("rewound to\n%+v\nmarked\n%+v", got, k.snap)
				}
				if !bytes.Equal(l.AppendState(nil), k.state) {
					t.Fatalf("rewound state encodes other than the marked one")
				}
				twin = k.clone.Clone()
			case 2, 3:
				if n := len(l.objects); n > 0 {
					id := ObjectID(rapid.IntRange(1, n).Draw(t, "object"))
					payload := fmt.Sprintf("amended %d", rapid.IntRange(0, 9).Draw(t, "payload"))
					both("amend", func(x *Ledger) string { return fmt.Sprint(x.Amend(id, payload)) })
				}
			case 4:
				if n := len(l.objects); n > 0 {
					id := ObjectID(rapid.IntRange(1, n).Draw(t, "object"))
					both("cancel", func(x *Ledger) string { return fmt.Sprint(x.Cancel(id)) })
				}
			case 5:
				if rapid.IntRange(0, 5).Draw(t, "reset") == 0 {
					l.Reset()
					twin.Reset()
				}
			default:
				both(fmt.Sprintf("%+v", op), func(x *Ledger) string { return apply(x, op) })
			}
		}
		if !reflect.DeepEqual(l.Snapshot(), twin.Snapshot()) {
			t.Fatalf("ends\n%+v\na copy\n%+v", l.Snapshot(), twin.Snapshot())
		}
		// Every state kept still reads as it did.
		for _, v := range views {
			// Printed: an empty list reads the same, made or not.
			if fmt.Sprintf("%+v", v[0]) != fmt.Sprintf("%+v", v[1]) {
				t.Fatalf("a state kept reads\n%+v\nwhere it read\n%+v", v[0], v[1])
			}
		}
		// Every mark still holds its moment.
		for _, k := range marks {
			l.Rewind(k.m)
			if got := l.Snapshot(); !reflect.DeepEqual(got, k.snap) {
				t.Fatalf("rewound at the end to\n%+v\nmarked\n%+v", got, k.snap)
			}
		}
	})
}
