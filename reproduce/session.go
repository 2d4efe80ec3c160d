package reproduce

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/serve"
)

// Session replays a session recorded by serve or conform, re-submitting
// each request at its tick with the fault it met to a fresh provider, and
// returns the first difference between the recording and the replay, in
// words, or "" when they are the same.
func Session(s *export.Session) (string, error) {
	want, got, err := serve.Rerecord(s)
	if err != nil {
		return "", err
	}
	return difference(want, got, "session", func(path []string) string { return strings.Join(path, ".") }), nil
}

// Document replays a case or a session, whichever the file held.
func Document(d export.Document) (string, error) {
	if d.Session != nil {
		return Session(d.Session)
	}
	return Case(d.Case)
}

// SessionRun is a session told step by step, as the lab steps a mission:
// Steps[k] is the request of step k+1, and Views[k] the run as it stood
// after k steps, each a case as AsCase makes one. The last view is the
// whole session; the step before it the last request, and the step after
// it the clock running out (or, in a session taken while serving, the
// session as it was taken).
type SessionRun struct {
	Steps []export.SessionRequest
	Views []*missions.Case
	// Settled: the last view is the session with its clock run on until
	// nothing was in motion.
	Settled bool
}

// MaxRunSteps is how many requests a session may hold to be told step by
// step: each step keeps the ledger as it stood, and the records of each
// intent gone wrong are read anew at every step, so a longer session is
// read by replay, compare and check instead. A conform row sends tens;
// BenchmarkRunLongestSession tells 500 in about 12 ms.
const MaxRunSteps = 500

// Run tells a session step by step: it replays the requests to a fresh
// provider and keeps, after each request the client made, the run as it
// stood then. The session must reproduce (Problems says where it does
// not): each view is what the provider's rules give.
func Run(s *export.Session) (*SessionRun, error) {
	var idx []int
	for i, r := range s.Requests {
		if export.IsStep(r) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil, errors.New("the session holds no request of a client: there is nothing to step through")
	}
	if len(idx) > MaxRunSteps {
		return nil, fmt.Errorf("the session holds %d requests; the lab steps through at most %d (replay, compare or check it instead)", len(idx), MaxRunSteps)
	}
	stands := make([]serve.Stand, len(s.Requests))
	got, err := serve.ReplaySteps(s, func(i int, at serve.Stand) { stands[i] = at })
	if err != nil {
		return nil, err
	}
	// The views are told from the replay, which made each stand: a
	// session that records otherwise is the caller's to refuse (Problems
	// says where), never a view out of step with its ledger.
	if len(got.Requests) != len(s.Requests) {
		return nil, fmt.Errorf("the session's %d requests replay as %d; replaylab replay says where they part", len(s.Requests), len(got.Requests))
	}
	s = got
	// The whole session as a case; each view is it as it stood after k
	// steps: its events up to step k (events come in the order of their
	// steps, and the changes the clock made on its way to a request are
	// that request's step), the ledger and the verdicts of the stand.
	// The events and the mission are shared, not made again per step.
	whole := s.AsCase()
	run := &SessionRun{Settled: s.Settled}
	// at is the view after k steps, the last of them request upTo of
	// the session (-1 before any).
	at := func(k, upTo int, st serve.Stand) *missions.Case {
		v := *whole
		n := sort.Search(len(whole.Events), func(i int) bool { return whole.Events[i].Step > k })
		v.Events = whole.Events[:n:n]
		v.Ledger, v.Outcome = st.Ledger, st.Outcome
		// The client means every intent from the start.
		v.Outcome.Intended = whole.Outcome.Intended
		v.Outcome.Evidence = records(s.Requests[:upTo+1], &v, s.ProfileOf())
		return &v
	}
	run.Views = append(run.Views, at(0, -1, serve.Stand{Outcome: missions.Outcome{Verdicts: []missions.IntentVerdict{}}}))
	for k, i := range idx {
		run.Steps = append(run.Steps, s.Requests[i])
		run.Views = append(run.Views, at(k+1, i, stands[i]))
	}
	last := *whole
	last.Outcome.Evidence = records(s.Requests, whole, s.ProfileOf())
	run.Views = append(run.Views, &last)
	return run, nil
}

// records are what the provider recorded of each intent whose verdict at
// this point is not one a careful client reaches (a duplicate, a hidden
// effect, a phantom): the requests it sent, the reads that showed its
// refunds and its refunds in the ledger, as the evidence screen shows a
// person's bundle.
func records(reqs []export.SessionRequest, c *missions.Case, prof *ledger.Profile) []missions.EvidenceBundle {
	var out []missions.EvidenceBundle
	for _, v := range c.Outcome.Verdicts {
		switch v.Verdict {
		case missions.ExactlyOnce, missions.FailedCleanly:
			continue
		}
		b := missions.EvidenceBundle{Intent: v.Intent, Reason: fmt.Sprintf("%s: %s (what the provider recorded; a recorded client hands nothing over)", v.Verdict, v.Explain()),
			Attempts: []missions.EvidenceAttempt{}, Reads: []missions.EvidenceRead{}, Objects: []missions.EvidenceObject{}}
		mine := map[ledger.ObjectID]bool{}
		for _, o := range c.Ledger.Objects {
			if o.Intent == v.Intent {
				mine[o.ID] = true
				b.Objects = append(b.Objects, missions.EvidenceObject{Object: o.ID, Status: o.Status})
			}
		}
		n := 0
		for _, r := range reqs {
			switch {
			case r.Kind == export.RequestCreate:
				n++
				if r.Intent != v.Intent {
					continue
				}
				if b.Key == "" {
					b.Key = r.Key
				}
				a := missions.EvidenceAttempt{Attempt: n, Tick: r.Tick, Key: r.Key, Payload: r.Payload, Observed: r.Observed(prof)}
				if r.Wire == export.WireDelivered {
					a.Response = r.Response
				}
				b.Attempts = append(b.Attempts, a)
			case r.Wire == export.WireDelivered && len(r.Shown) > 0:
				var found []missions.EvidenceObject
				for _, o := range r.Shown {
					if mine[o.Object] {
						found = append(found, o)
					}
				}
				if len(found) > 0 {
					b.Reads = append(b.Reads, missions.EvidenceRead{Tick: r.Tick, Found: found})
				}
			}
		}
		out = append(out, b.Worded())
	}
	return out
}
