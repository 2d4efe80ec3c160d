package reproduce_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/missions/missionstest"
	"github.com/replaylab/replaylab/reproduce"
	"github.com/replaylab/replaylab/serve"
)

// A case run from the catalog reproduces; one edited after the run says
// where the file and the replay part, in words, through Case and Document
// alike.
func TestACaseReproducesAndAnEditIsNamed(t *testing.T) {
	off := false
	c := missionstest.Run(t, "timeout-then-success", missions.Overrides{StableKeys: &off})
	if diff, err := reproduce.Case(c); err != nil || diff != "" {
		t.Fatalf("a fresh case: %q %v", diff, err)
	}
	edited := *c
	edited.Outcome.Effects = 1
	diff, err := reproduce.Document(export.Document{Case: &edited})
	if err != nil || !strings.Contains(diff, "the case file says 1; the replay gives 2") {
		t.Fatalf("an edited case: %q %v", diff, err)
	}
}

// A case of a mission edited in the lab reproduces and makes no false
// claim on the built-in it came from; one whose mission differs from that
// built-in beyond the steps its edit names is said to.
func TestAnEditedCaseIsHeldToItsMission(t *testing.T) {
	base, err := missions.BuiltIn().Get("timeout-then-success")
	if err != nil {
		t.Fatal(err)
	}
	m, err := missions.Edit(base, map[int]missions.Fixture{2: missions.FailureBeforeCommit})
	if err != nil {
		t.Fatal(err)
	}
	c, err := missions.Run(m, m.Settings(missions.Overrides{}))
	if err != nil {
		t.Fatal(err)
	}
	if p := reproduce.Problems("e.json", export.Document{Case: c}); len(p) != 0 {
		t.Fatalf("an edited case: %v", p)
	}
	other := *m
	other.Intents = append([]missions.Intent(nil), m.Intents...)
	other.Intents[0].Label = "a refund of another order"
	if claim := reproduce.BuiltInClaim(&other); !strings.Contains(claim, "beyond the steps its edit names") || !strings.Contains(claim, "intents") {
		t.Fatalf("an edit that changed more than it says: %q", claim)
	}
}

// A session told step by step: one view before the first request, one
// after each, and the whole session last; each view's ledger is the one
// the provider held then.
func TestRunTellsASessionStepByStep(t *testing.T) {
	s := recordedSession(t)
	run, err := reproduce.Run(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Views) != len(run.Steps)+2 || len(run.Steps) == 0 {
		t.Fatalf("%d views for %d steps", len(run.Views), len(run.Steps))
	}
	if v := run.Views[0]; v.Outcome.Effects != 0 || len(v.Ledger.Objects) != 0 {
		t.Fatalf("before any request: %d effects", v.Outcome.Effects)
	}
	if len(run.Steps) != 4 || run.Steps[2].Kind != export.RequestList || run.Steps[3].Kind != export.RequestRefused {
		t.Fatalf("steps: %+v", run.Steps)
	}
	if a, b := run.Views[1].Outcome.Effects, run.Views[2].Outcome.Effects; a != 1 || b != 2 {
		t.Fatalf("after the first and second create: %d and %d effects, want 1 and 2", a, b)
	}
	if ev := run.Views[2].Outcome.Evidence; len(ev) != 1 || len(ev[0].Attempts) != 2 || len(ev[0].Objects) != 2 {
		t.Fatalf("the provider's records of the duplicate: %+v", ev)
	}
	if last := run.Views[len(run.Views)-1]; last.Outcome.Effects != s.Outcome.Effects {
		t.Fatalf("the last view holds %d effects, the session %d", last.Outcome.Effects, s.Outcome.Effects)
	}
	prev := -1
	for k, v := range run.Views {
		if n := len(v.Ledger.Objects); n < prev {
			t.Fatalf("view %d holds %d objects, fewer than the view before", k, n)
		} else {
			prev = n
		}
		if v.Mission.ID != run.Views[0].Mission.ID || v.Outcome.Intended != s.Outcome.Intended {
			t.Fatalf("view %d: mission %s, intended %d", k, v.Mission.ID, v.Outcome.Intended)
		}
		for _, e := range v.Events {
			if e.Step < 1 || e.Step > k+1 {
				t.Fatalf("view %d has an event of step %d", k, e.Step)
			}
		}
	}
}

// recordedSession is a session of a client that sent a refund twice under
// two keys, read it back and sent a refusal: a provider on a loopback
// test server, as serve runs it.
func recordedSession(t *testing.T) *export.Session {
	t.Helper()
	return recordedSessionOf(t, 0)
}

// recordedSessionOf is recordedSession, or, with n > 0, a session of n
// creates of one refund under one key (the first commits, the rest replay
// it), as a client that retries far too often sends them.
func recordedSessionOf(t testing.TB, n int) *export.Session {
	t.Helper()
	srv, err := serve.New(serve.Options{Tick: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h := httptest.NewServer(srv)
	defer h.Close()
	send := func(method, path, key string, form url.Values) {
		req, err := http.NewRequest(method, h.URL+path, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("sk_test_run", "")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	refund := url.Values{"charge": {"ch_1042"}, "amount": {"4500"}, "metadata[intent]": {"refund-1042"}}
	if n > 0 {
		for range n {
			send(http.MethodPost, "/v1/refunds", "k1", refund)
		}
		return srv.Finish()
	}
	send(http.MethodPost, "/v1/refunds", "k1", refund)
	send(http.MethodPost, "/v1/refunds", "k2", refund)
	send(http.MethodGet, "/v1/refunds?metadata[intent]=refund-1042", "", nil)
	send(http.MethodPost, "/v1/refunds", "k3", url.Values{"amount": {"4500"}})
	return srv.Finish()
}

// Run stands on the replay: a session whose records were edited (here its
// clock's changes dropped, its effects miscounted) is told as the replay
// tells it, without a panic; one with no request of a client, or more than
// the lab steps through, is refused with the reason.
func TestRunOnSessionsThatDoNotReproduce(t *testing.T) {
	s := recordedSession(t)
	edited := *s
	edited.Changes = nil
	edited.Outcome.Effects = 7
	run, err := reproduce.Run(&edited)
	if err != nil {
		t.Fatal(err)
	}
	if last := run.Views[len(run.Views)-1]; last.Outcome.Effects != s.Outcome.Effects {
		t.Fatalf("the last view holds the edited count %d, not the replay's %d", last.Outcome.Effects, s.Outcome.Effects)
	}
	empty := *s
	empty.Requests = nil
	if _, err := reproduce.Run(&empty); err == nil || !strings.Contains(err.Error(), "nothing to step through") {
		t.Errorf("a session with no request: %v", err)
	}
	long := *s
	long.Requests = nil
	for i := range reproduce.MaxRunSteps + 1 {
		r := s.Requests[2] // the list
		r.Seq = i + 1
		long.Requests = append(long.Requests, r)
	}
	if _, err := reproduce.Run(&long); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a session too long for the lab: %v", err)
	}
}

// BenchmarkRunLongestSession tells the longest session the lab opens:
// MaxRunSteps requests, each a view of its own.
func BenchmarkRunLongestSession(b *testing.B) {
	s := recordedSessionOf(b, reproduce.MaxRunSteps)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reproduce.Run(s); err != nil {
			b.Fatal(err)
		}
	}
}
