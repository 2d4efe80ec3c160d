package serve

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// ledgerOf is a provider holding n refunds, of a few intents, charges and
// payment intents, made over the ticks (some pending, some late).
func ledgerOf(tb interface{ Fatal(...any) }, n int, intents, charges int, faults []missions.Fixture) *Server {
	clock := newFakeClock()
	srv, err := New(Options{Now: clock.Now, Faults: faults, Hold: time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		form := url.Values{"amount": {"100"}, "metadata[intent]": {fmt.Sprintf("intent-%d", i%intents)}}
		if i%3 == 0 {
			form.Set("payment_intent", fmt.Sprintf("pi_%d", i%charges))
		} else {
			form.Set("charge", fmt.Sprintf("ch_%d", i%charges))
		}
		params, e := decodeRefund(form)
		if e != nil {
			tb.Fatal(e.why)
		}
		if _, _, err := srv.takeCreate(createRequest{principal: "sk", intent: form.Get("metadata[intent]"), params: params}, true); err != nil {
			tb.Fatal(err)
		}
		if i%7 == 0 {
			clock.Add(time.Second)
		}
	}
	return srv
}

// TestIndexedListsAreTheScan: a list read through the index gives the
// page, the has_more and the refusal that reading every refund gives, for
// any filter, cursor, limit, created range and lag.
func TestIndexedListsAreTheScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 60).Draw(t, "refunds")
		srv := ledgerOf(t, n, rapid.IntRange(1, 5).Draw(t, "intents"), rapid.IntRange(1, 4).Draw(t, "charges"),
			[]missions.Fixture{missions.Success, missions.PendingFixture, missions.LateCommit, missions.Success})
		c := srv.c
		c.advanceTo(c.led.Now() + rapid.IntRange(0, 5).Draw(t, "advance"))
		lq := listQuery{limit: rapid.IntRange(1, 12).Draw(t, "limit"), from: -1 << 62, to: 1 << 62}
		if rapid.Bool().Draw(t, "by intent") {
			lq.intent = fmt.Sprintf("intent-%d", rapid.IntRange(0, 6).Draw(t, "intent"))
		}
		if rapid.Bool().Draw(t, "by charge") {
			lq.charge = fmt.Sprintf("ch_%d", rapid.IntRange(0, 5).Draw(t, "charge"))
		}
		if rapid.Bool().Draw(t, "by payment intent") {
			lq.paymentIntent = fmt.Sprintf("pi_%d", rapid.IntRange(0, 5).Draw(t, "pi"))
		}
		cursor := func() string { return ledger.ObjectID(rapid.IntRange(1, n+2).Draw(t, "cursor")).String() }
		switch rapid.IntRange(0, 3).Draw(t, "paging") {
		case 1:
			lq.after = cursor()
		case 2:
			lq.before = cursor()
		}
		if rapid.Bool().Draw(t, "created range") {
			base := c.start.Unix()
			lq.from = base + int64(rapid.IntRange(0, 5).Draw(t, "from"))
			lq.to = lq.from + int64(rapid.IntRange(0, 5).Draw(t, "span"))
		}
		world := missions.ReadStep{}.World()
		if rapid.Bool().Draw(t, "lagging") {
			world = missions.ReadStep{Fault: missions.ReadLagging, Lag: rapid.IntRange(1, 4).Draw(t, "lag")}.World()
		}
		gotPage, gotMore, gotErr := c.listSeen(lq, world)
		wantPage, wantMore, wantErr := c.listScan(lq, world)
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.why != wantErr.why) {
			t.Fatalf("%+v: refusal %v, the scan's %v", lq, gotErr, wantErr)
		}
		if !slices.EqualFunc(gotPage, wantPage, func(a, b ledger.Object) bool { return a.ID == b.ID && a.Status == b.Status }) || gotMore != wantMore {
			t.Fatalf("%+v: page %v more %v, the scan's %v more %v", lq, ids(gotPage), gotMore, ids(wantPage), wantMore)
		}
	})
}

func ids(os []ledger.Object) []ledger.ObjectID {
	var out []ledger.ObjectID
	for _, o := range os {
		out = append(out, o.ID)
	}
	return out
}

// BenchmarkListOnePage: a list of one page from a ledger of 100,000
// refunds, through the index against the scan it replaces, for the
// newest page, one intent's and one charge's (the goal: at most
// 5 ms).
func BenchmarkListOnePage(b *testing.B) {
	srv := ledgerOf(b, 100_000, 50_000, 1_000, nil)
	c := srv.c
	world := missions.ReadStep{}.World()
	// The index is built as refunds come (and once after a restart's
	// replay): timed here is the list alone.
	c.index.sync(c.led)
	for _, q := range []struct {
		name string
		lq   listQuery
	}{
		{"newest", listQuery{limit: 1}},
		{"intent", listQuery{limit: 10, intent: "intent-123"}},
		{"charge", listQuery{limit: 10, charge: "ch_7"}},
	} {
		q.lq.from, q.lq.to = -1<<62, 1<<62
		for _, way := range []struct {
			name string
			list func(listQuery, missions.ReadWorld) ([]ledger.Object, bool, *refusal)
		}{{"indexed", c.listSeen}, {"scan", c.listScan}} {
			b.Run(q.name+"/"+way.name, func(b *testing.B) {
				for b.Loop() {
					if page, _, err := way.list(q.lq, world); err != nil || len(page) == 0 {
						b.Fatalf("%v %v", page, err)
					}
				}
			})
		}
	}
}

// BenchmarkState: GET /_replaylab/state on a ledger of 100,000 refunds
// of 50,000 intents. Its answer holds a verdict per intent, so it is
// proportional to the intents; what it no longer does is read every
// request and copy the ledger.
func BenchmarkState(b *testing.B) {
	srv := ledgerOf(b, 100_000, 50_000, 1_000, nil)
	for b.Loop() {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, ControlPrefix+"state", nil))
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}
