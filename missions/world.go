package missions

import "github.com/replaylab/replaylab/ledger"

// Transport is what the network does with a send and its reply.
type Transport uint8

// The transports.
const (
	// ReplyDelivered: the request reaches the provider and its reply reaches
	// the caller. A request the provider is still executing has no reply
	// yet, so its caller times out.
	ReplyDelivered Transport = iota + 1
	// ReplyLost: the request reaches the provider; the reply never
	// arrives, so the caller times out.
	ReplyLost
	// NeverSent: the request is dropped on the way; the provider never
	// sees it and the caller times out.
	NeverSent
	// CallerCrash: the request reaches the provider; the caller process
	// dies before it records the reply.
	CallerCrash
)

var transportNames = [...]string{"", "delivered", "reply_lost", "never_sent", "caller_crash"}

// String names the transport.
func (t Transport) String() string {
	if int(t) < len(transportNames) {
		return transportNames[t]
	}
	return "transport?"
}

// World is what one fixture does: whether the request reaches the
// provider, how the provider executes it when it runs it, and what the
// transport does with the reply. Deduplication is not here: the ledger
// decides whether a request that reaches it runs at all.
type World struct {
	Reaches bool
	// Exec is the execution the provider performs, when it runs the
	// request (only when Reaches).
	Exec ledger.ExecKind
	// Reply is what happens to the reply on the way back.
	Reply Transport
}

// Delivers reports whether the reply to a request that met this world
// reaches the caller: it reached the provider, the world delivers
// replies, and the provider answered at once rather than going on
// executing. The one rule the runner and serve both apply.
func (w World) Delivers(res ledger.Result) bool {
	return w.Reaches && w.Reply == ReplyDelivered && res.Action != ledger.Executing
}

// Worlds is the one table from fixture to world: the simulated runner and
// the HTTP provider both inject faults from it.
var Worlds = func() map[Fixture]World {
	m := make(map[Fixture]World, len(Fixtures))
	for _, f := range Fixtures {
		m[f] = worldOf(f)
	}
	return m
}()

// worldOf is the fixture's world, without a map lookup for the known ones.
func worldOf(f Fixture) World {
	switch f {
	case FailureBeforeCommit:
		return World{Reaches: true, Exec: ledger.Reject, Reply: ReplyDelivered}
	case TimeoutAfterCommit:
		return World{Reaches: true, Exec: ledger.Commit, Reply: ReplyLost}
	case Success:
		return World{Reaches: true, Exec: ledger.Commit, Reply: ReplyDelivered}
	case TimeoutBeforeCommit:
		return World{Reaches: false, Reply: NeverSent}
	case ServerErrorAfterCommit:
		return World{Reaches: true, Exec: ledger.CommitServerError, Reply: ReplyDelivered}
	case LateCommit:
		return World{Reaches: true, Exec: ledger.CommitLater, Reply: ReplyDelivered}
	case PendingFixture:
		return World{Reaches: true, Exec: ledger.CommitPending, Reply: ReplyDelivered}
	case CrashAfterSend:
		return World{Reaches: true, Exec: ledger.Commit, Reply: CallerCrash}
	}
	return World{}
}

// Execution is what the provider runs for a step that meets this world.
func (w World) Execution(st Step) ledger.Execution {
	return ledger.Execution{Kind: w.Exec, Delay: st.Delay, Terminal: st.Resolve}
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
	// Replayed is the Idempotent-Replayed header: the provider answered
	// from a saved response.
	Replayed bool
	// Object is the object in the body, if any.
	Object ObjectView
}

// Observation is what the caller makes of a reply.
func (r Reply) Observation() Observation {
	switch {
	case r.Crashed:
		return ObservedNothing
	case !r.Heard:
		return ObservedTimeout
	case r.Code == ledger.CodeConflict:
		return ObservedConflict
	case r.Code == ledger.CodeMismatch && r.Error == ledger.ErrorIdempotency:
		return ObservedMismatch
	case r.Code != ledger.CodeOK, r.Object.Status == ledger.Failed, r.Object.Status == ledger.Canceled:
		return ObservedError
	case r.Object.Status == ledger.Pending:
		return ObservedPending
	}
	return ObservedSuccess
}

// Response is the reply as the case records what the caller heard.
func (r Reply) Response() ledger.Response {
	return ledger.Response{Code: r.Code, Object: r.Object.ID, Status: r.Object.Status}
}
