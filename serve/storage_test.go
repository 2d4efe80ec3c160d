package serve

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// memRig is a rig whose provider keeps its steps in st, a storage in
// memory, through reopen as Open does through a file.
func memRig(t *testing.T, o Options, st storage, clock *fakeClock) (*rig, *Recovered) {
	t.Helper()
	return reopenedRig(t, o, clock, func(o Options) (*Server, *Recovered, error) { return reopen(o, st, "memory") })
}

// A provider reopened from the storage in memory it wrote to is where it
// was, as from a file: the same requests, refunds, keys and faults still
// to come, and a repeat of a key answered from the saved record.
func TestMemoryStorageReopens(t *testing.T) {
	clock := newFakeClock()
	st := &memoryStorage{}
	o := Options{Faults: []missions.Fixture{missions.TimeoutAfterCommit, missions.Success, missions.Success}}
	g, rec := memRig(t, o, st, clock)
	if rec != nil {
		t.Fatalf("a new storage recovered %+v", rec)
	}
	if a := g.create("k1"); !a.timedOut() {
		t.Fatalf("the first create met timeout_after_commit, yet: %d %v", a.status, a.err)
	}
	first := g.create("k1").refund(t)
	g.create("k2")
	clock.Add(3 * time.Second)
	// Finish writes the confirmations of the replies written since the
	// last step: without it, the last reply reopens as never delivered.
	before := g.srv.Finish()
	g.srv.Release()
	g.http.Close()

	if len(st.log) == 0 || st.meta == nil {
		t.Fatalf("the storage kept %d entries and meta %v", len(st.log), st.meta)
	}
	g2, rec := memRig(t, o, st, clock)
	if rec == nil || rec.Requests != len(before.Requests) || rec.Refunds != 2 {
		t.Fatalf("reopened %+v; the session had %d requests and 2 refunds", rec, len(before.Requests))
	}
	after := g2.srv.Session()
	a, _ := json.Marshal(before.Requests)
	b, _ := json.Marshal(after.Requests)
	if string(a) != string(b) {
		t.Fatalf("the reopened session's requests differ:\nbefore %s\nafter  %s", a, b)
	}
	if left := g2.srv.FaultsLeft()[""]; len(left) != 0 {
		t.Errorf("faults left after reopening: %v, want none of the three", g2.srv.FaultsLeft())
	}
	again := g2.create("k1")
	if r := again.refund(t); r.ID != first.ID || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the key's repeat after reopening: %s replayed=%q, want %s replayed", r.ID, again.header.Get("Idempotent-Replayed"), first.ID)
	}
	// A storage that does not hold what its log makes is refused.
	for id, o := range st.refunds {
		o.Payload += "&amount=1"
		st.refunds[id] = o
		break
	}
	g2.srv.Release()
	g2.http.Close()
	if _, _, err := reopen(o, st, "memory"); err == nil || !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "does not agree with itself") {
		t.Fatalf("a storage changed behind the provider's back reopened: %v", err)
	}
}

// The failpoints wrapper calls its hook around every durable write, and a
// create's reply is followed by "after-reply": the points a kill test
// ends the process at.
func TestFailpointsMarkEachWrite(t *testing.T) {
	var mu sync.Mutex
	var points []string
	o := Options{Hooks: Hooks{Failpoint: func(p string) {
		mu.Lock()
		points = append(points, p)
		mu.Unlock()
	}}}
	g, _ := memRig(t, o, &memoryStorage{}, newFakeClock())
	g.create("k1")
	g.do(g.quick, http.MethodGet, "/v1/refunds/re_0001", "", nil)
	mu.Lock()
	defer mu.Unlock()
	// The create, then the read: each written before its reply.
	want := []string{"before-commit", "after-commit", "after-reply", "before-commit", "after-commit"}
	if !slices.Equal(points[:min(len(points), len(want))], want) {
		t.Fatalf("failpoints %v, want %v first", points, want)
	}
}

// A provider without storage writes nothing and builds no entry.
func TestNoStorageKeepsNothing(t *testing.T) {
	g := newRig(t, Options{})
	g.create("k1")
	if g.srv.st != nil {
		t.Fatalf("a provider in memory has storage %T", g.srv.st)
	}
	if n := len(g.srv.Session().Requests); n != 1 || g.srv.Session().Requests[0].Kind != export.RequestCreate {
		t.Fatalf("its session has %d requests", n)
	}
}
