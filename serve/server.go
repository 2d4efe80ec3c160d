package serve

// The Server: the provider as an http.Handler over the core, its
// lifecycle (New, Release, Finish, End, Close), and its write to storage
// at every step, before any reply leaves.

import (
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/memlimit"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// ControlPrefix is the reserved path prefix of the control endpoint; no
// Stripe path starts with it.
const ControlPrefix = "/_replaylab/"

// Server is the provider as an http.Handler: the Stripe-shaped refunds
// API, and the control endpoint under ControlPrefix.
type Server struct {
	mu     sync.Mutex
	opts   Options
	c      *core
	start  time.Time
	offset int
	mux    *http.ServeMux

	stop     chan struct{}
	stopOnce sync.Once
	// served counts API requests answered; Hooks.OnServed, when set, is
	// called with the count after each one (outside the lock).
	served int
	// active counts the API requests being answered, under mu, so that
	// Finish waits for the last reply's fate; idle is signalled when it
	// falls to zero.
	active int
	idle   *sync.Cond
	// ended: End handed the session over; the control endpoint changes
	// nothing after it.
	ended bool

	// st is where the provider keeps what it must not forget (nil:
	// nothing beyond the session; boltStorage with --db). confirmed
	// lists the requests whose reply was written since the last durable
	// write; the next write records them. failed is set once a durable
	// write fails: the ledger in memory is then ahead of the disk, so
	// every request after is refused.
	st        storage
	confirmed []int
	failed    error
	// persisted is what the ledger held at the last durable write: a write
	// stores everything that changed since, including what a clock move
	// made happen where nothing was written (a GET state, a refused read).
	persisted mark

	// wire is the provider's API the server speaks (Options.Wire);
	// hooks sends Adyen's webhooks (Options.Webhook), or is nil.
	wire  wire
	hooks *webhooks

	// tools is the MCP side (Options.MCP), made once.
	tools     *tools
	toolsOnce sync.Once
}

// planned is the reply a request is about to get.
type planned struct {
	wire   string
	status int
	err    *refusal
	shown  []missions.EvidenceObject
	// touch is an object the request changed in place (an update, a
	// cancel), to be written with it.
	touch ledger.ObjectID
}

// mark is what the ledger held before a step, to tell what the step
// changed.
type mark struct{ objects, changes int }

func (s *Server) mark() mark { return s.c.mark() }

// record writes request i to the storage, with the reply it is about to
// get and what the step changed, in one transaction, before the reply
// leaves. The caller holds mu.
func (s *Server) record(i int, p planned) error {
	if s.failed != nil {
		return s.failed
	}
	err := s.write(func() (logEntry, string, ledger.ObjectID) {
		r := s.c.request(i)
		r.Wire, r.Status, r.Shown, r.Error = p.wire, p.status, p.shown, p.err.words()
		return logEntry{Request: &r}, r.Key, p.touch
	})
	if err == nil && p.wire == export.WireDelivered {
		// Decided and recorded: the reply is on its way, and may reach
		// the client before finish records it written.
		s.c.answer(i, p)
	}
	return err
}

// recordAnswer is record for a reply decided at once and delivered (p):
// a request that is the one before it again, answered alike, is counted
// on that one (core.fold) and the log keeps the count, not the request.
// It returns the index that holds the request and its reply's
// Request-Id. The caller holds mu.
func (s *Server) recordAnswer(i int, p planned) (int, string, error) {
	if s.failed != nil {
		return i, requestID(i + 1), s.failed
	}
	if !s.c.foldable(i, p) {
		return i, requestID(i + 1), s.record(i, p)
	}
	j := i - 1
	if err := s.write(entry(logEntry{Again: j + 1})); err != nil {
		return i, requestID(i + 1), err
	}
	s.c.fold(i)
	s.c.answer(j, p)
	return j, againID(j+1, s.c.request(j).Again), nil
}

// write appends the step build makes to the storage, with the
// confirmations due and what changed since the last write (the object
// build names, every refund made since, and the keys among build's and
// the clock's changes). A provider with no storage builds nothing. The
// caller holds mu.
func (s *Server) write(build func() (e logEntry, key string, touch ledger.ObjectID)) error {
	if s.st == nil {
		return nil
	}
	e, key, touch := build()
	e.Confirmed, e.Tick = s.confirmed, s.c.now()
	refunds, keys := s.c.changedSince(s.persisted, key, touch)
	if err := s.st.Append(step{log: e, refunds: refunds, keys: keys}); err != nil {
		s.fail(err)
		return err
	}
	s.confirmed = nil
	s.persisted = s.mark()
	return nil
}

// entry is a build for write of an entry that names no key or object.
func entry(e logEntry) func() (logEntry, string, ledger.ObjectID) {
	return func() (logEntry, string, ledger.ObjectID) { return e, "", 0 }
}

// fail marks the server failed: its memory is ahead of its disk. The
// caller holds mu.
func (s *Server) fail(err error) {
	if s.failed != nil {
		return
	}
	s.failed = err
	if f := s.opts.Hooks.OnFatal; f != nil {
		go f(err)
	}
}

// Err is the durable write that failed, if one did: the session's end is
// then not on disk as it is in memory.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// errUnrecorded is the reply to a request the provider could not record
// durably.
func errUnrecorded(err error) *refusal {
	return refuse(refusedUnavailable, "", "The provider could not record this request durably ("+err.Error()+"); nothing about it is promised. The server is stopping; a restart recovers from what is on disk.")
}

// unrecorded answers API request seq (0: not in the session), which the
// provider could not record durably.
func (s *Server) unrecorded(w http.ResponseWriter, r *http.Request, seq int, err error) {
	s.replyErr(w, r, requestID(seq), errUnrecorded(err))
}

// unrecorded answers a control request the provider could not record.
func unrecorded(w http.ResponseWriter, err error) { replyError(w, errUnrecorded(err)) }

// New returns a provider ready to serve.
func New(o Options) (*Server, error) {
	o = o.withDefaults()
	c, err := newCore(o)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, c: c, stop: make(chan struct{}), wire: newWire(o), hooks: newWebhooks(o)}
	s.restart(o.Now())
	s.idle = sync.NewCond(&s.mu)
	mux := http.NewServeMux()
	s.wire.routes(s, mux)
	mux.HandleFunc(ControlPrefix, s.control)
	if o.MCP {
		mux.Handle(MCPPath, s.mcpTools())
	}
	mux.HandleFunc("/", s.unknown)
	s.mux = mux
	if s.hooks != nil {
		go s.watchOutcomes()
	}
	return s, nil
}

// ServeHTTP routes a request. A path that is not in its clean form
// (//v1/refunds, /v1/refunds/./x) is answered 404 in Stripe's shape:
// net/http's router would answer a bare redirect, which a client that
// follows it would send again.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f := s.opts.Hooks.OnRequest; f != nil {
		f()
	}
	if p := r.URL.Path; p == "" || p[0] != '/' || path.Clean(p) != p && !(strings.HasSuffix(p, "/") && path.Clean(p)+"/" == p) {
		s.unknown(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Release ends every held reply now, closing its connection, and every
// MCP session, whose open streams would otherwise keep the server from
// shutting down: for a server shutting down.
func (s *Server) Release() {
	s.stopOnce.Do(func() { close(s.stop) })
	if s.opts.MCP {
		// Not waited for: a session's close waits on an answer being
		// written, which a client that stopped reading never takes; the
		// HTTP server's stop closes its connection after a grace.
		go s.mcpTools().closeSessions()
	}
}

// Finish waits for the requests being answered (a held reply ends when
// its client gives up, or at Release), settles the clock (late commits
// land, pending refunds resolve) and returns the session with its
// verdicts.
func (s *Server) Finish() *export.Session {
	s.drain()
	defer s.mu.Unlock()
	return s.c.settled()
}

// End is Finish for a provider that serves no more: the session's
// requests are read from the provider (export.Session.Source) rather than
// copied, so a session of 100,000 requests is not held twice as serve
// stops. The session is valid while no request comes.
func (s *Server) End() *export.Session {
	s.drain()
	defer s.mu.Unlock()
	s.ended = true
	return s.c.settledView()
}

// drain waits for the requests being answered, writes the confirmations
// due, and moves the clock to now; it returns holding mu.
func (s *Server) drain() {
	s.mu.Lock()
	for s.active > 0 {
		s.idle.Wait()
	}
	if s.failed == nil && len(s.confirmed) > 0 {
		// The replies written since the last durable write.
		_ = s.write(entry(logEntry{}))
	}
	s.syncClock()
}

// Session is the session so far, unsettled.
func (s *Server) Session() *export.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncClock()
	return s.c.snapshot()
}

// syncClock moves the ledger to the tick the wall clock has reached.
// The caller holds mu.
func (s *Server) syncClock() {
	elapsed := s.opts.Now().Sub(s.start)
	s.c.advanceTo(s.offset + int(elapsed/s.opts.Tick))
}

// Options are the options the server runs under, defaults filled in.
func (s *Server) Options() Options { return s.opts }

// ReadFaultsLeft lists the faults the next reads meet, in order.
func (s *Server) ReadFaultsLeft() []missions.ReadStep {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.c.readFaultsLeft())
}

// FaultsLeft lists the faults still to come: under "" for a list, per
// intent for a mission.
func (s *Server) FaultsLeft() map[string][]missions.Fixture {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c.faultsLeft()
}

// Close closes the storage.
func (s *Server) Close() error {
	if s.st == nil {
		return nil
	}
	return s.st.Close()
}

// restart sets the wall-clock time of tick 0: a new provider's now, a
// reopened one's as recorded.
func (s *Server) restart(start time.Time) {
	s.start = start
	s.c.startAt(start)
}

// meta is what a storage is made with: core c's settings, the mission,
// and the time of tick 0.
func (s *Server) meta(c *core, start time.Time) storeMeta {
	return storeMeta{Settings: c.settings(), Mission: s.opts.Mission, Start: start.UnixNano()}
}

// withFailpoints is st, calling Hooks.Failpoint at each write's
// boundaries when one is set.
func (s *Server) withFailpoints(st storage) storage {
	if f := s.opts.Hooks.Failpoint; f != nil {
		return failpoints{storage: st, fail: f}
	}
	return st
}

// failpoint calls Hooks.Failpoint, when set, at a durable boundary of a
// step: "after-reply". A provider with no storage has no durable
// boundary, and calls none.
func (s *Server) failpoint(point string) {
	if f := s.opts.Hooks.Failpoint; f != nil && s.st != nil {
		f(point)
	}
}

// MemoryLimit is the soft limit on the Go heap that LimitMemory sets: a
// session of 100,000 requests keeps about 30 MiB, and without a limit the
// collector lets the heap grow to twice what is kept before it runs.
const MemoryLimit = 40 << 20

// LimitMemory sets the soft limit MemoryLimit on the Go heap while a
// provider serves, raised, once what the session keeps is well past it,
// to an eighth above that. It returns what puts the old limit back. With
// GOMEMLIMIT set it does nothing.
func LimitMemory() (restore func()) { return memlimit.Set(MemoryLimit) }

// done counts an API request answered.
func (s *Server) done() {
	s.mu.Lock()
	s.served++
	n := s.served
	s.mu.Unlock()
	if n%1024 == 0 {
		memlimit.Raise()
	}
	if f := s.opts.Hooks.OnServed; f != nil {
		f(n)
	}
}

// busy counts an API request being answered until the function it
// returns is called.
func (s *Server) busy() func() {
	s.mu.Lock()
	s.active++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.active--; s.active == 0 {
			s.idle.Broadcast()
		}
		s.mu.Unlock()
	}
}

// finish records what the transport did with request i of core c and
// counts it. A core replaced by a reset meanwhile is left alone: the
// request belongs to the session that ended.
func (s *Server) finish(c *core, i int, wire string, status int, e *refusal, shown []missions.EvidenceObject) {
	s.mu.Lock()
	if c != s.c {
		s.mu.Unlock()
		s.done()
		return
	}
	s.c.replied(i, wire, status, e, shown)
	s.notify()
	if wire == export.WireDelivered {
		s.confirmed = append(s.confirmed, i+1)
	}
	s.mu.Unlock()
	s.done()
}

// lockNow takes the lock and moves the clock to now: the start of every
// API request's turn at the provider. The caller unlocks.
func (s *Server) lockNow() {
	s.mu.Lock()
	s.syncClock()
	s.c.traceNext("") // no request's trace context outlives its turn
}

// lockFor is lockNow for a request that carries the trace context tp:
// the request the core logs next, under this lock, keeps it.
func (s *Server) lockFor(tp string) {
	s.lockNow()
	s.c.traceNext(tp)
}

// traceparent is the W3C trace context a request carries, when it is
// one that reads (version, trace id, parent id, flags, in lowercase hex):
// anything else is not kept, since nothing could join it.
func traceparent(v string) string {
	if len(v) < 55 || len(v) > 512 || v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return ""
	}
	for i, r := range v[:55] {
		if i == 2 || i == 35 || i == 52 {
			continue
		}
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return ""
		}
	}
	if v[:2] == "ff" || v[3:35] == zeroTraceID || v[36:52] == zeroTraceID[:16] {
		return ""
	}
	return v[:55]
}

// zeroTraceID is the trace id no trace has (a parent id of zeros is its
// first 16).
const zeroTraceID = "00000000000000000000000000000000"
