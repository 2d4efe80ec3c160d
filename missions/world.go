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

// Response is the reply as the case records what the caller heard.
func (r Reply) Response() ledger.Response {
	return ledger.Response{Code: r.Code, Object: r.Object.ID, Status: r.Object.Status}
}
