package serve

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// kindsAndAgain is each request of s as its kind, status and count
// again: "retrieve 200 ×3" for a read with Again 2.
func kindsAndAgain(s *export.Session) []string {
	var out []string
	for r := range s.Each() {
		w := r.Kind + " " + strconv.Itoa(r.Status)
		if r.Again > 0 {
			w += " ×" + strconv.Itoa(r.Again+1)
		}
		out = append(out, w)
	}
	return out
}

// TestAlikeRequestsAreCounted: a client that sends the same read or the
// same refused request again and again, answered alike, is recorded as
// one request and a count (again): a poll of one refund, reads of
// refunds that do not exist (whatever ids), an unknown route. A read
// that meets a fault, and one answered otherwise, is a request of its
// own. Each reply still has a Request-Id of its own, and the session
// replays to the same bytes.
func TestAlikeRequestsAreCounted(t *testing.T) {
	g := newRig(t, Options{ReadFaults: []missions.ReadStep{{Fault: missions.ReadOK}, {Fault: missions.ReadOK}, {Fault: missions.ReadOK}, {Fault: missions.ReadServerError}}})
	g.create("k1")
	ids := map[string]bool{}
	send := func(path string, want int) {
		t.Helper()
		a := g.send("GET", path, "")
		if a.status != want {
			t.Fatalf("GET %s: %d, want %d: %s", path, a.status, want, a.body)
		}
		id := a.header.Get("Request-Id")
		if ids[id] {
			t.Fatalf("GET %s: Request-Id %s was given before", path, id)
		}
		ids[id] = true
	}
	for range 3 {
		send("/v1/refunds/re_0001", 200)
	}
	send("/v1/refunds/re_0001", 500) // read_server_error: its own
	send("/v1/refunds/re_0001", 200)
	for i := range 5 {
		send("/v1/refunds/re_9"+strconv.Itoa(i), 404)
	}
	send("/v1/charges", 404)
	send("/v1/charges", 404)
	send("/v1/refunds?limit=2", 200)
	send("/v1/refunds?limit=2", 200)
	send("/v1/refunds?limit=3", 200) // another query
	s := g.srv.Finish()
	want := []string{"create 200", "retrieve 200 ×3", "retrieve 500", "retrieve 200", "retrieve 404 ×5", "refused 404 ×2", "list 200 ×2", "list 200"}
	if got := kindsAndAgain(s); !slices.Equal(got, want) {
		t.Fatalf("the session holds\n%q\nwant\n%q", got, want)
	}
	if p := s.Requests[4].Payload; p != "re_90" {
		t.Errorf("the reads of refunds that do not exist keep %q, want the first id, re_90", p)
	}
	recorded, replayed, err := Rerecord(s)
	if err != nil || !bytes.Equal(recorded, replayed) {
		t.Fatalf("the session does not replay to the same bytes (%v):\n%s\n---\n%s", err, recorded, replayed)
	}
}

// TestCountedRequestsSurviveAReopen: with --db a request counted again
// is in the log as a count, and a reopened provider holds the same
// session and goes on with the read faults where they were: each read
// counted took its step.
func TestCountedRequestsSurviveAReopen(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	clock := newFakeClock()
	g, _ := openRig(t, Options{ReadFaults: []missions.ReadStep{{Fault: missions.ReadOK}, {Fault: missions.ReadOK}, {Fault: missions.ReadOK}, {Fault: missions.ReadServerError}}}, db, clock)
	g.create("k1")
	for range 3 {
		if a := g.send("GET", "/v1/refunds/re_0001", ""); a.status != 200 {
			t.Fatalf("read: %d %s", a.status, a.body)
		}
	}
	before := kindsAndAgain(g.srv.Session())
	g.stop()
	g2, _ := openRig(t, Options{}, db, clock)
	if got := kindsAndAgain(g2.srv.Session()); !slices.Equal(got, before) {
		t.Fatalf("reopened, the session holds %q, want %q", got, before)
	}
	if a := g2.send("GET", "/v1/refunds/re_0001", ""); a.status != 500 {
		t.Fatalf("after a reopen the next read met %d, want read_server_error (the fourth read fault)", a.status)
	}
	g2.stop()
}

// TestAPollGrowsNoMemory: 20,000 reads of refunds that do not exist and
// 20,000 unknown routes leave the session at a handful of requests, and
// the heap where it was within a margin far below one request's 160
// bytes each.
func TestAPollGrowsNoMemory(t *testing.T) {
	g := newToolRig(t, Options{})
	h := g.srv
	read := func(path string) {
		req, _ := http.NewRequest("GET", path, nil)
		req.SetBasicAuth("sk_test_rig", "")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	for i := range 100 {
		read("/v1/refunds/re_" + strconv.Itoa(i))
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	const n = 20_000
	for i := range n {
		read("/v1/refunds/re_x" + strconv.Itoa(i))
	}
	for range n {
		read("/v1/nothing")
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	s := h.Session()
	if len(s.Requests) > 4 {
		t.Fatalf("after %d alike requests the session holds %d requests: %q", 2*n, len(s.Requests), kindsAndAgain(s)[:8])
	}
	if grew := int64(m1.HeapAlloc) - int64(m0.HeapAlloc); grew > 2*n*16 {
		t.Errorf("the heap grew %d bytes over %d requests", grew, 2*n)
	}
}

// pendingReply is a reply whose body is held back until release is closed:
// a reply decided, on its way and not yet written.
type pendingReply struct {
	h                http.Header
	started, release chan struct{}
}

func (b *pendingReply) Header() http.Header { return b.h }
func (b *pendingReply) WriteHeader(int)     {}
func (b *pendingReply) Write(p []byte) (int, error) {
	close(b.started)
	<-b.release
	return len(p), nil
}

// TestACountOnAReplyNotWrittenSurvivesACrash: a read counted on one whose
// reply is still being written, then the process dies. Reopened, the
// first reply is not known to have been written (gone), and so is the
// one counted on it; the session replays to the same bytes.
func TestACountOnAReplyNotWrittenSurvivesACrash(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	clock := newFakeClock()
	srv, _, err := Open(Options{Now: clock.Now}, db)
	if err != nil {
		t.Fatal(err)
	}
	get := func() *http.Request {
		req := httptest.NewRequest("GET", "/v1/refunds/re_nope", nil)
		req.SetBasicAuth("sk_test_rig", "")
		return req
	}
	first := &pendingReply{h: http.Header{}, started: make(chan struct{}), release: make(chan struct{})}
	done := make(chan struct{})
	go func() { srv.ServeHTTP(first, get()); close(done) }()
	<-first.started
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, get())
	if id := rec.Header().Get("Request-Id"); id != "req_1_1" {
		t.Fatalf("the second read's Request-Id is %q, want req_1_1 (counted on request 1)", id)
	}
	srv.Close() // as a kill -9: nothing more is written
	close(first.release)
	<-done
	srv2, _, err := Open(Options{Now: clock.Now}, db)
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Close()
	s := srv2.Session()
	if len(s.Requests) != 1 || s.Requests[0].Again != 1 || s.Requests[0].Wire != export.WireGone {
		t.Fatalf("reopened, the session holds %+v; want one read, gone, counted again once", s.Requests)
	}
	recorded, replayed, err := Rerecord(s)
	if err != nil || !bytes.Equal(recorded, replayed) {
		t.Fatalf("the reopened session does not replay to the same bytes (%v):\n%s\n---\n%s", err, recorded, replayed)
	}
}

// TestASessionAsACaseCountsEveryRead: a session made into a case (compare
// sets it beside simulated cases) has a read step for every read the
// client made, those counted again included, so its read faults fall
// where they fell.
func TestASessionAsACaseCountsEveryRead(t *testing.T) {
	g := newRig(t, Options{ReadFaults: []missions.ReadStep{{Fault: missions.ReadOK}, {Fault: missions.ReadOK}, {Fault: missions.ReadOK}, {Fault: missions.ReadServerError}}})
	g.create("k1")
	for range 4 {
		g.send("GET", "/v1/refunds/re_0001", "")
	}
	s := g.srv.Finish()
	var got []missions.ReadFault
	for _, r := range s.AsCase().Mission.Reads {
		got = append(got, r.Fault)
	}
	want := []missions.ReadFault{missions.ReadOK, missions.ReadOK, missions.ReadOK, missions.ReadServerError}
	if !slices.Equal(got, want) {
		t.Fatalf("the case's reads are %v, want %v (requests %q)", got, want, kindsAndAgain(s))
	}
}

// TestACountOverAReadFaultDoesNotReplay: a session whose count says reads
// were answered alike where a read fault falls among them, or that counts
// reads on one that met a fault, is not what serve records: replay says
// so, and a session file with the second is refused.
func TestACountOverAReadFaultDoesNotReplay(t *testing.T) {
	g := newRig(t, Options{ReadFaults: []missions.ReadStep{{Fault: missions.ReadOK}, {Fault: missions.ReadOK}, {Fault: missions.ReadServerError}}})
	g.create("k1")
	for range 2 {
		g.send("GET", "/v1/refunds/re_0001", "")
	}
	s := g.srv.Finish()
	if got := kindsAndAgain(s); !slices.Equal(got, []string{"create 200", "retrieve 200 ×2"}) {
		t.Fatalf("the session holds %q", got)
	}
	s.Requests[1].Again = 5 // reads 2 to 6 answered alike: the third met read_server_error
	if _, _, err := Rerecord(s); err == nil || !strings.Contains(err.Error(), "again 5") {
		t.Fatalf("a count over a read fault replays: %v", err)
	}
	s.Requests[1].Again, s.Requests[1].ReadFault = 1, missions.ReadServerError
	data, err := export.MarshalSession(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := export.UnmarshalSession("s.json", data); err == nil || !strings.Contains(err.Error(), "only reads that met no fault") {
		t.Fatalf("a count on a read that met a fault is taken: %v", err)
	}
}
