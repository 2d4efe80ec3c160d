package ledger

// The ledger's words: contracts, configuration, objects and their
// statuses, requests and how they execute, responses, idempotency records
// and the changes the clock brings.

import (
	"fmt"
	"strconv"
)

// Contract is the name a case records for the provider's profile: the
// profile's id, or for the first three profiles the short name they had
// before profiles were data, so that every case written then replays
// byte for byte.
type Contract string

// The short names of the first three profiles.
const (
	// None ignores idempotency keys: every executed request is a new effect.
	None Contract = "none"
	// V1 is stripe-v1: the first response is saved once execution begins
	// and replayed, errors included, for every repeat with the same key
	// and payload.
	V1 Contract = "v1"
	// V2 is stripe-v2: like V1, but a repeat after a failed or partial
	// execution completes the work and returns the updated response.
	V2 Contract = "v2"
)

// Config configures a ledger.
type Config struct {
	// Profile is the provider's contract; the ledger keeps the pointer
	// and never changes what it points to.
	Profile *Profile
	// Retention is how many ticks an idempotency record is kept before it is
	// pruned (assumption D). After that, the key executes anew. It stands
	// in for the profile's wall-time retention.
	Retention int
	// Captured holds, per charge, the amount captured in minor units: a
	// refund that would take the charge's standing refunds past it is
	// refused with the profile's refund limit. A charge not named has no
	// limit.
	Captured map[string]int64
	// rules is the profile as the ledger reads it on every request, made
	// once by New: flags in place of words.
	rules rules
}

// rules are a profile's fields as Submit tests them: no word compared,
// no pointer followed on the way of an ordinary attempt.
type rules struct {
	keyed, required, final, complete, current, keep4xx, keep5xx bool
}

func rulesOf(p *Profile) rules {
	return rules{
		keyed: p.Saves != SavesNone, required: p.Key.Required, final: p.FailedKey != nil,
		complete: p.Replay == ReplayComplete, current: p.Replay == ReplayCurrent,
		keep4xx: p.Saves == SavesAll || p.Saves == SavesNo5xx, keep5xx: p.Saves == SavesAll,
	}
}

// keeps reports whether an answer with this status is kept under its key.
func (r rules) keeps(code int) bool {
	switch {
	case code >= CodeServerError:
		return r.keep5xx
	case code >= CodeBadRequest:
		return r.keep4xx
	}
	return r.keyed
}

// DefaultRetention is the retention window when a mission names none.
const DefaultRetention = 100

// Validate rejects a configuration the ledger cannot run.
func (c Config) Validate() error {
	if c.Profile == nil {
		return fmt.Errorf("no provider profile")
	}
	if err := c.Profile.Validate(); err != nil {
		return err
	}
	if c.Retention < 1 {
		return fmt.Errorf("retention %d ticks: must be at least 1", c.Retention)
	}
	for ch, n := range c.Captured {
		if n < 0 {
			return fmt.Errorf("charge %s: captured %d: must not be negative", ch, n)
		}
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

// Refund is what a refund takes: from which charge, and how much, in
// minor units. Never changed once made: requests and objects share it.
type Refund struct {
	Charge string `json:"charge"`
	Amount int64  `json:"amount"`
}

// Execution is what the provider does with a request it decides to run.
// It comes from the fixture; deduplication is the ledger's job.
type Execution struct {
	Kind ExecKind
	// Refund is, where the charge's capture is known, the charge the
	// refund takes from and its amount, for the refund limit; nil
	// otherwise. It rides with the execution, not the request, which
	// travels in registers on every attempt and has no room left.
	Refund *Refund
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
	// Profiles other than the first three add these.
	KeyRequired Action = "key_required" // no key where the profile requires one; nothing ran
	KeyFailed   Action = "key_failed"   // the key's earlier attempt failed and the key is final
	OverLimit   Action = "over_limit"   // the refund would pass what was captured; nothing ran
)

// Response is what the provider answered (whether or not the caller hears it).
type Response struct {
	Code   int      `json:"code"`
	Object ObjectID `json:"object,omitempty"`
	Status Status   `json:"status,omitempty"`
	// Refused names, for a refusal a profile documents (over_limit,
	// key_failed, key_required), which one: a saved one is replayed as it
	// was.
	Refused Refused `json:"refused,omitempty"`
}

// Refused names a documented refusal an answer is, in a byte: a response
// is copied with every record, and stays small.
type Refused uint8

// The refusals a response can name.
const (
	NotRefused Refused = iota
	RefusedKeyRequired
	RefusedKeyFailed
	RefusedOverLimit
)

var refusedActions = [...]Action{"", KeyRequired, KeyFailed, OverLimit}

// Action is the action the refusal came from.
func (r Refused) Action() Action {
	if int(r) < len(refusedActions) {
		return refusedActions[r]
	}
	return ""
}

// MarshalText writes the refusal as its action's name.
func (r Refused) MarshalText() ([]byte, error) { return []byte(r.Action()), nil }

// UnmarshalText reads a refusal written by MarshalText.
func (r *Refused) UnmarshalText(b []byte) error {
	for i, a := range refusedActions {
		if i > 0 && string(a) == string(b) {
			*r = Refused(i)
			return nil
		}
	}
	return fmt.Errorf("unknown refusal %q (accepted: key_required, key_failed, over_limit)", b)
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

// ErrorCode is the error code the response's body names under profile
// p: its documented refusal's code (in flight, other parameters, a final
// key, a missing key, the refund limit), or "" for any other answer.
func (r Result) ErrorCode(p *Profile) string {
	if ref := p.RefusalOf(r.Action, r.Response); ref != nil {
		return ref.Code
	}
	return ""
}

// RecordState is the state of an idempotency record.
type RecordState uint8

// Record states.
const (
	RecordExecuting RecordState = iota + 1
	RecordSaved
	// RecordFailed marks a key made final by a failed attempt: every
	// later request under it is refused.
	RecordFailed
)

// String names the state.
func (s RecordState) String() string {
	switch s {
	case RecordExecuting:
		return "executing"
	case RecordSaved:
		return "saved"
	case RecordFailed:
		return "failed"
	}
	return ""
}

// Kept reports whether the record holds an answer until it expires: a
// saved answer or a final key.
func (s RecordState) Kept() bool { return s == RecordSaved || s == RecordFailed }

// MarshalText renders the state for JSON.
func (s RecordState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a state written by MarshalText.
func (s *RecordState) UnmarshalText(b []byte) error {
	switch string(b) {
	case "executing":
		*s = RecordExecuting
	case "saved":
		*s = RecordSaved
	case "failed":
		*s = RecordFailed
	default:
		return fmt.Errorf("unknown record state %q (accepted: executing, saved, failed)", b)
	}
	return nil
}

// Object is one effect: a committed mutation, such as one refund.
type Object struct {
	ID     ObjectID `json:"id"`
	Intent string   `json:"intent"`
	// Refund is kept where the charge's capture is known: its charge
	// and amount, written beside the other fields.
	*Refund
	Key     string `json:"key,omitempty"`
	Digest  string `json:"digest"`
	Payload string `json:"payload"`
	Status  Status `json:"status"`
	Tick    int    `json:"tick"`
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
	// Refund is the refund's charge and amount, where its capture is
	// known.
	Refund *Refund `json:"refund,omitempty"`
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

// AsOf is the object as a read made at tick t saw it, and whether it was
// there at all: an object committed after t is absent, and one that
// resolved or was canceled after t still shows pending, bound for the
// status it reached. A search index that is not read-after-write shows
// the ledger this way.
func (o Object) AsOf(t int) (Object, bool) {
	if o.Tick > t {
		return Object{}, false
	}
	if o.Status != Pending && o.ResolveAt > t {
		o.Status, o.ResolvesTo = Pending, o.Status
	}
	return o, true
}
