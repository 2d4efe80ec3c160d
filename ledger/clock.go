package ledger

// The clock: what falls due (late commits landing, pending objects
// resolving, keys expiring), kept in a queue of due times, and Advance,
// which moves the virtual clock and does what falls due on the way.

import "math/bits"

// The kinds of due work, in the order the provider does them within a tick:
// late commits land, then pending objects resolve, then records expire.
const (
	dueCommit uint8 = iota
	dueResolve
	duePrune
)

// due is one thing the clock will make happen: at tick at, the late commit,
// the object or the record at index ref.
type due struct {
	at   int
	ref  int
	kind uint8
}

func (a due) before(b due) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.ref < b.ref
}

// requeuePrunes drops the queued expiries, whose positions compaction
// moved, and queues each saved record's anew. Late commits and pending
// objects keep their entries: their positions did not move. It costs
// what the queue and the records hold, not what the ledger ever made.
func (l *Ledger) requeuePrunes() {
	near := l.near[:0]
	l.mask = 0
	for _, d := range l.near {
		if d.kind != duePrune {
			near = append(near, d)
			l.mask |= 1 << (d.at % nearTicks)
		}
	}
	l.near = near
	q := l.queue
	l.queue = l.queue[:0]
	for _, d := range q {
		if d.kind != duePrune {
			l.pushHeap(d)
		}
	}
	// Into the heap, all of them: in near, the many falling due soon
	// would each be passed over at every tick until theirs.
	for i, r := range l.records {
		if r.State.Kept() {
			l.pushHeap(due{at: l.soonest(r.ExpiresAt), kind: duePrune, ref: i})
		}
	}
}

// rebuildQueue makes the due-time queue anew from the state. It runs
// between ticks, never while one is worked, so all work is due later.
func (l *Ledger) rebuildQueue() {
	l.clearNear()
	l.queue = l.queue[:0]
	for i, lc := range l.late {
		if !lc.done {
			l.push(due{at: l.soonest(lc.at), kind: dueCommit, ref: i})
		}
	}
	for i, o := range l.objects {
		if o.Status == Pending {
			l.push(due{at: l.soonest(o.ResolveAt), kind: dueResolve, ref: i})
		}
	}
	for i, r := range l.records {
		if r.State.Kept() {
			l.push(due{at: l.soonest(r.ExpiresAt), kind: duePrune, ref: i})
		}
	}
}

// nearTicks is how many ticks ahead near holds work; arity is the
// heap's, half as deep as a binary one.
const (
	nearTicks = 64
	arity     = 4
)

func (l *Ledger) clearNear() { l.near, l.mask = l.near[:0], 0 }

// nextNear is the first tick after now that near holds work for, if any.
func (l *Ledger) nextNear() (int, bool) {
	if l.mask == 0 {
		return 0, false
	}
	from := (l.now + 1) % nearTicks
	r := bits.RotateLeft64(l.mask, -from)
	return l.now + 1 + bits.TrailingZeros64(r), true
}

func (l *Ledger) push(d due) {
	if d.at-l.now <= nearTicks {
		l.near = append(l.near, d)
		l.mask |= 1 << (d.at % nearTicks)
		return
	}
	l.pushHeap(d)
}

// pushHeap queues d in the heap, however soon it falls due.
func (l *Ledger) pushHeap(d due) {
	l.queue = append(l.queue, d)
	q := l.queue
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / arity
		if !d.before(q[p]) {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = d
}

func (l *Ledger) pop() due {
	q := l.queue
	top := q[0]
	n := len(q) - 1
	last := q[n]
	q = q[:n]
	i := 0
	for {
		c := arity*i + 1
		if c >= n {
			break
		}
		best := c
		for k := c + 1; k < c+arity && k < n; k++ {
			if q[k].before(q[best]) {
				best = k
			}
		}
		if !q[best].before(last) {
			break
		}
		q[i] = q[best]
		i = best
	}
	if n > 0 {
		q[i] = last
	}
	l.queue = q
	return top
}

// Advance moves the clock forward by ticks and returns what the provider did
// on its own meanwhile, in order: within a tick, late commits land, pending
// objects reach their terminal state and expired records are pruned.
func (l *Ledger) Advance(ticks int) []Change { return l.AdvanceInto(nil, ticks) }

// AdvanceInto is Advance appending its changes to dst, for a driver that
// keeps dst to avoid allocating.
func (l *Ledger) AdvanceInto(dst []Change, ticks int) []Change {
	if ticks <= 0 {
		return dst
	}
	end := l.now + ticks
	for {
		// The next tick with work: near's first, or the heap's
		// earliest, whichever comes first.
		t, ok := l.nextNear()
		if len(l.queue) > 0 && (!ok || l.queue[0].at < t) {
			t, ok = l.queue[0].at, true
		}
		if !ok || t > end {
			break
		}
		l.now = t
		// The tick's work, in the provider's order: what near holds for it,
		// and what the heap holds for the same tick.
		batch := l.batch[:0]
		if bit := uint64(1) << (t % nearTicks); l.mask&bit != 0 {
			// Every entry of near within reach falls on one tick of
			// each residue, so the tick's entries are those on t.
			kept := l.near[:0]
			for _, d := range l.near {
				if d.at == t {
					batch = append(batch, d)
				} else {
					kept = append(kept, d)
				}
			}
			l.near = kept
			l.mask &^= bit
		}
		for len(l.queue) > 0 && l.queue[0].at == t {
			batch = append(batch, l.pop())
		}
		for i := 1; i < len(batch); i++ {
			for j := i; j > 0 && batch[j].before(batch[j-1]); j-- {
				batch[j], batch[j-1] = batch[j-1], batch[j]
			}
		}
		l.batch = batch
		for _, d := range batch {
			dst = l.work(dst, d)
		}
	}
	l.now = end
	if l.compactDue {
		l.compact()
		l.compactDue = false
	}
	return dst
}

// work does one thing the clock made due, at the current tick.
func (l *Ledger) work(dst []Change, d due) []Change {
	switch d.kind {
	case dueCommit:
		return l.landLate(dst, d.ref)
	case dueResolve:
		return l.resolve(dst, d.ref)
	}
	r := l.records[d.ref]
	if !r.State.Kept() || r.ExpiresAt > l.now {
		return dst // pruned on access, or its expiry moved
	}
	l.prune(d.ref)
	return append(dst, Change{Tick: l.now, Effects: l.Effects(), Kind: Pruned, Key: r.Key})
}

func (l *Ledger) landLate(dst []Change, i int) []Change {
	lc := &l.late[i]
	lc.done = true
	l.inFlight--
	id := l.commit(&lc.req, lc.refund)
	if !l.cfg.Profile.Keyless() && lc.req.Key != "" {
		if j, ok := l.lookup(lc.req.Key); ok && l.records[j].State == RecordExecuting {
			rec := &l.records[j]
			rec.State = RecordSaved
			rec.Response = Response{Code: CodeOK, Object: id, Status: Succeeded}
			rec.ExpiresAt = l.now + l.cfg.Retention
			l.push(due{at: rec.ExpiresAt, kind: duePrune, ref: j})
		}
	}
	dst = append(dst, Change{Tick: l.now, Effects: l.Effects(), Kind: LateCommit, Object: id, Key: lc.req.Key, Intent: lc.req.Intent, Status: Succeeded})
	if l.inFlight == 0 {
		// No commit is queued any more, so no index into late is kept.
		l.late = l.late[:0]
	}
	return dst
}

func (l *Ledger) resolve(dst []Change, i int) []Change {
	o := &l.objects[i]
	if o.Status != Pending {
		return dst // canceled before it resolved
	}
	o.Status, o.ResolvesTo = o.ResolvesTo, 0
	l.pending--
	if o.Status == Failed {
		l.failed++
	}
	return append(dst, Change{Tick: l.now, Effects: l.Effects(), Kind: Resolved, Object: o.ID, Key: o.Key, Intent: o.Intent, Status: o.Status})
}
