package serve

import (
	"bytes"
	"net/http"
	"net/url"
	"testing"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// A session re-submitted to a fresh ledger gives the same session, byte
// for byte, for every fault, reads, refusals and the clock's own work.
func TestReplayReproduces(t *testing.T) {
	for _, c := range missions.ShortContracts {
		t.Run(string(c), func(t *testing.T) {
			g := newRig(t, Options{Contract: c, Faults: missions.Fixtures, Delay: 2, Resolve: ledger.Failed})
			for range missions.Fixtures {
				g.create("k")
				g.create("k2-" + g.clock.Now().String())
				g.clock.Add(DefaultTick)
			}
			g.do(g.quick, http.MethodGet, "/v1/refunds?charge=ch_1042&limit=3", "", nil)
			g.do(g.quick, http.MethodGet, "/v1/refunds/re_0001", "", nil)
			g.do(g.quick, http.MethodGet, "/v1/refunds/re_0999", "", nil)
			g.do(g.quick, http.MethodPost, "/v1/refunds", "k", url.Values{"amount": {"1"}})
			g.do(g.quick, http.MethodPost, ControlPrefix+"advance", "", url.Values{"ticks": {"200000"}})
			g.create("k")
			g.do(g.quick, http.MethodPost, ControlPrefix+"faults", "", url.Values{"faults": {"pending,late_commit"}})
			g.create("k3")
			g.create("k4")
			s := g.srv.Finish()
			again, err := Replay(s)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := export.MarshalSession(s)
			got, _ := export.MarshalSession(again)
			if !bytes.Equal(want, got) {
				t.Fatalf("the replay differs:\nrecorded %s\nreplayed %s", want, got)
			}
			// And the file reads back as it was written.
			back, err := export.UnmarshalSession("session.json", want)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := export.MarshalSession(back); !bytes.Equal(b, want) {
				t.Fatal("the session does not read back as written")
			}
		})
	}
}

// A session whose record was edited does not replay as recorded.
func TestReplayCatchesAnEdit(t *testing.T) {
	g := newRig(t, Options{Faults: []missions.Fixture{missions.TimeoutAfterCommit}})
	g.create("k")
	g.create("k")
	s := g.srv.Finish()
	s.Requests[0].Fixture = missions.TimeoutBeforeCommit
	again, err := Replay(s)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := export.MarshalSession(s)
	got, _ := export.MarshalSession(again)
	if bytes.Equal(want, got) {
		t.Fatal("an edited fixture replayed as recorded")
	}
}
