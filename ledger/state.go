package ledger

// State copies: snapshots, marks to rewind to, clones and batches of
// ledgers, and the state written out byte for byte for the explorer.

import "fmt"

// CopyFrom makes l a copy of src, reusing the memory l has grown: a driver
// that branches often (the explorer) copies without allocating.
func (l *Ledger) CopyFrom(src *Ledger) {
	l.cfg, l.now = src.cfg, src.now
	l.objects = append(l.unshared()[:0], src.objects...)
	l.records = append(l.records[:0], src.records...)
	l.late = append(l.late[:0], src.late...)
	l.queue = append(l.queue[:0], src.queue...)
	l.near, l.mask = append(l.near[:0], src.near...), src.mask
	l.compactDue = src.compactDue
	l.dead, l.inFlight, l.pending, l.failed = src.dead, src.inFlight, src.pending, src.failed
	l.indexed = src.indexed
	if src.indexed {
		if l.index == nil {
			l.index = make(map[string]int, len(src.index))
		}
		clear(l.index)
		for k, v := range src.index {
			l.index[k] = v
		}
	}
}

// Batch returns n empty ledgers under cfg whose memory comes from a few
// shared allocations, each with room for that many objects, records and
// queued entries before it grows on its own: for a driver that keeps many
// ledgers at once (the explorer's states). The configuration is not
// checked; it is a New ledger's.
func Batch(cfg Config, n, room int) []*Ledger {
	ls := make([]Ledger, n)
	objs := make([]Object, n*room)
	recs := make([]Record, n*room)
	dues := make([]due, 3*n*room)
	out := make([]*Ledger, n)
	for i := range ls {
		l := &ls[i]
		l.cfg = cfg
		o, d := i*room, 3*i*room
		l.objects = objs[o : o : o+room]
		l.records = recs[o : o : o+room]
		l.queue = dues[d : d : d+room]
		l.near = dues[d+room : d+room : d+2*room]
		l.batch = dues[d+2*room : d+2*room : d+3*room]
		out[i] = l
	}
	return out
}

// Clone returns an independent copy of the ledger.
func (l *Ledger) Clone() *Ledger {
	c := &Ledger{}
	c.CopyFrom(l)
	return c
}

// Mark is a ledger's state at one moment, to go back to with Rewind: what
// a driver that replays a long run keeps every so often. A ledger only
// appends objects, and changes in place only pending ones, so a mark
// shares the objects with the ledger and copies the pending ones; the
// rest it copies whole, and it is small.
type Mark struct {
	state   Ledger
	objects []Object
	pending []Object
}

// Mark returns the ledger's state now, to Rewind to.
func (l *Ledger) Mark() *Mark {
	m := &Mark{objects: l.objects[:len(l.objects):len(l.objects)]}
	if l.pending > 0 {
		for _, o := range l.objects {
			if o.Status == Pending {
				m.pending = append(m.pending, o)
			}
		}
	}
	objects := l.objects
	l.objects = nil
	m.state.CopyFrom(l)
	l.objects = objects
	l.shared = max(l.shared, len(l.objects))
	return m
}

// Rewind puts the ledger back in the state m holds. The objects since
// are dropped and the pending ones put back, in memory of the ledger's
// own: the memory m shares stays as m holds it.
func (l *Ledger) Rewind(m *Mark) {
	// Room for as many objects as the ledger held: a driver that
	// rewinds mostly replays to where it was.
	room := max(len(l.objects), len(m.objects))
	l.CopyFrom(&m.state)
	l.objects = append(make([]Object, 0, room), m.objects...)
	for _, o := range m.pending {
		l.objects[o.ID-1] = o
	}
	l.shared = 0
}

// unshared is the objects' memory, or, where a mark shares it, none: what
// the ledger may write over from the start.
func (l *Ledger) unshared() []Object {
	if l.shared > 0 {
		l.shared = 0
		return []Object{}
	}
	return l.objects
}

// Snapshot is a copy of the ledger's whole state, safe to keep, to export
// and to Restore: pending objects with the status they will reach, saved
// responses with their partial mark, and requests still executing.
type Snapshot struct {
	Tick int `json:"tick"`
	// Effects counts the objects that did not end failed.
	Effects int      `json:"effects"`
	Objects []Object `json:"objects"`
	Records []Record `json:"records"`
	// InFlight lists the requests still executing, in the order they began.
	InFlight []InFlight `json:"in_flight,omitempty"`
}

// Snapshot copies the ledger's state; records in the order they were saved.
func (l *Ledger) Snapshot() Snapshot {
	return Snapshot{
		Tick:     l.now,
		Effects:  l.Effects(),
		Objects:  append([]Object{}, l.objects...),
		Records:  l.liveRecords(true),
		InFlight: l.inFlightRequests(),
	}
}

// Kept is a Snapshot for a driver that keeps a long run's state and only
// reads it: where no object is pending, it shares the objects rather than
// copying them, as a Mark does, and the ledger never writes over them.
// It must not be changed.
func (l *Ledger) Kept() Snapshot {
	if l.pending > 0 {
		return l.Snapshot()
	}
	s := l.View()
	s.Records = l.liveRecords(true)
	l.shared = max(l.shared, len(l.objects))
	return s
}

// View is a Snapshot that shares the ledger's objects (and its records,
// when none is a tombstone) instead of copying them: for a driver that
// reads the state and lets it go before the ledger moves on. A View must
// not be changed, and is stale once the ledger changes.
func (l *Ledger) View() Snapshot {
	return Snapshot{
		Tick:     l.now,
		Effects:  l.Effects(),
		Objects:  l.objects[:len(l.objects):len(l.objects)],
		Records:  l.liveRecords(false),
		InFlight: l.inFlightRequests(),
	}
}

// liveRecords lists the records that are not tombstones, in the order they
// were saved: a copy, or, where it can be and copy is false, the ledger's
// own slice.
func (l *Ledger) liveRecords(copied bool) []Record {
	if !copied && l.dead == 0 {
		return l.records[:len(l.records):len(l.records)]
	}
	out := make([]Record, 0, len(l.records)-l.dead)
	for _, r := range l.records {
		if r.State != 0 {
			out = append(out, r)
		}
	}
	return out
}

// inFlightRequests lists the requests still executing, in the order they
// began.
func (l *Ledger) inFlightRequests() []InFlight {
	var out []InFlight
	for _, lc := range l.late {
		if !lc.done {
			out = append(out, InFlight{At: lc.at, Request: lc.req, Refund: lc.refund})
		}
	}
	return out
}

// ObjectStatus is the status of object id, or 0 when there is none.
func (l *Ledger) ObjectStatus(id ObjectID) Status {
	if id < 1 || int(id) > len(l.objects) {
		return 0
	}
	return l.objects[id-1].Status
}

// Restore replaces the ledger's state with a snapshot's, keeping its
// configuration. A snapshot that no ledger could have reached is refused
// and the ledger is left as it was.
func (l *Ledger) Restore(s Snapshot) error {
	if err := s.check(); err != nil {
		return err
	}
	n := &Ledger{cfg: l.cfg, now: s.Tick}
	n.objects = append(make([]Object, 0, len(s.Objects)), s.Objects...)
	n.records = append(make([]Record, 0, len(s.Records)), s.Records...)
	n.reindex()
	for _, o := range n.objects {
		switch o.Status {
		case Pending:
			n.pending++
		case Failed, Canceled:
			n.failed++
		}
	}
	for _, f := range s.InFlight {
		n.late = append(n.late, lateCommit{at: f.At, req: f.Request, refund: f.Refund})
	}
	n.inFlight = len(n.late)
	n.rebuildQueue()
	*l = *n
	return nil
}

func (s Snapshot) check() error {
	if s.Tick < 0 {
		return fmt.Errorf("snapshot tick %d: must be 0 or more", s.Tick)
	}
	for i, o := range s.Objects {
		switch {
		case o.ID != ObjectID(i+1):
			return fmt.Errorf("snapshot object %d has id %s: ids run re_0001, re_0002, … in order", i+1, o.ID)
		case o.Status == 0:
			return fmt.Errorf("snapshot object %s has no status (accepted: pending, succeeded, failed, canceled)", o.ID)
		case o.Status == Pending && !o.ResolvesTo.Terminal():
			return fmt.Errorf("snapshot object %s is pending with no terminal status to reach (accepted: succeeded, failed)", o.ID)
		case o.Status != Pending && o.ResolvesTo != 0:
			return fmt.Errorf("snapshot object %s is %s yet still resolves to %s", o.ID, o.Status, o.ResolvesTo)
		case o.Status == Pending && o.ResolveAt <= s.Tick:
			return fmt.Errorf("snapshot object %s is still pending at tick %d, past its resolve_at %d: a ledger resolves it then", o.ID, s.Tick, o.ResolveAt)
		}
	}
	for _, f := range s.InFlight {
		if f.At <= s.Tick {
			return fmt.Errorf("snapshot request for %s is still in flight at tick %d, past the tick it commits at (%d)", f.Request.Intent, s.Tick, f.At)
		}
	}
	seen := make(map[string]bool, len(s.Records))
	for _, r := range s.Records {
		switch {
		case r.Key == "":
			return fmt.Errorf("snapshot record with no key")
		case seen[r.Key]:
			return fmt.Errorf("snapshot record key %q appears twice", r.Key)
		case r.State != RecordExecuting && !r.State.Kept():
			return fmt.Errorf("snapshot record %q has no state (accepted: executing, saved, failed)", r.Key)
		case r.Response.Object < 0 || int(r.Response.Object) > len(s.Objects):
			return fmt.Errorf("snapshot record %q names %s, which the snapshot does not hold", r.Key, r.Response.Object)
		case r.Partial && r.Response.Object == 0:
			return fmt.Errorf("snapshot record %q is partial but names no object", r.Key)
		case r.State.Kept() && r.ExpiresAt <= s.Tick:
			return fmt.Errorf("snapshot record %q is still saved at tick %d, past its expiry %d: a ledger prunes it then", r.Key, s.Tick, r.ExpiresAt)
		}
		seen[r.Key] = true
	}
	return nil
}

// AppendState appends a canonical encoding of the ledger's state to b: two
// ledgers with equal encodings behave the same from here on. Tombstones and
// the order of the due-time queue, which do not change what happens next,
// are left out.
func (l *Ledger) AppendState(b []byte) []byte {
	b = appendInt(b, l.now)
	b = appendInt(b, len(l.objects))
	for i := range l.objects {
		o := &l.objects[i]
		b = appendStr(b, o.Intent)
		b = appendStr(b, o.Key)
		b = appendStr(b, o.Digest)
		b = append(b, byte(o.Status), byte(o.ResolvesTo))
		b = appendInt(b, o.Tick)
		b = appendInt(b, o.ResolveAt)
		if o.Refund != nil {
			b = appendStr(b, o.Charge)
			b = appendInt(b, int(o.Amount))
		}
	}
	b = appendInt(b, len(l.records)-l.dead)
	for i := range l.records {
		r := &l.records[i]
		if r.State == 0 {
			continue
		}
		b = appendStr(b, r.Key)
		b = appendStr(b, r.Digest)
		b = append(b, byte(r.State), byte(r.Response.Status))
		if r.Partial {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = appendInt(b, r.Response.Code)
		b = appendInt(b, int(r.Response.Object))
		b = appendInt(b, r.ExpiresAt)
		if r.Response.Refused != NotRefused {
			b = append(b, byte(r.Response.Refused))
		}
	}
	b = appendInt(b, l.inFlight)
	for i := range l.late {
		lc := &l.late[i]
		if lc.done {
			continue
		}
		b = appendInt(b, lc.at)
		b = appendStr(b, lc.req.Intent)
		b = appendStr(b, lc.req.Key)
		b = appendStr(b, lc.req.Digest)
		if lc.refund != nil {
			b = appendStr(b, lc.refund.Charge)
			b = appendInt(b, int(lc.refund.Amount))
		}
	}
	return b
}

func appendInt(b []byte, v int) []byte {
	u := uint64(v)
	return append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24), byte(u>>32), byte(u>>40), byte(u>>48), byte(u>>56))
}

func appendStr(b []byte, s string) []byte {
	b = appendInt(b, len(s))
	return append(b, s...)
}
