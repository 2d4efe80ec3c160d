package serve

import (
	"fmt"
	"net/url"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// Replay re-submits a recorded session's requests to a fresh ledger, each
// at its tick, and returns the session that gives: the same as the
// recording when the faults (from the mission, the list, or the control
// endpoint's changes) and the ledger's rules answer every request as they
// did. What the client did (which requests it sent, when
// it gave up) is the recording's; everything the provider decided is
// worked out again: each action and response, what each reply showed,
// what the clock made happen, the final ledger and the verdicts.
func Replay(s *export.Session) (*export.Session, error) {
	o := Options{
		Contract:    s.Settings.Contract,
		Tick:        time.Duration(s.Settings.TickMillis) * time.Millisecond,
		Mission:     s.Mission,
		Faults:      s.Settings.Faults,
		IntentField: s.Settings.IntentField,
		Delay:       s.Settings.Delay,
		Resolve:     s.Settings.Resolve,
	}
	if o.Mission != nil {
		o.Faults = nil
	}
	c, err := newCore(o)
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	// The recorded retention, whatever mapping of time made it.
	if c.led, err = ledger.New(ledger.Config{Contract: s.Settings.Contract, Retention: s.Settings.Retention}); err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	c.session.Settings = s.Settings
	for _, r := range s.Requests {
		c.advanceTo(r.Tick)
		switch r.Kind {
		case export.RequestCreate:
			i, w, res := c.create(r.Intent, r.Key, r.Digest, r.Payload, c.plan.take(r.Intent))
			if r.Wire != export.WireDelivered || !w.Reaches || w.Reply != missions.ReplyDelivered || res.Action == ledger.Executing {
				c.replied(i, r.Wire, 0, nil, nil)
				continue
			}
			if res.Response.Code == ledger.CodeOK {
				c.replied(i, r.Wire, 200, nil, []missions.EvidenceObject{{Object: res.Response.Object, Status: res.Response.Status}})
				continue
			}
			e := providerError(res)
			c.replied(i, r.Wire, e.Status, e, nil)
		case export.RequestFaults:
			q, err := url.ParseQuery(r.Payload)
			var faults []missions.Fixture
			var e *apiError
			if err == nil {
				faults, e = parseFaultList(q["faults"])
			}
			if err != nil || e != nil {
				return nil, fmt.Errorf("request %d: the faults %q do not read as a fault list", r.Seq, r.Payload)
			}
			c.plan = newPlan(Options{Faults: faults, Delay: o.Delay, Resolve: o.Resolve})
			i := c.log(export.SessionRequest{Kind: r.Kind, Payload: faultsPayload(faults)})
			c.session.Requests[i].Wire, c.session.Requests[i].Status = r.Wire, r.Status
		case export.RequestRefused:
			i := c.log(export.SessionRequest{Kind: r.Kind, Intent: r.Intent, Key: r.Key})
			c.session.Requests[i].Wire, c.session.Requests[i].Status, c.session.Requests[i].Error = r.Wire, r.Status, r.Error
		case export.RequestRetrieve:
			obj, found := c.retrieve(r.Payload)
			i := c.log(export.SessionRequest{Kind: r.Kind, Intent: obj.Intent, Payload: r.Payload})
			if r.Wire != export.WireDelivered {
				c.replied(i, r.Wire, 0, nil, nil)
				continue
			}
			if !found {
				c.replied(i, r.Wire, 404, &apiError{Type: "invalid_request_error", Code: "resource_missing"}, nil)
				continue
			}
			c.replied(i, r.Wire, 200, nil, []missions.EvidenceObject{{Object: obj.ID, Status: obj.Status}})
		case export.RequestList:
			q, err := url.ParseQuery(r.Payload)
			if err != nil {
				return nil, fmt.Errorf("request %d: the list's query %q: %w", r.Seq, r.Payload, err)
			}
			lq, e := parseList(q, s.Settings.IntentField)
			if e != nil {
				return nil, fmt.Errorf("request %d: the list's query %q: %s", r.Seq, r.Payload, e.Message)
			}
			page, _ := c.list(lq)
			var shown []missions.EvidenceObject
			for _, obj := range page {
				shown = append(shown, missions.EvidenceObject{Object: obj.ID, Status: obj.Status})
			}
			i := c.log(export.SessionRequest{Kind: r.Kind, Intent: lq.intent, Payload: r.Payload})
			if r.Wire != export.WireDelivered {
				c.replied(i, r.Wire, 0, nil, nil)
				continue
			}
			c.replied(i, r.Wire, 200, nil, shown)
		}
	}
	if s.Settled {
		c.settle()
	} else {
		c.advanceTo(s.Ledger.Tick)
	}
	out := c.snapshot()
	out.Settled = s.Settled
	return out, nil
}
