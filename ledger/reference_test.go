package ledger

// refLedger is the ledger as it was before the due-time queue: every tick
// looks at every object and record, and a prune re-indexes the later
// records. It is kept as the reference the queue must agree with.

type refLate struct {
	at  int
	req Request
}

// Ledger is the provider's sequential in-memory state.
type refLedger struct {
	cfg     Config
	now     int
	objects []Object
	// records holds the idempotency records in the order they were first
	// saved; index maps a key to its position. A small map value keeps an
	// attempt cheap: lookups and growth move an int, not a Record.
	records []Record
	index   map[string]int
	late    []refLate
	// failed counts objects that reached the terminal state failed: they
	// were created, but their mutation did not stand.
	failed int
}

// New returns an empty ledger at tick 0.
func newRef(cfg Config) (*refLedger, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// Room for a typical mission's handful of attempts, so the first ones
	// do not pay for growing.
	const room = 8
	return &refLedger{
		cfg:     cfg,
		objects: make([]Object, 0, room),
		records: make([]Record, 0, room),
		index:   make(map[string]int, room),
	}, nil
}

// Reset empties the ledger and rewinds its clock to tick 0, keeping the
// memory it has grown, so a driver that replays many runs against one
// ledger does not allocate again. Snapshots taken earlier stay valid.
func (l *refLedger) Reset() {
	l.now = 0
	l.objects = l.objects[:0]
	l.records = l.records[:0]
	l.late = l.late[:0]
	l.failed = 0
	clear(l.index)
}

// Config returns the ledger's configuration.
func (l *refLedger) Config() Config { return l.cfg }

// Now is the ledger's current tick.
func (l *refLedger) Now() int { return l.now }

// Effects is the number of committed effects that stand: every object
// created, less those that reached the terminal state failed (their
// mutation never took hold). A pending object counts: it may yet succeed.
func (l *refLedger) Effects() int { return len(l.objects) - l.failed }

// Busy reports whether anything is still in motion: a request executing
// past its caller's patience, or an object not yet in a terminal state.
func (l *refLedger) Busy() bool {
	if len(l.late) > 0 {
		return true
	}
	for _, o := range l.objects {
		if o.Status == Pending {
			return true
		}
	}
	return false
}

// Object returns the object with the given id.
func (l *refLedger) Object(id ObjectID) (Object, bool) {
	if id < 1 || int(id) > len(l.objects) {
		return Object{}, false
	}
	return l.objects[id-1], true
}

// Find returns the objects whose metadata links them to intent, oldest
// first: the caller's read-back.
func (l *refLedger) Find(intent string) []Object {
	var out []Object
	for _, o := range l.objects {
		if o.Intent == intent {
			out = append(out, o)
		}
	}
	return out
}

// Submit handles one request that reached the provider at the current tick.
func (l *refLedger) Submit(req Request, ex Execution) Result {
	if l.cfg.Profile.Keyless() || req.Key == "" {
		return l.execute(&req, ex, false)
	}
	i, ok := l.index[req.Key]
	if ok && l.records[i].ExpiresAt <= l.now {
		l.prune(req.Key)
		ok = false
	}
	if !ok {
		return l.execute(&req, ex, true)
	}
	rec := &l.records[i]
	if rec.Digest != req.Digest {
		return Result{Action: Mismatch, Response: Response{Code: CodeMismatch}}
	}
	if rec.State == RecordExecuting {
		return Result{Action: Conflict, Response: Response{Code: CodeConflict}}
	}
	if l.cfg.Profile.Replay == ReplayComplete && rec.Partial {
		// v2 finishes the partial work instead of replaying the error.
		o := l.objects[rec.Response.Object-1]
		rec.Response = Response{Code: CodeOK, Object: o.ID, Status: o.Status}
		rec.Partial = false
		return Result{Action: Completed, Response: rec.Response}
	}
	resp := rec.Response
	if l.cfg.Profile.Replay == ReplayComplete && resp.Object != 0 {
		// v2 returns the updated response, with the object as it is now.
		resp.Status = l.objects[resp.Object-1].Status
	}
	return Result{Action: Replayed, Response: resp}
}

// execute runs a request no saved record answers. With save, the key is
// known to be absent from the index, and the request's record is added.
func (l *refLedger) execute(req *Request, ex Execution, save bool) Result {
	switch ex.Kind {
	case Reject:
		return Result{Action: Rejected, Response: Response{Code: CodeBadRequest}}
	case CommitLater:
		l.late = append(l.late, refLate{at: l.now + ex.Delay, req: *req})
		if save {
			l.insert(Record{Key: req.Key, Digest: req.Digest, State: RecordExecuting})
		}
		return Result{Action: Executing}
	}
	id := l.commit(req)
	resp := Response{Code: CodeOK, Object: id, Status: Succeeded}
	partial := false
	switch ex.Kind {
	case CommitServerError:
		resp = Response{Code: CodeServerError, Object: id}
		partial = true
	case CommitPending:
		p := &l.objects[id-1]
		p.Status = Pending
		p.ResolveAt = l.now + ex.Delay
		p.ResolvesTo = ex.Terminal
		resp.Status = Pending
	}
	if save {
		l.insert(Record{Key: req.Key, Digest: req.Digest, State: RecordSaved, Response: resp, Partial: partial})
	}
	return Result{Action: Committed, Response: resp}
}

// commit records a new effect and returns its id.
func (l *refLedger) commit(req *Request) ObjectID {
	id := ObjectID(len(l.objects) + 1)
	l.objects = append(l.objects, Object{
		ID:      id,
		Intent:  req.Intent,
		Key:     req.Key,
		Digest:  req.Digest,
		Payload: req.Payload,
		Status:  Succeeded,
		Tick:    l.now,
	})
	return id
}

// insert adds a record for a key the index does not hold.
func (l *refLedger) insert(rec Record) {
	rec.ExpiresAt = l.now + l.cfg.Retention
	l.index[rec.Key] = len(l.records)
	l.records = append(l.records, rec)
}

func (l *refLedger) prune(key string) {
	i, ok := l.index[key]
	if !ok {
		return
	}
	delete(l.index, key)
	l.records = append(l.records[:i], l.records[i+1:]...)
	for j := i; j < len(l.records); j++ {
		l.index[l.records[j].Key] = j
	}
}

// Advance moves the clock forward by ticks and returns what the provider did
// on its own meanwhile, in order: late commits land, pending objects reach
// their terminal state and expired records are pruned.
func (l *refLedger) Advance(ticks int) []Change {
	var changes []Change
	for range ticks {
		l.now++
		changes = l.settle(changes)
	}
	return changes
}

func (l *refLedger) settle(changes []Change) []Change {
	kept := l.late[:0]
	for _, lc := range l.late {
		if lc.at > l.now {
			kept = append(kept, lc)
			continue
		}
		id := l.commit(&lc.req)
		if !l.cfg.Profile.Keyless() && lc.req.Key != "" {
			if i, ok := l.index[lc.req.Key]; ok && l.records[i].State == RecordExecuting {
				rec := &l.records[i]
				rec.State = RecordSaved
				rec.Response = Response{Code: CodeOK, Object: id, Status: Succeeded}
				rec.ExpiresAt = l.now + l.cfg.Retention
			}
		}
		changes = append(changes, Change{Tick: l.now, Effects: l.Effects(), Kind: LateCommit, Object: id, Key: lc.req.Key, Intent: lc.req.Intent, Status: Succeeded})
	}
	l.late = kept
	for i := range l.objects {
		o := &l.objects[i]
		if o.Status == Pending && o.ResolveAt <= l.now {
			o.Status, o.ResolvesTo = o.ResolvesTo, 0
			if o.Status == Failed {
				l.failed++
			}
			changes = append(changes, Change{Tick: l.now, Effects: l.Effects(), Kind: Resolved, Object: o.ID, Key: o.Key, Intent: o.Intent, Status: o.Status})
		}
	}
	for i := 0; i < len(l.records); {
		if rec := l.records[i]; rec.State == RecordSaved && rec.ExpiresAt <= l.now {
			l.prune(rec.Key)
			changes = append(changes, Change{Tick: l.now, Effects: l.Effects(), Kind: Pruned, Key: rec.Key})
			continue
		}
		i++
	}
	return changes
}
