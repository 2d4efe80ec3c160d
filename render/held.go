package render

import (
	"sort"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// Held is what stood in the ledger right after one event: the objects
// created by then that had not ended failed.
type Held struct {
	// Count is how many objects stood.
	Count int
	// Head is the first of them, in the order they were created: all of
	// them when they are few, else as many as were asked for.
	Head []ledger.ObjectID
	// Last is the newest object that stood when Head does not reach it,
	// else 0.
	Last ledger.ObjectID
}

// IDs lists the objects as text, with "…" where some were left out.
func (h Held) IDs() []string {
	out := make([]string, 0, len(h.Head)+2)
	for _, id := range h.Head {
		out = append(out, id.String())
	}
	if h.Last != 0 {
		out = append(out, "…", h.Last.String())
	}
	return out
}

// HeldAfter says, for every event of a case in order, which objects stood
// in the ledger right after it. Objects are numbered as they are created,
// and the events say when that happens (an attempt the provider committed,
// a late commit) and how many effects stood; the final ledger says which
// objects ended failed and when. Together they give the ledger at every
// event: the first objects created, less the ones that had failed by
// then. An object that ended failed is not counted in the effects, so the
// newest objects are not always the ones that stand. Where more than most
// stand, Head holds the first few of them (at least one, fewer than most)
// and Last the newest.
func HeldAfter(c *missions.Case, most, few int) []Held {
	most = max(most, 2)
	few = max(1, min(few, most-1))
	objs := c.Ledger.Objects
	// The objects that ended failed, in the order they failed: the ledger
	// resolves pending objects tick by tick, in the order they were made.
	var failedOrder []int
	for i, o := range objs {
		if !o.Status.Stands() {
			failedOrder = append(failedOrder, i)
		}
	}
	sort.SliceStable(failedOrder, func(a, b int) bool {
		return objs[failedOrder[a]].ResolveAt < objs[failedOrder[b]].ResolveAt
	})
	gone := make([]bool, len(objs))
	failed, created := 0, 0
	out := make([]Held, len(c.Events))
	for i, ev := range c.Events {
		if ev.Kind == missions.EventCommit || ev.Kind == missions.EventAttempt && ev.Provider == string(ledger.Committed) {
			created = min(created+1, len(objs))
		}
		// Whatever was created and does not stand has failed.
		want := max(0, min(created-ev.Effects, len(failedOrder)))
		for ; failed < want; failed++ {
			gone[failedOrder[failed]] = true
		}
		for ; failed > want; failed-- {
			gone[failedOrder[failed-1]] = false
		}
		out[i] = heldOf(objs, gone, failedOrder, failed, created, most, few)
	}
	return out
}

// heldOf lists the objects among the first created that are not gone;
// failed is how many are gone. It looks at no more objects than it
// lists and skips, so a long run costs no more than its output.
func heldOf(objs []ledger.Object, gone []bool, failedOrder []int, failed, created, most, few int) Held {
	h := Held{Count: created}
	for _, j := range failedOrder[:failed] {
		if j < created {
			h.Count--
		}
	}
	for j := 0; j < created && len(h.Head) < most; j++ {
		if !gone[j] {
			h.Head = append(h.Head, objs[j].ID)
		}
	}
	if h.Count > most {
		h.Head = h.Head[:few]
		for j := created - 1; j >= 0; j-- {
			if !gone[j] {
				h.Last = objs[j].ID
				break
			}
		}
	}
	return h
}
