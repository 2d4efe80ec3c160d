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
	return "re_" + pad4(int(id))
}

// MarshalText renders the id for JSON.
func (id ObjectID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

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

func pad4(n int) string {
	s := strconv.Itoa(n)
	for len(s) < 4 {
		s = "0" + s
	}
	return s
}

// Status is the documented state of an object (assumption E).
type Status uint8

// Object statuses. Succeeded and Failed are terminal. The zero Status means
// no object.
const (
	Pending Status = iota + 1
	Succeeded
	Failed
)

var statusNames = [...]string{"", "pending", "succeeded", "failed"}

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
	return 0, fmt.Errorf("unknown status %q (accepted: pending, succeeded, failed)", name)
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

// Terminal reports whether the status is a documented terminal state.
func (s Status) Terminal() bool { return s == Succeeded || s == Failed }

// Request is one send that reached the provider.
type Request struct {
	// Intent is the caller's metadata linking the request to its logical
	// operation; read-backs search by it.
	Intent string
	// Key is the idempotency key, or "" for none.
	Key string
	// Digest binds operation type, principal and normalized payload.
	Digest string
	// Payload is the normalized payload, for people reading the ledger.
	Payload string
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

// HTTP-like response codes the provider uses.
const (
	CodeOK          = 200
	CodeBadRequest  = 400
	CodeConflict    = 409
	CodeMismatch    = 422
	CodeServerError = 500
)

// Result is the provider's answer to Submit.
type Result struct {
	Action   Action
	Response Response
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
	ResolveAt int    `json:"resolve_at,omitempty"`
	terminal  Status // the status a pending object will reach
}

// Record is an idempotency record: a key bound to a payload digest, the
// saved response and an expiry.
type Record struct {
	Key       string      `json:"key"`
	Digest    string      `json:"digest"`
	State     RecordState `json:"state"`
	Response  Response    `json:"response"`
	ExpiresAt int         `json:"expires_at"`
	// partial marks a saved response that does not reflect the completed
	// work (a saved 500); v2 completes it on a repeat.
	partial bool
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

type lateCommit struct {
	at  int
	req Request
}

// Ledger is the provider's sequential in-memory state.
type Ledger struct {
	cfg     Config
	now     int
	objects []Object
	// records holds the idempotency records in the order they were first
	// saved; index maps a key to its position. A small map value keeps an
	// attempt cheap: lookups and growth move an int, not a Record.
	records []Record
	index   map[string]int
	late    []lateCommit
	// failed counts objects that reached the terminal state failed: they
	// were created, but their mutation did not stand.
	failed int
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
		index:   make(map[string]int, room),
	}, nil
}

// Reset empties the ledger and rewinds its clock to tick 0, keeping the
// memory it has grown, so a driver that replays many runs against one
// ledger does not allocate again. Snapshots taken earlier stay valid.
func (l *Ledger) Reset() {
	l.now = 0
	l.objects = l.objects[:0]
	l.records = l.records[:0]
	l.late = l.late[:0]
	l.failed = 0
	clear(l.index)
}

// Config returns the ledger's configuration.
func (l *Ledger) Config() Config { return l.cfg }

// Now is the ledger's current tick.
func (l *Ledger) Now() int { return l.now }

// Effects is the number of committed effects that stand: every object
// created, less those that reached the terminal state failed (their
// mutation never took hold). A pending object counts: it may yet succeed.
func (l *Ledger) Effects() int { return len(l.objects) - l.failed }

// Busy reports whether anything is still in motion: a request executing
// past its caller's patience, or an object not yet in a terminal state.
func (l *Ledger) Busy() bool {
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
func (l *Ledger) Object(id ObjectID) (Object, bool) {
	if id < 1 || int(id) > len(l.objects) {
		return Object{}, false
	}
	return l.objects[id-1], true
}

// Find returns the objects whose metadata links them to intent, oldest
// first: the caller's read-back.
func (l *Ledger) Find(intent string) []Object {
	var out []Object
	for _, o := range l.objects {
		if o.Intent == intent {
			out = append(out, o)
		}
	}
	return out
}

// Submit handles one request that reached the provider at the current tick.
func (l *Ledger) Submit(req Request, ex Execution) Result {
	if l.cfg.Contract == None || req.Key == "" {
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
	if l.cfg.Contract == V2 && rec.partial {
		// v2 finishes the partial work instead of replaying the error.
		o := l.objects[rec.Response.Object-1]
		rec.Response = Response{Code: CodeOK, Object: o.ID, Status: o.Status}
		rec.partial = false
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
		p.terminal = ex.Terminal
		resp.Status = Pending
	}
	if save {
		l.insert(Record{Key: req.Key, Digest: req.Digest, State: RecordSaved, Response: resp, partial: partial})
	}
	return Result{Action: Committed, Response: resp}
}

// commit records a new effect and returns its id.
func (l *Ledger) commit(req *Request) ObjectID {
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
func (l *Ledger) insert(rec Record) {
	rec.ExpiresAt = l.now + l.cfg.Retention
	l.index[rec.Key] = len(l.records)
	l.records = append(l.records, rec)
}

func (l *Ledger) prune(key string) {
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
func (l *Ledger) Advance(ticks int) []Change {
	var changes []Change
	for range ticks {
		l.now++
		changes = l.settle(changes)
	}
	return changes
}

func (l *Ledger) settle(changes []Change) []Change {
	kept := l.late[:0]
	for _, lc := range l.late {
		if lc.at > l.now {
			kept = append(kept, lc)
			continue
		}
		id := l.commit(&lc.req)
		if l.cfg.Contract != None && lc.req.Key != "" {
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
			o.Status = o.terminal
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

// Snapshot is a copy of the ledger's state, safe to keep and to export.
type Snapshot struct {
	Tick int `json:"tick"`
	// Effects counts the objects that did not end failed.
	Effects int      `json:"effects"`
	Objects []Object `json:"objects"`
	Records []Record `json:"records"`
}

// Snapshot copies the ledger's state; records in the order they were saved.
func (l *Ledger) Snapshot() Snapshot {
	s := Snapshot{
		Tick:    l.now,
		Effects: l.Effects(),
		Objects: append([]Object{}, l.objects...),
		Records: append([]Record{}, l.records...),
	}
	return s
}
