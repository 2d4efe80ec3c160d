// Package ledger is the simulated provider: a sequential, in-memory record of
// effects (committed mutations) and idempotency records, governed by a
// provider contract.
//
// The ledger is pure. It never reads a clock, touches a file or starts a
// goroutine: the driver hands it requests with Submit and moves its virtual
// clock with Advance, and it answers with what it did.
package ledger

// The rules: Submit, how a request meets the contract and the
// idempotency records, what it commits, and the records kept and pruned.

import (
	"slices"
)

// Ledger is the provider's sequential in-memory state.
//
// The clock costs what changes, not what exists: every late commit,
// pending object and saved record's expiry waits in a due-time queue, so
// Advance only looks at what falls due.
type Ledger struct {
	cfg     Config
	now     int
	objects []Object
	// records holds the idempotency records in the order they were first
	// saved; a pruned record stays as a tombstone (State 0) so that no
	// later record moves. index maps a live key to its position.
	records []Record
	// index maps a live key to its position once there are more than
	// smallIndex records; below that a scan is cheaper than a map, and a
	// copy of the ledger copies no map. A pruned key stays in the index
	// until the records are compacted, as its tombstone does: lookup
	// passes over it.
	index   map[string]int
	indexed bool
	dead    int
	// late holds the requests that went on executing, in the order they
	// began; a landed one keeps its place with done set.
	late     []lateCommit
	inFlight int
	pending  int
	// failed counts objects that ended failed or canceled: they were
	// created, but their mutation did not stand.
	failed int
	// The work the clock will make due: within nearTicks ticks in near,
	// unordered, with mask marking the ticks (modulo nearTicks) it falls
	// on; later in queue, a 4-ary heap. Work due soon, which most changes
	// are, costs the same however much waits further off.
	near  []due
	mask  uint64
	queue []due
	batch []due
	// compactDue: tombstones outnumber the living records; the records
	// are compacted once the tick being worked is done.
	compactDue bool
	// shared is how many objects at the front of the objects' memory a
	// Mark shares: the ledger writes no more there, but to a pending
	// object (which a mark keeps a copy of), and writes anything else in
	// memory of its own.
	shared int
}

type lateCommit struct {
	at     int
	req    Request
	refund *Refund
	done   bool
}

// New returns an empty ledger at tick 0.
func New(cfg Config) (*Ledger, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.rules = rulesOf(cfg.Profile)
	// Room for a typical mission's handful of attempts, so the first ones
	// do not pay for growing.
	const room = 8
	return &Ledger{
		cfg:     cfg,
		objects: make([]Object, 0, room),
		records: make([]Record, 0, room),
		queue:   make([]due, 0, room),
	}, nil
}

// Reset empties the ledger and rewinds its clock to tick 0, keeping the
// memory it has grown, so a driver that replays many runs against one
// ledger does not allocate again; where a Mark or a Kept state shares
// the objects' memory, the objects take memory of their own instead.
// Snapshots taken earlier stay valid.
func (l *Ledger) Reset() {
	l.now = 0
	l.objects = l.unshared()[:0]
	l.records = l.records[:0]
	l.late = l.late[:0]
	l.clearNear()
	l.queue = l.queue[:0]
	l.compactDue = false
	l.dead, l.inFlight, l.pending, l.failed = 0, 0, 0, 0
	l.indexed = false
	clear(l.index)
}

// smallIndex is the most records the ledger finds a key among by a scan.
const smallIndex = 16

// lookup finds the live record for key.
func (l *Ledger) lookup(key string) (int, bool) {
	if l.indexed {
		i, ok := l.index[key]
		return i, ok && l.records[i].State != 0
	}
	for i := range l.records {
		if l.records[i].State != 0 && l.records[i].Key == key {
			return i, true
		}
	}
	return 0, false
}

// Record is the live idempotency record saved under key, if there is one:
// for a driver that keeps a durable copy of what a request changed.
func (l *Ledger) Record(key string) (Record, bool) {
	if key == "" {
		return Record{}, false
	}
	i, ok := l.lookup(key)
	if !ok {
		return Record{}, false
	}
	return l.records[i], true
}

// reindex builds the key index, once there are records enough to need it.
func (l *Ledger) reindex() {
	if len(l.records) <= smallIndex {
		l.indexed = false
		return
	}
	if l.index == nil {
		l.index = make(map[string]int, len(l.records))
	}
	clear(l.index)
	for i, r := range l.records {
		if r.State != 0 {
			l.index[r.Key] = i
		}
	}
	l.indexed = true
}

// Config returns the ledger's configuration.
func (l *Ledger) Config() Config { return l.cfg }

// Now is the ledger's current tick.
func (l *Ledger) Now() int { return l.now }

// Effects is the number of committed effects that stand: every object
// created, less those that ended failed or canceled (their mutation never
// took hold). A pending object counts: it may yet succeed.
func (l *Ledger) Effects() int { return len(l.objects) - l.failed }

// Busy reports whether anything is still in motion: a request executing
// past its caller's patience, or an object not yet in a terminal state.
func (l *Ledger) Busy() bool { return l.inFlight > 0 || l.pending > 0 }

// Objects is how many objects the provider has created.
func (l *Ledger) Objects() int { return len(l.objects) }

// Object returns the object with the given id.
func (l *Ledger) Object(id ObjectID) (Object, bool) {
	if id < 1 || int(id) > len(l.objects) {
		return Object{}, false
	}
	return l.objects[id-1], true
}

// Find returns the objects whose metadata links them to intent, oldest
// first: the caller's read-back.
func (l *Ledger) Find(intent string) []Object { return l.FindInto(nil, intent) }

// FindInto appends the objects linked to intent to dst, oldest first, and
// returns it: Find without allocating, for a driver that keeps dst.
func (l *Ledger) FindInto(dst []Object, intent string) []Object {
	for _, o := range l.objects {
		if o.Intent == intent {
			dst = append(dst, o)
		}
	}
	return dst
}

// Submit handles one request that reached the provider at the current
// tick, by the rules of the profile: whether the key is looked at at all
// (saves), what a kept key answers (a final key, other parameters, a
// request still executing, a finished one: replay), and, for a request no
// kept answer settles, what executing it commits and keeps.
func (l *Ledger) Submit(req Request, ex Execution) Result {
	if l.compactDue {
		l.compact()
		l.compactDue = false
	}
	r := &l.cfg.rules
	if req.Key == "" || !r.keyed {
		if req.Key == "" && r.required {
			p := l.cfg.Profile
			return Result{Action: KeyRequired, Response: Response{Code: p.Key.Missing.Status, Refused: RefusedKeyRequired}}
		}
		return l.execute(&req, ex, false)
	}
	i, ok := l.lookup(req.Key)
	if ok && l.records[i].ExpiresAt <= l.now {
		l.prune(i)
		ok = false
	}
	if !ok {
		return l.execute(&req, ex, true)
	}
	rec := &l.records[i]
	if rec.State != RecordSaved {
		return l.unsaved(&req, ex, rec)
	}
	if rec.Digest != req.Digest {
		if p := l.cfg.Profile; p.Mismatch != nil {
			return Result{Action: Mismatch, Response: Response{Code: p.Mismatch.Status}}
		}
	}
	if r.complete && rec.Partial {
		// The partial work is finished instead of the error replayed.
		o := l.objects[rec.Response.Object-1]
		rec.Response = Response{Code: CodeOK, Object: o.ID, Status: o.Status}
		rec.Partial = false
		return Result{Action: Completed, Response: rec.Response}
	}
	resp := rec.Response
	switch {
	case resp.Object == 0:
	case r.complete:
		// The updated response: the object's status as it is now.
		resp.Status = l.objects[resp.Object-1].Status
	case r.current:
		// The object as it is now, whatever the first answer said.
		resp = Response{Code: CodeOK, Object: resp.Object, Status: l.objects[resp.Object-1].Status}
	}
	return Result{Action: Replayed, Response: resp}
}

// unsaved answers a request whose key holds no saved answer: a final key
// refuses it; a key still executing refuses other parameters, then the
// repeat itself (the in-flight answer), or lets it run too.
func (l *Ledger) unsaved(req *Request, ex Execution, rec *Record) Result {
	p := l.cfg.Profile
	if rec.State == RecordFailed {
		return Result{Action: KeyFailed, Response: Response{Code: p.FailedKey.Status, Refused: RefusedKeyFailed}}
	}
	if rec.Digest != req.Digest && p.Mismatch != nil {
		return Result{Action: Mismatch, Response: Response{Code: p.Mismatch.Status}}
	}
	if p.InFlight == nil {
		// No guard: the repeat runs as well; the key stays the first's.
		return l.execute(req, ex, false)
	}
	return Result{Action: Conflict, Response: Response{Code: p.InFlight.Status}}
}

// execute runs a request no kept answer settles. With save, the key is
// known to be absent from the index, and what the profile keeps of the
// answer is kept under it.
func (l *Ledger) execute(req *Request, ex Execution, save bool) Result {
	switch ex.Kind {
	case Reject:
		if save && l.cfg.rules.final {
			l.insert(Record{Key: req.Key, Digest: req.Digest, State: RecordFailed, Response: Response{Code: CodeBadRequest}})
		}
		return Result{Action: Rejected, Response: Response{Code: CodeBadRequest}}
	case CommitLater:
		if ex.Refund != nil && l.overLimit(ex.Refund) {
			return l.limited(req, save)
		}
		l.late = append(l.late, lateCommit{at: l.now + ex.Delay, req: *req, refund: ex.Refund})
		l.inFlight++
		l.push(due{at: l.soonest(l.now + ex.Delay), kind: dueCommit, ref: len(l.late) - 1})
		if save {
			l.insert(Record{Key: req.Key, Digest: req.Digest, State: RecordExecuting})
		}
		return Result{Action: Executing}
	}
	if ex.Refund != nil && l.overLimit(ex.Refund) {
		return l.limited(req, save)
	}
	id := l.commit(req, ex.Refund)
	resp := Response{Code: CodeOK, Object: id, Status: Succeeded}
	partial := false
	switch ex.Kind {
	case CommitServerError:
		resp = Response{Code: CodeServerError, Object: id}
		partial = true
	case CommitPending:
		o := &l.objects[id-1]
		o.Status = Pending
		o.ResolveAt = l.now + ex.Delay
		o.ResolvesTo = ex.Terminal
		l.pending++
		l.push(due{at: l.soonest(o.ResolveAt), kind: dueResolve, ref: int(id) - 1})
		resp.Status = Pending
	}
	if save && l.cfg.rules.keeps(resp.Code) {
		l.insert(Record{Key: req.Key, Digest: req.Digest, State: RecordSaved, Response: resp, Partial: partial})
	}
	return Result{Action: Committed, Response: resp}
}

// overLimit reports whether the refund would take its charge past what
// was captured: the refunds that stand, those still executing and this
// one. A charge without a known capture has no limit.
func (l *Ledger) overLimit(ref *Refund) bool {
	if len(l.cfg.Captured) == 0 {
		return false
	}
	captured, ok := l.cfg.Captured[ref.Charge]
	if !ok {
		return false
	}
	taken := ref.Amount
	for i := range l.objects {
		if o := &l.objects[i]; o.Refund != nil && o.Charge == ref.Charge && o.Status.Stands() {
			taken += o.Amount
		}
	}
	for _, lc := range l.late {
		if !lc.done && lc.refund != nil && lc.refund.Charge == ref.Charge {
			taken += lc.refund.Amount
		}
	}
	return taken > captured
}

// limited is the refund limit's refusal: an answer of the executing
// endpoint (its balance check), kept as any other 4xx is, and, where
// failed keys are final, a failed attempt.
func (l *Ledger) limited(req *Request, save bool) Result {
	p := l.cfg.Profile
	resp := Response{Code: p.RefundLimit.Status, Refused: RefusedOverLimit}
	switch {
	case !save:
	case p.FailedKey != nil:
		l.insert(Record{Key: req.Key, Digest: req.Digest, State: RecordFailed, Response: resp})
	case l.cfg.rules.keeps(resp.Code):
		l.insert(Record{Key: req.Key, Digest: req.Digest, State: RecordSaved, Response: resp})
	}
	return Result{Action: OverLimit, Response: resp}
}

// soonest is the tick work due at t happens: never before the next tick.
func (l *Ledger) soonest(t int) int { return max(t, l.now+1) }

// commit records a new effect and returns its id.
func (l *Ledger) commit(req *Request, ref *Refund) ObjectID {
	id := ObjectID(len(l.objects) + 1)
	if len(l.objects) == cap(l.objects) {
		l.objects = doubled(l.objects)
	}
	l.objects = append(l.objects, Object{
		ID:      id,
		Intent:  req.Intent,
		Refund:  ref,
		Key:     req.Key,
		Digest:  req.Digest,
		Payload: req.Payload,
		Status:  Succeeded,
		Tick:    l.now,
	})
	return id
}

// Reserve makes room for n objects in all, so a driver that can foretell
// a long run's size (the runner does, from its steps so far) has the
// ledger grow its objects once rather than by doubling.
func (l *Ledger) Reserve(n int) {
	if n > cap(l.objects) {
		l.objects = slices.Grow(l.objects, n-len(l.objects))
	}
}

// doubled is s with room for as many again. Past a few hundred
// elements append grows a slice by a quarter at a time, so a ledger of
// ten thousand objects would be copied a dozen times over as it grew;
// doubling copies it once, all told.
func doubled[E any](s []E) []E { return slices.Grow(s, max(len(s), 8)) }

// insert adds a record for a key the index does not hold.
func (l *Ledger) insert(rec Record) {
	rec.ExpiresAt = l.now + l.cfg.Retention
	pos := len(l.records)
	if len(l.records) == cap(l.records) {
		l.records = doubled(l.records)
	}
	l.records = append(l.records, rec)
	switch {
	case l.indexed:
		l.index[rec.Key] = pos
	case len(l.records) > smallIndex:
		l.reindex()
	}
	if rec.State.Kept() {
		l.push(due{at: l.soonest(rec.ExpiresAt), kind: duePrune, ref: pos})
	}
}

// prune drops the record at position i. It leaves a tombstone, so no
// later record moves; once tombstones outnumber the living, the records
// are compacted, which costs what pruning saved. The index keeps the
// key until then, as the records keep its tombstone.
func (l *Ledger) prune(i int) {
	l.records[i] = Record{}
	l.dead++
	if l.dead > 32 && l.dead > len(l.records)/2 {
		l.compactDue = true
	}
}

// compact removes the tombstones and rebuilds what points into records.
func (l *Ledger) compact() {
	live := l.records[:0]
	for _, r := range l.records {
		if r.State != 0 {
			live = append(live, r)
		}
	}
	clear(l.records[len(live):])
	l.records, l.dead = live, 0
	l.reindex()
	l.requeuePrunes()
}

// Cancel ends a pending object before it resolves, at the current tick:
// the client's cancel, which Stripe offers for a refund not yet final. It
// reports false, changing nothing, for an object that is not pending. A
// canceled object is not an effect, and its saved response is left as it
// was: a replay shows the object as the contract shows it.
func (l *Ledger) Cancel(id ObjectID) bool {
	if id < 1 || int(id) > len(l.objects) || l.objects[id-1].Status != Pending {
		return false
	}
	o := &l.objects[id-1]
	o.Status, o.ResolvesTo, o.ResolveAt = Canceled, 0, l.now
	l.pending--
	l.failed++
	return true
}

// Amend replaces an object's payload: an update of what describes it
// (Stripe's metadata), which is neither an effect nor a change to what
// the object does. It reports false for an unknown object.
func (l *Ledger) Amend(id ObjectID, payload string) bool {
	if id < 1 || int(id) > len(l.objects) {
		return false
	}
	if int(id) <= l.shared {
		// A mark shares the object: the change goes to memory of the
		// ledger's own.
		l.objects = append([]Object(nil), l.objects...)
		l.shared = 0
	}
	l.objects[id-1].Payload = payload
	return true
}
