package serve

// A request's turn at the provider, shared by every wire: the create's
// request as a wire decoded it, the core's answer (createTurn), the one
// rule from a fault to what becomes of the reply on the wire (fateOf),
// and how a held reply ended.

import (
	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// createRequest is a create as a wire decoded it: the principal its
// credentials name, its idempotency key ("" for none), the intent it
// carries out, its parameters, the tool call that carried it (nil over
// REST) and the trace context it sent.
type createRequest struct {
	principal, key, intent string
	params                 refundParams
	call                   *export.ToolCall
	trace                  string
}

// createTurn is a create as the provider took it: its core and index in
// the session, what its fault does with the reply, and the reply.
type createTurn struct {
	c     *core
	i     int
	world missions.World
	res   ledger.Result
	// deliver: the provider answered at once, and the world delivers
	// replies (status, aerr, shown, and the refund obj when there is no
	// error); fate is what becomes of the reply on this transport.
	deliver bool
	fate    fate
	status  int
	aerr    *refusal
	shown   []missions.EvidenceObject
	obj     ledger.Object
	created int64
	// origin is the request whose reply a keyed create gets
	// (Original-Request): its own, or on a replay the one that executed
	// under the key; 0 for none.
	origin int
}

// fate is what a create's fault does with its reply on the wire.
type fate uint8

const (
	// fateDeliver: the reply goes out.
	fateDeliver fate = iota
	// fateClose: the caller crashes after the commit; the reply's stream
	// closes at once, with nothing on it.
	fateClose
	// fateHold: the reply is lost; it is held until the client gives up,
	// then the stream closes (or, over stdio, the call never answers).
	fateHold
)

// fateOf is the one rule from a create's fault to the wire, for REST, MCP
// over HTTP and MCP over stdio. closes says the transport can close this
// one reply's stream: over stdio it cannot, and a crash after the commit
// is held as a lost reply is.
func (t createTurn) fateOf(closes bool) fate {
	crashes := t.world.Reply == missions.CallerCrash
	switch {
	case crashes && closes:
		return fateClose
	case crashes || !t.deliver:
		return fateHold
	}
	return fateDeliver
}

// crashed ends a create whose caller crashed after the commit: a test rig
// is told (OnCrash) before the stream closes, so that the client never
// hears even the close; the transport then closes it.
func (s *Server) crashed(t createTurn, intent string) {
	if f := s.opts.Hooks.OnCrash; f != nil {
		f(intent)
	}
	s.finish(t.c, t.i, export.WireClosed, 0, nil, nil)
}

// takeCreate is a create's turn: the core meets it with its fault and the
// ledger (core.takeCreate), and the server records it (durably, with
// --db) before any reply leaves. closes says the transport can close the
// reply's stream for a crash after the commit (over stdio it cannot, and
// the reply is held). A durable write that failed is returned with the
// request's seq (0 when it never entered the session).
func (s *Server) takeCreate(req createRequest, closes bool) (createTurn, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return createTurn{}, 0, s.failed
	}
	s.syncClock()
	t := s.c.takeCreate(req, closes)
	return t, t.i + 1, s.record(t.i, t.planned())
}

// takeCreate meets a decoded create with its fault and the ledger, and
// says what happened: the request's index in the session, what the
// ledger did, the reply as data, and what the fault does with it on a
// transport that can (closes) or cannot close one reply's stream.
func (c *core) takeCreate(req createRequest, closes bool) createTurn {
	c.trace = req.trace
	// Every parameter, made once for the payload and, with metadata
	// compared (the default), for the digest too.
	all := req.params.digested(true)
	bound := all
	if c.opts.MetadataOutsideDigest {
		bound = req.params.bound()
	}
	digest := missions.Digest("refund", req.principal, bound)
	i, world, res := c.create(req.intent, req.key, digest, c.encodeForm(all), c.plan.take(req.intent), req.call)
	c.index.sync(c.led) // as refunds come, so that no list pays for many
	t := createTurn{c: c, i: i, world: world, res: res}
	if req.key != "" && (res.Action == ledger.Committed || res.Action == ledger.Replayed || res.Action == ledger.Completed) {
		t.origin = c.origin[req.key]
	}
	t.deliver = world.Delivers(res)
	if t.deliver {
		t.status, t.aerr, t.shown = replyTo(res, c.opts.Profile)
		if t.aerr == nil {
			t.obj, _ = c.led.Object(res.Response.Object)
			t.created = c.created(t.obj)
		}
	}
	t.fate = t.fateOf(closes)
	return t
}

// planned is the reply the turn's fate leaves to record.
func (t createTurn) planned() planned {
	switch t.fate {
	case fateClose:
		return planned{wire: export.WireClosed}
	case fateDeliver:
		return planned{wire: export.WireDelivered, status: t.status, err: t.aerr, shown: t.shown}
	}
	return planned{wire: export.WireHeld}
}

// heldEnded records how held request i of core c ended, now: a call whose
// cancellation came was cancelled, whatever closed after it.
func (s *Server) heldEnded(c *core, i int, how string) {
	s.lockNow()
	defer s.mu.Unlock()
	if c != s.c {
		return
	}
	if c.holdOver(i) {
		return
	}
	if how == export.HeldClientClosed && c.perRequestCall(i) {
		// Without sessions the closing of the call's stream is its
		// cancellation.
		s.cancelled(c, i, streamCancel)
	}
	s.setHeld(c, i, c.holdEnd(i, how))
}

// setHeld records, and logs, how held request i of core c ended. The
// caller holds mu.
func (s *Server) setHeld(c *core, i int, end export.HeldEnd) {
	seq := c.setHeld(i, end)
	if s.failed == nil {
		_ = s.write(entry(logEntry{Held: &heldEntry{Seq: seq, HeldEnd: end}}))
	}
}
