package serve

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// TestHeldRepliesSayHowTheyEnded: every held reply records what ended its
// hold, and when: the client's cancellation, the client closing its
// connection or stream without a word, the end of its MCP session, the
// provider's cap on a hold, and serve stopping.
func TestHeldRepliesSayHowTheyEnded(t *testing.T) {
	lost := []missions.Fixture{missions.TimeoutAfterCommit}
	heldEnd := func(g *rig) *export.HeldEnd { return g.srv.Session().Requests[0].Held }
	waitHow := func(t *testing.T, g *rig, want string) {
		t.Helper()
		waitFor(t, "the held reply's end", func() bool { return heldEnd(g) != nil })
		s := g.srv.Session()
		r := s.Requests[0]
		if r.Wire != export.WireHeld || r.Held.How != want || r.Held.Tick < r.Tick {
			t.Fatalf("wire %s, held end %+v (request at tick %d), want %s", r.Wire, *r.Held, r.Tick, want)
		}
	}
	t.Run("a cancellation received", func(t *testing.T) {
		g := newRig(t, Options{MCP: true, Faults: lost})
		if _, err := call(t, g.agent(), ToolCreate, args1042("k1"), 200*time.Millisecond); err == nil {
			t.Fatal("the lost reply answered")
		}
		// The go-sdk closes the call's stream, then sends its cancellation:
		// the hold ends on the first, and is named for the second.
		waitFor(t, "the cancellation", func() bool {
			r := g.srv.Session().Requests[0]
			return r.Call != nil && r.Call.Cancelled != nil
		})
		waitHow(t, g, export.HeldCancelled)
	})
	t.Run("an MCP stream closed by the client, without a word", func(t *testing.T) {
		g := newRig(t, Options{MCP: true, Faults: lost})
		cs := g.agent()
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"create_refund","arguments":{"intent":"refund-1042","charge":"ch_1042","amount":4500}}}`
		if _, _, err := g.rawPost(cs.ID(), body, 200*time.Millisecond); err == nil {
			t.Fatal("the lost reply answered")
		}
		waitHow(t, g, export.HeldClientClosed)
	})
	t.Run("a REST connection closed by the client", func(t *testing.T) {
		g := newRig(t, Options{Faults: lost})
		if a := g.do(g.quick, http.MethodPost, "/v1/refunds", "k1", refund1042()); !a.timedOut() {
			t.Fatalf("the lost reply answered: %+v", a)
		}
		waitHow(t, g, export.HeldClientClosed)
	})
	t.Run("the MCP session ended", func(t *testing.T) {
		g := newRig(t, Options{MCP: true, Faults: lost})
		cs := g.agent()
		go func() { _, _ = call(t, cs, ToolCreate, args1042("k1"), 5*time.Second) }()
		waitFor(t, "the call to be held", func() bool {
			s := g.srv.Session()
			return len(s.Requests) == 1 && s.Requests[0].Wire == export.WireOpen
		})
		req, _ := http.NewRequest(http.MethodDelete, g.http.URL+MCPPath, nil)
		req.Header.Set("Mcp-Session-Id", cs.ID())
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
		waitHow(t, g, export.HeldSessionEnded)
	})
	t.Run("the hold's cap", func(t *testing.T) {
		g := newRig(t, Options{Faults: lost, Hold: 100 * time.Millisecond})
		patient := &http.Client{Timeout: 5 * time.Second}
		if a := g.do(patient, http.MethodPost, "/v1/refunds", "k1", refund1042()); a.err == nil {
			t.Fatalf("the lost reply answered: %d", a.status)
		}
		waitHow(t, g, export.HeldCap)
	})
	t.Run("still held when serve stopped", func(t *testing.T) {
		g := newRig(t, Options{Faults: lost})
		patient := &http.Client{Timeout: 5 * time.Second}
		done := make(chan answer, 1)
		go func() { done <- g.do(patient, http.MethodPost, "/v1/refunds", "k1", refund1042()) }()
		waitFor(t, "the create to be held", func() bool {
			s := g.srv.Session()
			return len(s.Requests) == 1 && s.Requests[0].Wire == export.WireOpen
		})
		g.srv.Release()
		<-done
		waitHow(t, g, export.HeldServeStopped)
	})
}

// TestHeldEndsOutliveAReopen: a --db keeps how each hold ended; a hold
// whose end was never written (the process went first) reads as still
// held when serve stopped.
func TestHeldEndsOutliveAReopen(t *testing.T) {
	db := t.TempDir() + "/refunds.db"
	clock := newFakeClock()
	lost := []missions.Fixture{missions.TimeoutAfterCommit, missions.TimeoutAfterCommit}
	g, _ := openRig(t, Options{Faults: lost}, db, clock)
	if a := g.do(g.quick, http.MethodPost, "/v1/refunds", "k1", refund1042()); !a.timedOut() {
		t.Fatalf("the lost reply answered: %+v", a)
	}
	waitFor(t, "the first hold's end", func() bool { return g.srv.Session().Requests[0].Held != nil })
	g.stop()

	g, _ = openRig(t, Options{Faults: lost}, db, clock)
	if h := g.srv.Session().Requests[0].Held; h == nil || h.How != export.HeldClientClosed {
		t.Fatalf("after a reopen the hold's end is %+v, want client_closed", h)
	}
	// A second hold, whose end the log never gets: the store takes no
	// write from the moment it is held, as a process that died would.
	patient := &http.Client{Timeout: 5 * time.Second}
	done := make(chan answer, 1)
	go func() { done <- g.do(patient, http.MethodPost, "/v1/refunds", "k2", refund1042()) }()
	waitFor(t, "the second create to be held", func() bool {
		s := g.srv.Session()
		return len(s.Requests) == 2 && s.Requests[1].Wire == export.WireOpen
	})
	g.srv.mu.Lock()
	g.srv.failed = errors.New("the process died (test)")
	g.srv.mu.Unlock()
	g.srv.Release()
	<-done
	g.stop()
	g, _ = openRig(t, Options{Faults: lost}, db, clock)
	s := g.srv.Session()
	if h := s.Requests[1].Held; h == nil || h.How != export.HeldServeStopped {
		t.Fatalf("a hold whose end was never written reads as %+v, want serve_stopped", h)
	}
	if h := s.Requests[0].Held; h == nil || h.How != export.HeldClientClosed {
		t.Fatalf("the first hold's end became %+v", h)
	}
}
