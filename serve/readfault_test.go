package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// TestReadFaultsOnTheWire: the reads a client makes meet the listed
// read faults in order, then none: a 500 that shows nothing, a read that
// never answers, and a list that shows the ledger as it was lag ticks
// ago. The session records each, and replays to the same bytes.
func TestReadFaultsOnTheWire(t *testing.T) {
	g := newRig(t, Options{Tick: 10 * time.Millisecond, ReadFaults: []missions.ReadStep{
		{Fault: missions.ReadLagging, Lag: 50}, {Fault: missions.ReadServerError}, {Fault: missions.ReadTimeout}, {Fault: missions.ReadOK}}})
	if a := g.create("k1"); a.status != 200 {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	list := g.do(g.quick, http.MethodGet, "/v1/refunds", "", nil)
	if list.status != 200 || bytes.Contains(list.body, []byte("re_0001")) {
		t.Fatalf("a lagging list shows the refund made since: %d %s", list.status, list.body)
	}
	failed := g.do(g.quick, http.MethodGet, "/v1/refunds/re_0001", "", nil)
	if failed.status != 500 || failed.apiError(t).Type != "api_error" {
		t.Fatalf("read_server_error: %d %s", failed.status, failed.body)
	}
	if held := g.do(g.quick, http.MethodGet, "/v1/refunds", "", nil); !held.timedOut() {
		t.Fatalf("read_timeout: want the client's own timeout, got %d %v", held.status, held.err)
	}
	for _, want := range []int{200, 200} {
		// read_ok, then past the list: the ledger as it stands.
		a := g.do(g.quick, http.MethodGet, "/v1/refunds/re_0001", "", nil)
		if a.status != want || a.refund(t).ID != "re_0001" {
			t.Fatalf("a clean read: %d %s", a.status, a.body)
		}
	}
	waitFor(t, "the held read to end", func() bool { return g.srv.Session().Requests[3].Wire == export.WireHeld })
	s := g.srv.Finish()
	wantFaults := []missions.ReadFault{"", missions.ReadLagging, missions.ReadServerError, missions.ReadTimeout, "", ""}
	for i, r := range s.Requests {
		if r.ReadFault != wantFaults[i] {
			t.Errorf("request %d (%s) met %q, want %q", i+1, r.Kind, r.ReadFault, wantFaults[i])
		}
	}
	if s.Requests[1].Delay != 50 || len(s.Requests[1].Shown) != 0 {
		t.Errorf("the lagging list: delay %d, shown %v", s.Requests[1].Delay, s.Requests[1].Shown)
	}
	recorded, replayed, err := Rerecord(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(recorded, replayed) {
		t.Fatalf("a session with read faults does not replay to the same bytes:\n%s\n---\n%s", recorded, replayed)
	}
}

// TestReadFaultsSurviveARestart: a durable provider reopened without
// --faults goes on with the database's read faults, where they left off.
func TestReadFaultsSurviveARestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	clock := newFakeClock()
	g, _ := openRig(t, Options{ReadFaults: []missions.ReadStep{{Fault: missions.ReadOK}, {Fault: missions.ReadServerError}}}, db, clock)
	g.create("k1")
	if a := g.do(g.quick, http.MethodGet, "/v1/refunds", "", nil); a.status != 200 {
		t.Fatalf("read_ok: %d", a.status)
	}
	g.stop()
	g2, _ := openRig(t, Options{}, db, clock)
	if a := g2.do(g2.quick, http.MethodGet, "/v1/refunds", "", nil); a.status != 500 {
		t.Fatalf("after a restart the next read met %d, want the database's read_server_error", a.status)
	}
	g2.stop()
	if _, _, err := Open(Options{ReadFaults: []missions.ReadStep{{Fault: missions.ReadTimeout}}}, db); err == nil {
		t.Fatal("a database made with other read faults opened")
	}
}

// TestMCPReadFaults: the MCP read tools meet the same read faults: a 500
// is an isError result, a read that never answers is a call that does
// not return, and a lagging list shows what was.
func TestMCPReadFaults(t *testing.T) {
	g := newRig(t, Options{MCP: true, Tick: 10 * time.Millisecond, ReadFaults: []missions.ReadStep{
		{Fault: missions.ReadLagging, Lag: 50}, {Fault: missions.ReadServerError}, {Fault: missions.ReadTimeout}}})
	cs := g.agent()
	if _, err := call(t, cs, ToolCreate, args1042("k1"), 0); err != nil {
		t.Fatal(err)
	}
	res, err := call(t, cs, ToolList, map[string]any{"intent": "refund-1042"}, 0)
	if err != nil || res.IsError || bytes.Contains([]byte(resultText(res)), []byte("re_0001")) {
		t.Fatalf("a lagging list_refunds: %v %s", err, resultText(res))
	}
	res, err = call(t, cs, ToolGet, map[string]any{"id": "re_0001"}, 0)
	if err != nil || !res.IsError {
		t.Fatalf("read_server_error: want an isError result, got %v %s", err, resultText(res))
	}
	if _, err := call(t, cs, ToolGet, map[string]any{"id": "re_0001"}, 200*time.Millisecond); err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read_timeout: want the client's own timeout, got %v", err)
	}
	res, err = call(t, cs, ToolGet, map[string]any{"id": "re_0001"}, 0)
	if err != nil || res.IsError {
		t.Fatalf("past the list a read is answered: %v %s", err, resultText(res))
	}
}

// TestARefusedListTakesNoReadFault: a list refused before it reads (a
// cursor the list does not hold) is logged as refused and leaves the
// read fault to the next read, as its replay does.
func TestARefusedListTakesNoReadFault(t *testing.T) {
	g := newRig(t, Options{ReadFaults: []missions.ReadStep{{Fault: missions.ReadServerError}}})
	g.create("k1")
	if a := g.do(g.quick, http.MethodGet, "/v1/refunds?starting_after=re_9999", "", nil); a.status != 404 {
		t.Fatalf("a list from a cursor it does not hold: %d %s", a.status, a.body)
	}
	if a := g.do(g.quick, http.MethodGet, "/v1/refunds", "", nil); a.status != 500 {
		t.Fatalf("the next list met %d, want the read fault the refused one left", a.status)
	}
	recorded, replayed, err := Rerecord(g.srv.Finish())
	if err != nil || !bytes.Equal(recorded, replayed) {
		t.Fatalf("the session does not replay to the same bytes (%v):\n%s\n---\n%s", err, recorded, replayed)
	}
}

// TestSettingFaultsKeepsTheReadFaults: the control endpoint sets the
// creates' faults; the read faults go on where they were, the state
// lists those still to come, and a read fault given there is refused
// with where read faults are set.
func TestSettingFaultsKeepsTheReadFaults(t *testing.T) {
	g := newRig(t, Options{ReadFaults: []missions.ReadStep{{Fault: missions.ReadOK}, {Fault: missions.ReadServerError}}})
	post := func(faults string) answer {
		return g.do(g.quick, http.MethodPost, ControlPrefix+"faults", "", url.Values{"faults": {faults}})
	}
	g.do(g.quick, http.MethodGet, "/v1/refunds", "", nil)
	if a := post("timeout_after_commit"); a.status != 200 {
		t.Fatalf("set faults: %d %s", a.status, a.body)
	}
	var st State
	if err := json.Unmarshal(g.do(g.quick, http.MethodGet, ControlPrefix+"state", "", nil).body, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.ReadFaultsLeft) != 1 || st.ReadFaultsLeft[0].Fault != missions.ReadServerError {
		t.Fatalf("read faults left: %+v", st.ReadFaultsLeft)
	}
	if a := g.do(g.quick, http.MethodGet, "/v1/refunds", "", nil); a.status != 500 {
		t.Fatalf("after setting the creates' faults the next read met %d, want read_server_error", a.status)
	}
	if a := post("read_timeout"); a.status != 400 || !strings.Contains(a.apiError(t).Message, "read faults are set when serve starts") {
		t.Fatalf("a read fault at the control endpoint: %d %s", a.status, a.body)
	}
	recorded, replayed, err := Rerecord(g.srv.Finish())
	if err != nil || !bytes.Equal(recorded, replayed) {
		t.Fatalf("the session does not replay to the same bytes (%v)", err)
	}
}

// TestMCPReadErrorsKeepTheirWords: under --tool-errors opaque, whose
// words are a create's ("Failed to create refund"), a read fault's 500
// on get_refund and on list_refunds keeps its own words alike.
func TestMCPReadErrorsKeepTheirWords(t *testing.T) {
	g := newRig(t, Options{MCP: true, ToolErrors: ToolErrorsOpaque, ReadFaults: []missions.ReadStep{{Fault: missions.ReadServerError}, {Fault: missions.ReadServerError}}})
	cs := g.agent()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{{ToolGet, map[string]any{"id": "re_0001"}}, {ToolList, map[string]any{"intent": "refund-1042"}}} {
		res, err := call(t, cs, c.tool, c.args, 0)
		if err != nil || !res.IsError || !strings.Contains(resultText(res), "read_server_error") || strings.Contains(resultText(res), OpaqueError) {
			t.Fatalf("%s meeting read_server_error: %v %q", c.tool, err, resultText(res))
		}
	}
}
