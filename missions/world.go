package missions

import (
	"fmt"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
)

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

// ReadFault is what the network and the provider do with one read (a
// list of refunds, a refund by id): the faults a client that reconciles
// by reading meets. The zero ReadFault answers the read as it stands.
type ReadFault string

// The read faults.
const (
	// ReadOK: the read is answered as the ledger stands, as every read
	// past the list is; it holds a place in the list.
	ReadOK ReadFault = "read_ok"
	// ReadServerError: the read answers 500 and shows nothing.
	ReadServerError ReadFault = "read_server_error"
	// ReadTimeout: the read never answers; the caller times out.
	ReadTimeout ReadFault = "read_timeout"
	// ReadLagging: the read answers with the ledger as it was Lag ticks
	// ago, as a search index that is not read-after-write does.
	ReadLagging ReadFault = "read_lagging"
)

// ReadFaults lists every read fault.
var ReadFaults = []ReadFault{ReadOK, ReadServerError, ReadTimeout, ReadLagging}

// ParseReadFault reads a read fault's name.
func ParseReadFault(s string) (ReadFault, error) { return parseWord(s, "read fault", ReadFaults) }

// ReadStep is one entry of a mission's reads: the fault the next read
// meets, and for a lagging read how many ticks behind it shows the ledger.
type ReadStep struct {
	Fault ReadFault `json:"fault"`
	Lag   int       `json:"lag,omitempty"`
	Line  int       `json:"-"`
}

// Check is the one rule of a read fault, for mission files, the case
// reader, serve's options and its sessions: a known fault; a lag of 1 to
// MaxTicks for read_lagging, and none for any other.
func (r ReadStep) Check() error {
	if r.Fault == "" {
		return fmt.Errorf("a read fault needs its fault (accepted: %s)", termtext.JoinWords(ReadFaults))
	}
	if _, err := ParseReadFault(string(r.Fault)); err != nil {
		return err
	}
	switch {
	case r.Fault == ReadLagging && r.Lag == 0:
		return fmt.Errorf("a read_lagging read needs lag: how many ticks behind the ledger it shows, from 1 to %d", MaxTicks)
	case r.Fault == ReadLagging && (r.Lag < 1 || r.Lag > MaxTicks):
		return fmt.Errorf("lag %d: a read_lagging read lags 1 to %d ticks", r.Lag, MaxTicks)
	case r.Fault != ReadLagging && r.Lag != 0:
		return fmt.Errorf("lag belongs to read_lagging only; %s has none", r.Fault)
	}
	return nil
}

// ReadWorld is what a read fault does: whether the read is answered, with
// which status code, and how far behind the ledger it shows.
type ReadWorld struct {
	Answered bool
	// Code is the status the answer carries: 200, or 500.
	Code int
	// Lag is how many ticks behind the answer shows the ledger.
	Lag int
}

// World is the one rule from a read fault to the wire, for the runner,
// REST and the MCP read tools.
func (r ReadStep) World() ReadWorld {
	switch r.Fault {
	case ReadServerError:
		return ReadWorld{Answered: true, Code: ledger.CodeServerError}
	case ReadTimeout:
		return ReadWorld{}
	case ReadLagging:
		return ReadWorld{Answered: true, Code: ledger.CodeOK, Lag: r.Lag}
	}
	return ReadWorld{Answered: true, Code: ledger.CodeOK}
}

// Sees is the object as a read that met this world shows it, and whether
// it shows it at all: the ledger as it was Lag ticks before now.
func (w ReadWorld) Sees(o ledger.Object, now int) (ledger.Object, bool) {
	if w.Lag == 0 {
		return o, true
	}
	return o.AsOf(now - w.Lag)
}

// String is the read step in a line: "read_lagging (5 ticks behind)".
func (r ReadStep) String() string {
	if r.Fault == ReadLagging {
		return string(r.Fault) + " (" + termtext.Plural(r.Lag, "tick") + " behind)"
	}
	return string(r.Fault)
}
