package missions

import "github.com/replaylab/replaylab/ledger"

// The caller's boundary: what a caller may see. A Caller meets the world
// only through a Wire (the clock, the provider's documented contract,
// sends and read-backs) and hears only a Reply (the status, the body's
// error and object, the headers), never the fixture or what the provider
// did behind it. Everything a test of a caller needs is here; a caller
// that needs more is cheating.

// Caller is the client side of a run. It decides whether to send, what it
// believes and what it tells the user from what a real client can see
// only: the reply's code, body and headers, a timeout, a read-back's
// answer, the clock, the provider's documented contract, and its own
// durable state. It never sees the fixture or what the provider did.
type Caller interface {
	// Turn is a scheduled chance to send for intent i.
	Turn(w Wire, i int, t Turn)
	// Read is a scheduled read-back for intent i.
	Read(w Wire, i int)
	// Restarted: the caller process came back up with its durable state.
	Restarted(w Wire)
	// Finish closes the books once the provider has settled.
	Finish(w Wire)
	// Belief is what the caller believes became of intent i.
	Belief(i int) Belief
	// Intent is the caller's durable record of intent i.
	Intent(i int) *IntentState
	// AppendState appends an encoding of everything that decides the
	// caller's next moves: equal encodings, equal futures.
	AppendState(b []byte) []byte
	// CopyFrom makes the caller a copy of src, which has the same type.
	CopyFrom(src Caller)
	// Clone returns an independent copy of the caller.
	Clone() Caller
}

// Turn is what the schedule hands the caller with a chance to send.
type Turn struct {
	// Worker is which concurrent worker has the turn, in a together step.
	Worker int
	// Payload overrides payload fields for this send, as when the model
	// re-issues a call with other arguments.
	Payload map[string]string
	// Digest is the digest of the payload with the override applied,
	// when there is an override: made once, with the mission.
	Digest string
	// Ahead is how many more turns the schedule plans for the intent.
	Ahead int
	// minted is, once the caller has chosen the send's key, 1 + its
	// number among the keys the seed mints, 0 for a key not minted: the
	// run records the send's key by it.
	minted int32
}

// Wire is the caller's view of the world: the clock, the provider's
// documented contract, sends, read-backs, and the case being recorded.
type Wire interface {
	// Now is the current tick.
	Now() int
	// Profile is what the provider documents about keys, and how long,
	// in ticks, it keeps them.
	Profile() (*ledger.Profile, int)
	// Send puts one request for intent i on the wire and returns what
	// came back. The world applies the turn's fixture.
	Send(i int, key string, t Turn) Reply
	// ReadBack lists the objects whose metadata names the intent, and
	// what the caller observed of the read: a success, an error (a 500)
	// or a timeout, which show nothing. forPerson marks the
	// read a person's evidence takes, which meets no fault. The list
	// holds until the next read-back.
	ReadBack(intent string, forPerson bool) ([]ObjectView, Observation)
	// Log records an event the caller made (checkpoint, hold, read,
	// escalation). The world stamps its tick, step and effect count.
	Log(ev Event)
	// LogIntent is Log for an event about intent i with no more to it
	// than its kind, worker, checkpoint, class and reason: the
	// checkpoints and holds a caller makes at nearly every step, which a
	// long run records without making an Event of each.
	LogIntent(i int, kind EventKind, worker int, cp Checkpoint, class Class, why Why)
	// Classified marks the class the caller gave the last send.
	Classified(c Class)
	// Say attaches the agent's words to the last event about intent i.
	Say(i int, s Said)
	// Recording reports whether the case is kept (false while exploring).
	Recording() bool
}

// ObjectView is an object as a client sees it in a response body or a
// read-back: its id, the intent its metadata names, its parameters and its
// status. No ledger internals.
type ObjectView struct {
	ID      ledger.ObjectID
	Intent  string
	Payload string
	// Digest binds the object's operation, principal and parameters, as
	// the client computes it from the body's fields.
	Digest string
	Status ledger.Status
}

// Reply is everything a send gives back to the caller: what crossed the
// wire, and nothing of what the provider did behind it.
type Reply struct {
	// Attempt is the send's number, as a request id.
	Attempt int
	// Heard is false when nothing came back in time: a timeout.
	Heard bool
	// Crashed: the caller process died before it recorded the reply.
	Crashed bool
	// Code is the HTTP status, when heard.
	Code int
	// Error is the error type the body names (ledger.ErrorIdempotency,
	// ErrorInvalidRequest, ErrorAPI), or "" for a success.
	Error string
	// ErrorCode is the error code the body names, where the provider's
	// documentation gives the answer one (in flight, other parameters, a
	// final key, the refund limit).
	ErrorCode string
	// Replayed is the Idempotent-Replayed header: the provider answered
	// from a saved response.
	Replayed bool
	// Object is the object in the body, if any.
	Object ObjectView
}

// Observation is what the caller makes of a reply, reading the body's
// error code as the provider's profile documents it: its in-flight
// answer is a conflict where it can be told from a server error (below
// 500), and its answer to other parameters a mismatch.
func (r Reply) Observation(p *ledger.Profile) Observation {
	switch {
	case r.Crashed:
		return ObservedNothing
	case !r.Heard:
		return ObservedTimeout
	case p.InFlight != nil && r.Code == p.InFlight.Status && r.Code < ledger.CodeServerError && r.ErrorCode == p.InFlight.Code:
		return ObservedConflict
	case p.Mismatch != nil && r.Code == p.Mismatch.Status && r.ErrorCode == p.Mismatch.Code:
		return ObservedMismatch
	case r.Code != ledger.CodeOK, r.Object.Status == ledger.Failed, r.Object.Status == ledger.Canceled:
		return ObservedError
	case r.Object.Status == ledger.Pending:
		return ObservedPending
	}
	return ObservedSuccess
}
