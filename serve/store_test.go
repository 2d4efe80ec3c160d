package serve

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// openRig is a rig whose provider keeps its state in db.
func openRig(t *testing.T, o Options, db string, clock *fakeClock) (*rig, *Recovered) {
	t.Helper()
	o.Now = clock.Now
	if o.Hold == 0 {
		o.Hold = 5 * time.Second
	}
	srv, rec, err := Open(o, db)
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
		return tx.Bucket(bucketRefunds).Put([]byte("re_0002"), []byte(`{"id":"re_0002"}`))
	}); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, _, err := Open(Options{}, db); err == nil || !bytes.Contains([]byte(err.Error()), []byte("does not agree with itself")) {
		t.Fatalf("a tampered database: %v", err)
	}
}
