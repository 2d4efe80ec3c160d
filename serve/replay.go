package serve

import (
	"fmt"
	"net/url"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/serve/internal/boltlog"
)

// Replay re-submits a recorded session's requests to a fresh ledger, each
// at its tick, and returns the session that gives: the same as the
// recording when the faults (from the mission, the list, or the control
// endpoint's changes) and the ledger's rules answer every request as they
// did. What the client did (which requests it sent, when it gave up) is
// the recording's; everything the provider decided is worked out again:
// each action and response, what each reply showed, what the clock made
// happen, the final ledger and the verdicts.
func Replay(s *export.Session) (*export.Session, error) {
	return ReplaySteps(s, nil)
}

// Stand is the provider as it stood right after one request of a replay:
// its ledger, the verdicts it could reach then, and how many of the
// session's changes the clock had made by then.
type Stand struct {
	Ledger  ledger.Snapshot
	Outcome missions.Outcome
	Changes int
}

// ReplaySteps is Replay that hands after, when it is not nil, the
// provider as it stood after each request (i from 0): what the lab shows
// a recorded client's run step by step with.
func ReplaySteps(s *export.Session, after func(i int, at Stand)) (*export.Session, error) {
	c, err := coreFor(s.Settings, s.Mission)
	if err != nil {
		return nil, err
	}
	c.session.Started = s.Started
	if t, err := time.Parse(time.RFC3339Nano, s.Started); err == nil {
		c.start = t
	}
	for i, r := range s.Requests {
		if err := c.apply(r); err != nil {
			return nil, err
		}
		if after != nil {
			after(i, Stand{Ledger: c.led.Snapshot(), Outcome: c.outcome(), Changes: len(c.session.Changes)})
		}
	}
	c.advanceTo(s.Tick)
	if !s.Settled {
		return c.snapshot(), nil
	}
	return c.settled(), nil
}

// coreFor is a fresh provider core under recorded settings.
func coreFor(set export.SessionSettings, m *missions.Mission) (*core, error) {
	o := Options{
		Contract:    set.Contract,
		Profile:     set.Profile,
		Tick:        time.Duration(set.TickMillis) * time.Millisecond,
		Mission:     m,
		Faults:      set.Faults,
		ReadFaults:  set.ReadFaults,
		IntentField: set.IntentField,
		Wire:        wireOfSession(set),
		// The recorded digests are taken as they are; this only keeps
		// the setting as recorded.
		MetadataOutsideDigest: !set.MetadataInDigest,
		Delay:                 set.Delay,
		Resolve:               set.Resolve,
	}
	if o.Mission != nil {
		o.Faults, o.ReadFaults = nil, nil
	}
	c, err := newCore(o)
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	// The recorded retention, whatever mapping of time made it.
	if c.led, err = ledger.New(ledger.Config{Profile: c.opts.Profile, Retention: set.Retention}); err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	c.session.Settings = set
	return c, nil
}

// apply takes one recorded request again, at its tick: the provider's
// part is worked out anew, the client's (what became of the reply) is as
// recorded.
func (c *core) apply(r export.SessionRequest) error {
	if err := c.applyKind(r); err != nil {
		return err
	}
	if r.Again > 0 && !c.again(c.reqs.len()-1, r.Again) {
		// The requests it counts came as it did, answered alike.
		return fmt.Errorf("request %d: again %d: the requests it counts were answered alike, but here they cannot be (it met a fault, a read fault falls among them, or it is not a read or a refused request)", r.Seq, r.Again)
	}
	if r.Call != nil {
		// The tool call that carried it is the client's, as recorded.
		c.setCall(c.reqs.len()-1, r.Call)
	}
	if r.Traceparent != "" || r.Held != nil || r.Kind == export.RequestCreate {
		// So are the trace context it sent, how its held reply ended, and
		// what a create repeated: when it came against the earlier reply
		// is the client's timing.
		last := c.reqs.get(c.reqs.len() - 1)
		last.Traceparent, last.Held, last.Repeat = r.Traceparent, r.Held, r.Repeat
		c.reqs.set(c.reqs.len()-1, last)
	}
	return nil
}

// applyKind is apply by the request's kind.
func (c *core) applyKind(r export.SessionRequest) error {
	c.advanceTo(r.Tick)
	switch r.Kind {
	case export.RequestCreate:
		i, w, res := c.create(r.Intent, r.Key, r.Digest, r.Payload, c.plan.take(r.Intent), r.Call)
		if r.Wire != export.WireDelivered || !w.Delivers(res) {
			c.replied(i, r.Wire, 0, nil, nil)
			break
		}
		status, e, shown := replyTo(res, c.opts.Profile)
		c.replied(i, r.Wire, status, e, shown)
	case export.RequestFaults:
		q, err := url.ParseQuery(r.Payload)
		var faults []missions.Fixture
		var e *refusal
		if err == nil {
			faults, e = parseFaultList(q["faults"])
		}
		if err != nil || e != nil {
			return fmt.Errorf("request %d: the faults %q do not read as a fault list", r.Seq, r.Payload)
		}
		c.setFaults(faults)
		last := c.reqs.get(c.reqs.len() - 1)
		last.Wire = r.Wire
		c.reqs.set(c.reqs.len()-1, last)
	case export.RequestRefused:
		i := c.log(export.SessionRequest{Kind: r.Kind, Intent: r.Intent, Key: r.Key, Cut: r.Cut})
		q := c.reqs.get(i)
		q.Wire, q.Status, q.Error = r.Wire, r.Status, r.Error
		c.reqs.set(i, q)
	case export.RequestRetrieve:
		rs := c.plan.takeRead()
		world := rs.World()
		obj, found := c.retrieveSeen(r.Payload, world)
		// The refund's intent is cut as it was when served; the id is
		// as recorded, cut or not.
		rr := readRequest(r.Kind, obj.Intent, "")
		rr.Payload, rr.Cut = r.Payload, rr.Cut || r.Cut
		i := c.log(rr)
		c.readFaulted(i, rs)
		switch {
		case r.Wire != export.WireDelivered:
			c.replied(i, r.Wire, 0, nil, nil)
		case world.Code != ledger.CodeOK:
			c.replied(i, r.Wire, world.Code, readError(), nil)
		case !found:
			c.replied(i, r.Wire, 404, notFound(r.Payload), nil)
		default:
			c.replied(i, r.Wire, 200, nil, shownOf(obj))
		}
	case export.RequestList:
		if r.Cut {
			// Only the query's start was kept: what the reply showed is
			// taken as recorded.
			rs := c.plan.takeRead()
			i := c.log(export.SessionRequest{Kind: r.Kind, Intent: r.Intent, Payload: r.Payload, Cut: true})
			c.readFaulted(i, rs)
			var e *refusal
			if rs.World().Code != ledger.CodeOK {
				e = readError()
			}
			c.replied(i, r.Wire, r.Status, e, r.Shown)
			break
		}
		q, err := url.ParseQuery(r.Payload)
		if err != nil {
			return fmt.Errorf("request %d: the list's query %q: %w", r.Seq, r.Payload, err)
		}
		lq, e := parseList(q, c.opts.IntentField)
		if e != nil {
			return fmt.Errorf("request %d: the list's query %q: %s", r.Seq, r.Payload, e.why)
		}
		i, page, _, world, e := c.listLogged(lq, r.Payload)
		if e != nil {
			return fmt.Errorf("request %d: the list's query %q: %s", r.Seq, r.Payload, e.why)
		}
		var shown []missions.EvidenceObject
		for _, obj := range page {
			shown = append(shown, shownOf(obj)...)
		}
		switch {
		case r.Wire != export.WireDelivered:
			c.replied(i, r.Wire, 0, nil, nil)
		case world.Code != ledger.CodeOK:
			c.replied(i, r.Wire, world.Code, readError(), nil)
		default:
			c.replied(i, r.Wire, 200, nil, shown)
		}
	case export.RequestUpdate:
		id, changes, err := parseUpdatePayload(r.Payload)
		if err != nil {
			return fmt.Errorf("request %d: the update %q does not read: %v", r.Seq, r.Payload, err)
		}
		i, o, e := c.update(id, changes)
		q := c.reqs.get(i)
		q.Payload = r.Payload
		if e != nil {
			// A session from before refused updates were logged as
			// refused keeps them as updates: keep it as recorded.
			q.Kind, q.Intent = r.Kind, r.Intent
		}
		c.reqs.set(i, q)
		c.repliedObject(i, r.Wire, o, e)
	case export.RequestCancel:
		i, o, e := c.cancel(r.Payload)
		c.repliedObject(i, r.Wire, o, e)
	}
	return nil
}

// repliedObject records the reply to an update or a cancel: the refund as
// it stands, or the error.
func (c *core) repliedObject(i int, wire string, o ledger.Object, e *refusal) {
	switch {
	case wire != export.WireDelivered:
		c.replied(i, wire, 0, nil, nil)
	case e != nil:
		c.replied(i, wire, e.status(), e, nil)
	default:
		c.replied(i, wire, 200, nil, shownOf(o))
	}
}

// Rerecord replays s and returns the session as it was recorded and as
// its replay records it, both as MarshalSession writes them: equal bytes
// mean the session reproduces.
func Rerecord(s *export.Session) (recorded, replayed []byte, err error) {
	again, err := Replay(s)
	if err != nil {
		return nil, nil, err
	}
	if recorded, err = export.MarshalSession(s); err != nil {
		return nil, nil, err
	}
	replayed, err = export.MarshalSession(again)
	return recorded, replayed, err
}

// replay takes one entry of a storage's log again, as a reopen does:
// confirmed holds the seqs of the replies the log knows were written, and
// a reply decided but never confirmed is taken as never delivered
// (unconfirmed). A clock move by the control endpoint is the server's
// (Server.offset); what the clock did up to the entry's tick was written
// with it.
func (c *core) replay(e logEntry, confirmed map[int]bool) (unconfirmed bool, err error) {
	switch {
	case e.Request != nil:
		r := *e.Request
		if r.Kind != export.RequestFaults && r.Wire == export.WireDelivered && !confirmed[r.Seq] {
			r.Wire, unconfirmed = export.WireGone, true
		}
		if err := c.apply(r); err != nil {
			return false, fmt.Errorf("replaying its log: %w", err)
		}
	case e.Again != 0:
		if !c.again(e.Again-1, 1) {
			return false, boltlog.Damaged(fmt.Sprintf("a log entry counts request %d again, which its log cannot count (only a read or a refused request that met no fault, before the next read fault)", e.Again))
		}
	case e.Cancel != nil && e.Cancel.Seq >= 1 && e.Cancel.Seq <= c.reqs.len():
		if r := c.reqs.get(e.Cancel.Seq - 1); r.Call != nil {
			call := *r.Call
			call.Cancelled = &e.Cancel.Cancellation
			c.setCall(e.Cancel.Seq-1, &call)
		}
	case e.Held != nil && e.Held.Seq >= 1 && e.Held.Seq <= c.reqs.len():
		r := c.reqs.get(e.Held.Seq - 1)
		r.Held = &e.Held.HeldEnd
		c.reqs.set(e.Held.Seq-1, r)
	}
	c.advanceTo(e.Tick)
	return unconfirmed, nil
}

// endHolds ends every hold a reopened log never saw end: the process
// ended while it was held, so it was still held when serve stopped.
func (c *core) endHolds() {
	for i := range c.reqs.len() {
		if r := c.reqs.get(i); r.Wire == export.WireHeld && r.Held == nil {
			r.Held = &export.HeldEnd{How: export.HeldServeStopped, Tick: c.led.Now()}
			c.reqs.set(i, r)
		}
	}
}

// state is every refund and live key, as a storage keeps them beside its
// log.
func (c *core) state() ([]ledger.Object, []ledger.Record) {
	snap := c.led.Snapshot()
	return snap.Objects, snap.Records
}

// recovered builds the lists' index of a reopened core, now rather than at
// the first list, and says what the reopen rebuilt: requests, refunds,
// and late commits still executing.
func (c *core) recovered() (requests, refunds, inFlight int) {
	c.index.sync(c.led)
	return c.reqs.len(), c.led.Objects(), len(c.led.View().InFlight)
}

// keepPayloadForm keeps payloads in the form a reopened storage recorded
// them in, whatever a new one would use.
func (c *core) keepPayloadForm(utf8 bool) { c.session.Settings.PayloadUTF8 = utf8 }

// wireOfSession is the wire a session's settings were served on, as far
// as replaying its core needs: Stripe's when its intent field is one
// Stripe's wire takes, else its profile's own.
func wireOfSession(set export.SessionSettings) string {
	if checkIntentField(set.IntentField) == nil {
		return WireStripe
	}
	return WireOf(set.Profile)
}
