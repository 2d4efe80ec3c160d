// Package ledger is the simulated provider: a sequential, in-memory record of
// effects (committed mutations) and idempotency records, governed by a
// provider contract.
//
// The ledger is pure. It never reads a clock, touches a file or starts a
// goroutine: the driver hands it requests with Submit and moves its virtual
// clock with Advance, and it answers with what it did.
package ledger

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
)

// Contract is what the provider promises about repeated requests.
type Contract string

// The provider contracts.
const (
	// None ignores idempotency keys: every executed request is a new effect.
	None Contract = "none"
	// V1 saves the first response once execution begins and replays it,
	// errors included, for every repeat with the same key and payload.
	V1 Contract = "v1"
	// V2 is like V1, but a repeat after a failed or partial execution
	// completes the work and returns the updated response.
	V2 Contract = "v2"
)

// Contracts lists every contract, in the order they are offered.
var Contracts = []Contract{V1, V2, None}

// ParseContract reads a contract name.
func ParseContract(s string) (Contract, error) {
	for _, c := range Contracts {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("unknown contract %q (accepted: v1, v2, none)", s)
}

// Config configures a ledger.
type Config struct {
	Contract Contract
	// Retention is how many ticks an idempotency record is kept before it is
	// pruned (assumption D). After that, the key executes anew.
	Retention int
}

// DefaultRetention is the retention window when a mission names none.
const DefaultRetention = 100

// Validate rejects a configuration the ledger cannot run.
func (c Config) Validate() error {
	if _, err := ParseContract(string(c.Contract)); err != nil {
		return err
	}
	if c.Retention < 1 {
		return fmt.Errorf("retention %d ticks: must be at least 1", c.Retention)
	}
	return nil
}

// ObjectID names an object the provider created. Zero means no object.
type ObjectID int

// String renders the id the way a payment provider would show it.
func (id ObjectID) String() string {
	if id == 0 {
		return ""
	}
	var b [24]byte
	return string(id.append(b[:0]))
}

// append writes the id as String does: re_ and at least four digits.
func (id ObjectID) append(b []byte) []byte {
	b = append(b, "re_"...)
	for d := 1000; d > 1 && int(id) < d; d /= 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, int64(id), 10)
}

// MarshalText renders the id for JSON.
func (id ObjectID) MarshalText() ([]byte, error) {
	if id == 0 {
		return []byte{}, nil
	}
	return id.append(make([]byte, 0, 8)), nil
}

// UnmarshalText reads an id written by MarshalText.
func (id *ObjectID) UnmarshalText(b []byte) error {
	s := string(b)
	if s == "" {
		*id = 0
		return nil
	}
	if len(s) < 4 || s[:3] != "re_" {
		return fmt.Errorf("object id %q: expected re_ followed by digits, e.g. re_0001", s)
	}
	n, err := strconv.Atoi(s[3:])
	if err != nil || n < 1 {
		return fmt.Errorf("object id %q: expected re_ followed by digits, e.g. re_0001", s)
	}
	*id = ObjectID(n)
	return nil
}

// Status is the documented state of an object (assumption E).
type Status uint8

// Object statuses. Succeeded and Failed are the terminal states a pending
// object resolves to; Canceled ends a pending object the client canceled
// before it resolved. The zero Status means no object.
const (
	Pending Status = iota + 1
	Succeeded
	Failed
	Canceled
)

var statusNames = [...]string{"", "pending", "succeeded", "failed", "canceled"}

// String is the status as the provider documents it.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "status(" + strconv.Itoa(int(s)) + ")"
}

// ParseStatus reads a status name.
func ParseStatus(name string) (Status, error) {
	for i, n := range statusNames {
		if i > 0 && n == name {
			return Status(i), nil
		}
	}
	return 0, fmt.Errorf("unknown status %q (accepted: pending, succeeded, failed, canceled)", name)
}

// MarshalText renders the status for JSON.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a status written by MarshalText.
func (s *Status) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*s = 0
		return nil
	}
	v, err := ParseStatus(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Terminal reports whether the status is a documented terminal state a
// pending object resolves to.
func (s Status) Terminal() bool { return s == Succeeded || s == Failed }

// Stands reports whether an object in this status is an effect: its
// mutation took hold, or may yet (pending).
func (s Status) Stands() bool { return s == Pending || s == Succeeded }

// Request is one send that reached the provider.
type Request struct {
	// Intent is the caller's metadata linking the request to its logical
	// operation; read-backs search by it.
	Intent string `json:"intent"`
	// Key is the idempotency key, or "" for none.
	Key string `json:"key,omitempty"`
	// Digest binds operation type, principal and normalized payload.
	Digest string `json:"digest"`
	// Payload is the normalized payload, for people reading the ledger.
	Payload string `json:"payload"`
}

// Execution is what the provider does with a request it decides to run.
// It comes from the fixture; deduplication is the ledger's job.
type Execution struct {
	Kind ExecKind
	// Delay is, for CommitLater, the ticks until the commit, and for
	// CommitPending, the ticks until the object reaches Terminal.
	Delay int
	// Terminal is the status a pending object ends in.
	Terminal Status
}

// ExecKind names an Execution.
type ExecKind int

// The ways a request can execute.
const (
	// Reject refuses the request before execution; nothing is saved.
	Reject ExecKind = iota
	// Commit creates the effect and saves a success response.
	Commit
	// CommitServerError creates the effect but saves a 500 response.
	CommitServerError
	// CommitLater keeps executing past the caller's patience and commits
	// Delay ticks later.
	CommitLater
	// CommitPending creates the object in Pending; it turns Terminal Delay
	// ticks later.
	CommitPending
)

// Action is what the provider did with a request.
type Action string

// Provider actions.
const (
	Rejected  Action = "rejected"  // refused before execution; nothing saved
	Committed Action = "committed" // a new effect
	Executing Action = "executing" // started; the effect lands later
	Replayed  Action = "replayed"  // saved response returned; no new effect
	Completed Action = "completed" // v2: earlier partial work finished; updated response
	Conflict  Action = "conflict"  // same key still executing; nothing saved
	Mismatch  Action = "mismatch"  // saved key, different payload digest; rejected
)

// Response is what the provider answered (whether or not the caller hears it).
type Response struct {
	Code   int      `json:"code"`
	Object ObjectID `json:"object,omitempty"`
	Status Status   `json:"status,omitempty"`
}

// The response codes the provider uses, as Stripe documents them: a
// request refused before execution is a 400, a key still executing a 409,
// a saved key reused with other parameters a 400 (its body's error type,
// idempotency_error, tells it from a refusal; see Result.ErrorType), and a
// saved server error a 500.
const (
	CodeOK          = 200
	CodeBadRequest  = 400
	CodeConflict    = 409
	CodeMismatch    = 400
	CodeServerError = 500
)

// Error types a response's body names, as Stripe names them.
const (
	ErrorInvalidRequest = "invalid_request_error"
	ErrorIdempotency    = "idempotency_error"
	ErrorAPI            = "api_error"
)

// Result is the provider's answer to Submit.
type Result struct {
	Action   Action
	Response Response
}

// ErrorType is the error type the response's body names, or "" for a
// success: what a client reads to tell a reused key with other
// parameters from a request refused before it ran, both 400s.
func (r Result) ErrorType() string {
	switch {
	case r.Action == Mismatch, r.Action == Conflict:
		return ErrorIdempotency
	case r.Response.Code >= CodeServerError:
		return ErrorAPI
	case r.Response.Code >= CodeBadRequest:
		return ErrorInvalidRequest
	}
	return ""
}

// RecordState is the state of an idempotency record.
type RecordState uint8

// Record states.
const (
	RecordExecuting RecordState = iota + 1
	RecordSaved
)

// String names the state.
func (s RecordState) String() string {
	switch s {
	case RecordExecuting:
		return "executing"
	case RecordSaved:
		return "saved"
	}
	return ""
}

// MarshalText renders the state for JSON.
func (s RecordState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a state written by MarshalText.
func (s *RecordState) UnmarshalText(b []byte) error {
	switch string(b) {
	case "executing":
		*s = RecordExecuting
	case "saved":
		*s = RecordSaved
	default:
		return fmt.Errorf("unknown record state %q (accepted: executing, saved)", b)
	}
	return nil
}

// Object is one effect: a committed mutation, such as one refund.
type Object struct {
	ID      ObjectID `json:"id"`
	Intent  string   `json:"intent"`
	Key     string   `json:"key,omitempty"`
	Digest  string   `json:"digest"`
	Payload string   `json:"payload"`
	Status  Status   `json:"status"`
	Tick    int      `json:"tick"`
	// ResolveAt is the tick a pending object reaches its terminal state.
	ResolveAt int `json:"resolve_at,omitempty"`
	// ResolvesTo is, while the object is pending, the terminal status it
	// will reach at ResolveAt; empty once it is terminal.
	ResolvesTo Status `json:"resolves_to,omitempty"`
}

// Record is an idempotency record: a key bound to a payload digest, the
// saved response and an expiry.
type Record struct {
	Key       string      `json:"key"`
	Digest    string      `json:"digest"`
	State     RecordState `json:"state"`
	Response  Response    `json:"response"`
	ExpiresAt int         `json:"expires_at"`
	// Partial marks a saved response that does not reflect the completed
	// work (a saved 500); v2 completes it on a repeat.
	Partial bool `json:"partial,omitempty"`
}

// InFlight is a request still executing past its caller's patience: it
// commits at tick At.
type InFlight struct {
	At      int     `json:"at"`
	Request Request `json:"request"`
}

// Change is something the ledger did on its own while the clock moved.
type Change struct {
	Tick int
	// Effects is the ledger's effect count right after this change.
	Effects int
	Kind    ChangeKind
	Object  ObjectID
	Key     string
	Intent  string
	Status  Status
}

// ChangeKind names a Change.
type ChangeKind string

// Change kinds.
const (
	LateCommit ChangeKind = "late_commit" // an executing request committed
	Resolved   ChangeKind = "resolved"    // a pending object reached a terminal state
	Pruned     ChangeKind = "pruned"      // an idempotency record expired
)

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
	at   int
	req  Request
	done bool
}

// New returns an empty ledger at tick 0.
func New(cfg Config) (*Ledger, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
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

// Submit handles one request that reached the provider at the current tick.
func (l *Ledger) Submit(req Request, ex Execution) Result {
	if l.compactDue {
		l.compact()
		l.compactDue = false
	}
	if l.cfg.Contract == None || req.Key == "" {
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
	if rec.Digest != req.Digest {
		return Result{Action: Mismatch, Response: Response{Code: CodeMismatch}}
	}
	if rec.State == RecordExecuting {
		return Result{Action: Conflict, Response: Response{Code: CodeConflict}}
	}
	if l.cfg.Contract == V2 && rec.Partial {
		// v2 finishes the partial work instead of replaying the error.
		o := l.objects[rec.Response.Object-1]
		rec.Response = Response{Code: CodeOK, Object: o.ID, Status: o.Status}
		rec.Partial = false
		return Result{Action: Completed, Response: rec.Response}
	}
	resp := rec.Response
	if l.cfg.Contract == V2 && resp.Object != 0 {
		// v2 returns the updated response, with the object as it is now.
		resp.Status = l.objects[resp.Object-1].Status
	}
	return Result{Action: Replayed, Response: resp}
}

// execute runs a request no saved record answers. With save, the key is
// known to be absent from the index, and the request's record is added.
func (l *Ledger) execute(req *Request, ex Execution, save bool) Result {
	switch ex.Kind {
	case Reject:
		return Result{Action: Rejected, Response: Response{Code: CodeBadRequest}}
	case CommitLater:
		l.late = append(l.late, lateCommit{at: l.now + ex.Delay, req: *req})
		l.inFlight++
		l.push(due{at: l.soonest(l.now + ex.Delay), kind: dueCommit, ref: len(l.late) - 1})
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
		l.pending++
		l.push(due{at: l.soonest(p.ResolveAt), kind: dueResolve, ref: int(id) - 1})
		resp.Status = Pending
	}
	if save {
		l.insert(Record{Key: req.Key, Digest: req.Digest, State: RecordSaved, Response: resp, Partial: partial})
	}
	return Result{Action: Committed, Response: resp}
}

// soonest is the tick work due at t happens: never before the next tick.
func (l *Ledger) soonest(t int) int { return max(t, l.now+1) }

// commit records a new effect and returns its id.
func (l *Ledger) commit(req *Request) ObjectID {
	id := ObjectID(len(l.objects) + 1)
	if len(l.objects) == cap(l.objects) {
		l.objects = doubled(l.objects)
	}
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
	if rec.State == RecordSaved {
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
		if r.State == RecordSaved {
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
		if r.State == RecordSaved {
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
	if r.State != RecordSaved || r.ExpiresAt > l.now {
		return dst // pruned on access, or its expiry moved
	}
	l.prune(d.ref)
	return append(dst, Change{Tick: l.now, Effects: l.Effects(), Kind: Pruned, Key: r.Key})
}

func (l *Ledger) landLate(dst []Change, i int) []Change {
	lc := &l.late[i]
	lc.done = true
	l.inFlight--
	id := l.commit(&lc.req)
	if l.cfg.Contract != None && lc.req.Key != "" {
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
			out = append(out, InFlight{At: lc.at, Request: lc.req})
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
		n.late = append(n.late, lateCommit{at: f.At, req: f.Request})
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
		case r.State != RecordExecuting && r.State != RecordSaved:
			return fmt.Errorf("snapshot record %q has no state (accepted: executing, saved)", r.Key)
		case r.Response.Object < 0 || int(r.Response.Object) > len(s.Objects):
			return fmt.Errorf("snapshot record %q names %s, which the snapshot does not hold", r.Key, r.Response.Object)
		case r.Partial && r.Response.Object == 0:
			return fmt.Errorf("snapshot record %q is partial but names no object", r.Key)
		case r.State == RecordSaved && r.ExpiresAt <= s.Tick:
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
