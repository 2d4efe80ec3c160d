package serve

// The core's face: what the server asks of the core beyond a request's
// turn, as methods, so that nothing outside the core reads its fields.

import (
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// mark is where the ledger and its changes stand, to tell what a step
// changed.
func (c *core) mark() mark {
	return mark{objects: c.led.Objects(), changes: len(c.session.Changes)}
}

// now is the ledger's tick.
func (c *core) now() int { return c.led.Now() }

// request is request i of the session, as logged.
func (c *core) request(i int) export.SessionRequest { return c.reqs.get(i) }

// lastRequest is the request logged last.
func (c *core) lastRequest() export.SessionRequest { return c.reqs.get(c.reqs.len() - 1) }

// changedSince is every refund and key that changed since m: touch (an
// object changed in place), the refunds made since, and key and the keys
// among the clock's changes, each as it now stands (a key with no record
// is gone).
func (c *core) changedSince(m mark, key string, touch ledger.ObjectID) ([]ledger.Object, []keyState) {
	var ids []ledger.ObjectID
	if touch != 0 {
		ids = append(ids, touch)
	}
	for id := m.objects + 1; id <= c.led.Objects(); id++ {
		ids = append(ids, ledger.ObjectID(id))
	}
	var names []string
	if key != "" {
		names = append(names, key)
	}
	for _, ch := range c.session.Changes[m.changes:] {
		if ch.Object != 0 {
			ids = append(ids, ch.Object)
		}
		if ch.Key != "" {
			names = append(names, ch.Key)
		}
	}
	refunds := make([]ledger.Object, 0, len(ids))
	for _, id := range ids {
		if o, ok := c.led.Object(id); ok {
			refunds = append(refunds, o)
		}
	}
	keys := make([]keyState, 0, len(names))
	for _, k := range names {
		ks := keyState{key: k}
		if r, ok := c.led.Record(k); ok {
			ks.rec = &r
		}
		keys = append(keys, ks)
	}
	return refunds, keys
}

// readFaultsLeft are the faults the next reads meet, in order.
func (c *core) readFaultsLeft() []missions.ReadStep { return c.plan.readsLeft() }

// faultsLeft are the faults still to come: under "" for a list, per
// intent for a mission.
func (c *core) faultsLeft() map[string][]missions.Fixture { return c.plan.left() }

// startAt sets the wall-clock time of tick 0, from which the session's
// start and a refund's created time are told.
func (c *core) startAt(t time.Time) {
	c.start = t
	c.session.Started = t.UTC().Format(time.RFC3339Nano)
}

// settings are the session's settings.
func (c *core) settings() export.SessionSettings { return c.session.Settings }

// traceNext sets the trace context the request logged next keeps.
func (c *core) traceNext(tp string) { c.trace = tp }

// holdOver reports whether held request i's end is already recorded.
func (c *core) holdOver(i int) bool { return c.reqs.get(i).Held != nil }

// perRequestCall reports whether request i came in a tool call of a
// revision without sessions, whose response stream closing is its
// cancellation.
func (c *core) perRequestCall(i int) bool {
	r := c.reqs.get(i)
	return r.Call != nil && r.Call.Revision != ""
}

// holdEnd is how held request i ends now, by how: a call whose
// cancellation came was cancelled, whatever closed after it.
func (c *core) holdEnd(i int, how string) export.HeldEnd {
	r := c.reqs.get(i)
	if r.Call != nil && r.Call.Cancelled != nil {
		how = export.HeldCancelled
	}
	return export.HeldEnd{How: how, Tick: max(c.led.Now(), r.Tick)}
}

// setHeld records how held request i ended and returns its seq.
func (c *core) setHeld(i int, end export.HeldEnd) int {
	r := c.reqs.get(i)
	r.Held = &end
	c.reqs.set(i, r)
	return r.Seq
}

// cancelCall records that request i's tool call was cancelled now, with
// reason, and returns the cancellation and the request's seq (nil: there
// is no call, or it was cancelled before); held is the end its hold now
// has when the hold ended with the stream's close, which the
// cancellation explains.
func (c *core) cancelCall(i int, reason string) (cancel *export.Cancellation, seq int, held *export.HeldEnd) {
	r := c.reqs.get(i)
	if r.Call == nil || r.Call.Cancelled != nil {
		return nil, 0, nil
	}
	call := *r.Call
	call.Cancelled = &export.Cancellation{Tick: max(c.led.Now(), r.Tick), Reason: reason}
	c.setCall(i, &call)
	if r.Held != nil && r.Held.How == export.HeldClientClosed {
		held = &export.HeldEnd{How: export.HeldCancelled, Tick: r.Held.Tick}
	}
	return call.Cancelled, r.Seq, held
}

// answer marks request i's reply, decided and recorded, as on its way.
func (c *core) answer(i int, p planned) { c.answering[i] = p }

// controlState is the provider's state as GET /_replaylab/state shows it.
func (c *core) controlState() State {
	return State{
		Tick: c.led.Now(), Effects: c.led.Effects(), Objects: c.led.Objects(), Requests: c.reqs.len() - c.faultsLogged,
		FaultsLeft: c.plan.left(), ReadFaultsLeft: c.plan.readsLeft(), Verdicts: c.outcomeAnswered().Verdicts,
	}
}
