package serve

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// openRig is a rig whose provider keeps its state in db.
func openRig(t *testing.T, o Options, db string, clock *fakeClock) (*rig, *Recovered) {
	t.Helper()
	return reopenedRig(t, o, clock, func(o Options) (*Server, *Recovered, error) { return Open(o, db) })
}

// reopenedRig is a rig on the clock whose provider open makes from o (a
// reply held at most 5 s unless o says), closed when the test ends.
func reopenedRig(t *testing.T, o Options, clock *fakeClock, open func(Options) (*Server, *Recovered, error)) (*rig, *Recovered) {
	t.Helper()
	o.Now = clock.Now
	if o.Hold == 0 {
		o.Hold = 5 * time.Second
	}
	srv, rec, err := open(o)
	if err != nil {
		t.Fatal(err)
	}
	h := httptest.NewServer(srv)
	g := &rig{t: t, srv: srv, http: h, clock: clock, quick: &http.Client{Timeout: 150 * time.Millisecond}}
	t.Cleanup(func() {
		srv.Release()
		h.Close()
		srv.Close()
	})
	return g, rec
}

func (g *rig) stop() {
	g.srv.Release()
	g.http.Close()
	g.srv.Close()
}

// A provider reopened on its database is where it was: the same refunds,
// keys, faults still to come and clock, and a replay of a key answered
// from the saved record.
func TestStoreReopens(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	clock := newFakeClock()
	o := Options{Faults: []missions.Fixture{missions.TimeoutAfterCommit, missions.Success, missions.LateCommit}, Delay: 5}
	g, rec := openRig(t, o, db, clock)
	if rec != nil {
		t.Fatalf("a new database recovered %+v", rec)
	}
	g.create("k1")
	g.create("k1")
	g.create("k2") // late_commit, still executing
	g.do(g.quick, http.MethodPost, ControlPrefix+"advance", "", url.Values{"ticks": {"2"}})
	// The held replies end when the provider sees their clients go, which
	// a loaded machine can see after the client does: the state compared
	// is the one after that.
	waitFor(t, "the held replies' end", func() bool {
		for _, r := range g.srv.Session().Requests {
			if r.Wire == export.WireOpen {
				return false
			}
		}
		return true
	})
	before := g.srv.Session()
	g.stop()

	g2, rec := openRig(t, o, db, clock)
	if rec == nil || rec.Requests != 3 || rec.Refunds != 1 || rec.InFlight != 1 {
		t.Fatalf("recovered %+v", rec)
	}
	after := g2.srv.Session()
	a, _ := export.MarshalSession(before)
	b, _ := export.MarshalSession(after)
	if !bytes.Equal(a, b) {
		t.Fatalf("the reopened provider differs:\nbefore %s\nafter  %s", a, b)
	}
	if r := g2.create("k1"); r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the saved key is not replayed after reopening: %d %q", r.status, r.body)
	}
	if r := g2.create("k2"); r.status != http.StatusConflict {
		t.Fatalf("the late commit in flight is not executing after reopening: %d", r.status)
	}
	clock.Add(3 * DefaultTick)
	if r := g2.create("k2"); r.status != 200 || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the late commit did not land at its tick after reopening: %d %q", r.status, r.body)
	}
	if s := g2.srv.Finish(); s.Ledger.Effects != 2 {
		t.Fatalf("%d effects, want 2", s.Ledger.Effects)
	}
}

// One database, one provider: a second opener is told the file is in use;
// a provider started with other settings is refused; a database changed
// behind the provider's back is refused.
func TestStoreRefuses(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	clock := newFakeClock()
	g, _ := openRig(t, Options{}, db, clock)
	g.create("k")
	if _, _, err := Open(Options{}, db); !errors.Is(err, ErrInUse) {
		t.Fatalf("a second open: %v", err)
	}
	g.stop()
	if _, _, err := Open(Options{Contract: "v2"}, db); err == nil || !bytes.Contains([]byte(err.Error()), []byte("--contract v1, not v2")) {
		t.Fatalf("other settings: %v", err)
	}
	raw, err := bolt.Open(db, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("refunds")).Put([]byte("re_0002"), []byte(`{"id":"re_0002"}`))
	}); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, _, err := Open(Options{}, db); err == nil || !bytes.Contains([]byte(err.Error()), []byte("does not agree with itself")) || !errors.Is(err, ErrDamaged) {
		t.Fatalf("a tampered database: %v", err)
	}
}

// What the clock does where nothing is written (a GET state landing a
// late commit) is stored with the next write, so the database still
// agrees with itself when it is opened again.
func TestStoreKeepsClockWorkDoneOnReads(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	clock := newFakeClock()
	o := Options{Faults: []missions.Fixture{missions.LateCommit, missions.PendingFixture}, Delay: 3, Retention: 4 * DefaultTick}
	g, _ := openRig(t, o, db, clock)
	g.create("k1")
	clock.Add(3 * DefaultTick)
	g.do(g.quick, http.MethodGet, ControlPrefix+"state", "", nil) // the late commit lands here
	g.create("k2")                                                // pending
	clock.Add(3 * DefaultTick)
	g.do(g.quick, http.MethodGet, ControlPrefix+"session", "", nil) // it resolves here; k1's key expires
	g.do(g.quick, http.MethodGet, "/v1/refunds?starting_after=re_nope", "", nil)
	g.create("k3")
	g.stop()
	g2, rec := openRig(t, o, db, clock)
	if rec == nil || rec.Refunds != 3 {
		t.Fatalf("recovered %+v", rec)
	}
	g2.stop()
}

// A damaged, cut-short or foreign file is refused with a message, never a
// crash.
func TestStoreRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	good := filepath.Join(dir, "good.db")
	g, _ := openRig(t, Options{}, good, clock)
	for i := 0; i < 30; i++ {
		g.create("k" + strconv.Itoa(i))
	}
	g.stop()
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short.db")
	if err := os.WriteFile(short, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(Options{}, short); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("a file cut short: %v", err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	raw, err := bolt.Open(foreign, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = raw.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("users")); return err })
	raw.Close()
	if _, _, err := Open(Options{}, foreign); err == nil || !strings.Contains(err.Error(), "not a replaylab serve database") {
		t.Errorf("another program's database: %v", err)
	}
	text := filepath.Join(dir, "text.db")
	if err := os.WriteFile(text, []byte("not a database at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(Options{}, text); err == nil {
		t.Error("a text file opened as a database")
	}
}

// A mission edited under the same id is a change of settings, named so.
func TestStoreNamesAnEditedMission(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	m, _ := missions.BuiltIn().Get("timeout-then-success")
	g, _ := openRig(t, Options{Mission: m}, db, newFakeClock())
	g.stop()
	edited := *m
	edited.Schedule = append([]missions.Step{}, m.Schedule...)
	edited.Schedule[0].Fixture = missions.Success
	if _, _, err := Open(Options{Mission: &edited}, db); err == nil || !strings.Contains(err.Error(), "has changed since the database was made") {
		t.Fatalf("an edited mission: %v", err)
	}
}

// A clean stop after reads that moved the clock (a late commit landing, a
// key expiring) leaves a database that opens again: every entry carries
// its tick, and recovery runs the clock to it.
func TestStoreReopensAfterReadsMovedTheClock(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		read string
	}{
		{"a late commit lands on a state read", Options{Faults: []missions.Fixture{missions.LateCommit}, Delay: 2}, ControlPrefix + "state"},
		{"a key expires on a session read", Options{Retention: 2 * DefaultTick}, ControlPrefix + "session"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "p.db")
			clock := newFakeClock()
			g, _ := openRig(t, tc.o, db, clock)
			g.create("k")
			g.do(g.quick, http.MethodGet, "/v1/refunds", "", nil)
			clock.Add(5 * DefaultTick)
			g.do(g.quick, http.MethodGet, tc.read, "", nil)
			g.srv.Finish()
			g.stop()
			if _, _, err := Open(tc.o, db); err != nil {
				t.Fatalf("reopening: %v", err)
			}
		})
	}
}

// The control endpoint's clock stops at a hundred years whatever a tick
// lasts.
func TestAdvanceIsBoundedForLongTicks(t *testing.T) {
	g := newRig(t, Options{Tick: time.Hour})
	if a := g.do(g.quick, http.MethodPost, ControlPrefix+"advance", "", url.Values{"ticks": {"1073741824"}}); a.status != 400 {
		t.Fatalf("a thousand centuries of hours: %d %q", a.status, a.body)
	}
	if a := g.do(g.quick, http.MethodPost, ControlPrefix+"advance", "", url.Values{"ticks": {"24"}}); a.status != 200 {
		t.Fatalf("a day: %d", a.status)
	}
}
