package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
)

// TestPerRequestRevision: a client of MCP 2026-07-28 (no initialize, no
// session: each request carries its revision) is served beside the
// session revisions, and the closing of a call's response stream is
// recorded as that call's cancellation.
func TestPerRequestRevision(t *testing.T) {
	g := newRig(t, Options{MCP: true, Faults: []missions.Fixture{missions.TimeoutAfterCommit, missions.CrashAfterSend}})
	cs := g.agentAt(MCPRevisionPerRequest)
	if cs.ID() != "" {
		t.Errorf("a per-request client has session %q; 2026-07-28 has none", cs.ID())
	}
	if _, err := call(t, cs, ToolCreate, args1042(""), 200*time.Millisecond); err == nil {
		t.Fatal("the lost reply answered")
	}
	waitFor(t, "the held call's end", func() bool { return g.srv.Session().Requests[0].Held != nil })
	r := g.srv.Session().Requests[0]
	if r.Call == nil || r.Call.Revision != MCPRevisionPerRequest || r.Call.Session != "" {
		t.Fatalf("call %+v: want revision %s and no session", r.Call, MCPRevisionPerRequest)
	}
	if r.Call.Cancelled == nil || r.Call.Cancelled.Reason != streamCancel || r.Held.How != export.HeldCancelled {
		t.Fatalf("cancelled %+v, held end %+v: the closed stream is the call's cancellation", r.Call.Cancelled, r.Held)
	}

	// The provider closing the stream (crash_after_send) is no
	// cancellation: the client did not give up.
	if _, err := call(t, cs, ToolCreate, args1042(""), 5*time.Second); err == nil {
		t.Fatal("a closed stream answered")
	}
	res, err := call(t, cs, ToolCreate, args1042(""), 0)
	if err != nil {
		t.Fatal(err)
	}
	refundIn(t, res)
	waitFor(t, "three answered calls", func() bool {
		s := g.srv.Session()
		return len(s.Requests) == 3 && s.Requests[2].Wire == export.WireDelivered && s.Requests[1].Wire != export.WireOpen
	})
	s := g.srv.Session()
	if r := s.Requests[1]; r.Wire != export.WireClosed || r.Call.Cancelled != nil {
		t.Errorf("crash_after_send: wire %s, cancelled %+v; want closed, not cancelled", r.Wire, r.Call.Cancelled)
	}
	if r := s.Requests[2]; r.Call.Revision != MCPRevisionPerRequest || r.Repeat == nil || r.Repeat.How != export.RepeatReissued {
		t.Errorf("the call after a closed stream: call %+v, repeat %+v; want a re-issue under %s", r.Call, r.Repeat, MCPRevisionPerRequest)
	}
	if ids := []string{s.Requests[0].Call.ID, s.Requests[1].Call.ID, s.Requests[2].Call.ID}; ids[0] == ids[1] || ids[1] == ids[2] {
		t.Errorf("request ids %v: the go-sdk sends each call under a new id", ids)
	}
}

// TestMCPRevisionOption: --mcp-revision narrows serve to one kind of
// revision, and a client of the other is refused in words that name
// what is served.
func TestMCPRevisionOption(t *testing.T) {
	connect := func(g *rig, rev string) (*mcp.ClientSession, error) {
		c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.http.URL + MCPPath, DisableStandaloneSSE: true},
			&mcp.ClientSessionOptions{ProtocolVersion: rev})
		if err == nil {
			t.Cleanup(func() { _ = cs.Close() })
		}
		return cs, err
	}
	t.Run("per-request only", func(t *testing.T) {
		g := newRig(t, Options{MCP: true, MCPRevision: MCPRevisionPerRequest})
		cs, err := connect(g, "")
		if err != nil || cs.InitializeResult().ProtocolVersion != MCPRevisionPerRequest {
			t.Fatalf("the go-sdk's default client: %v", err)
		}
		if _, err := connect(g, MCPRevisionSession); err == nil {
			t.Fatal("a session client connected to a per-request-only provider")
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
		status, text, err := g.rawPost("", body, 5*time.Second)
		var reply struct {
			ID    int
			Error struct {
				Code    int64
				Message string
				Data    mcp.UnsupportedProtocolVersionData
			}
		}
		if err != nil || json.Unmarshal([]byte(text), &reply) != nil {
			t.Fatalf("initialize: %d %q %v", status, text, err)
		}
		if status != http.StatusBadRequest || reply.ID != 1 || reply.Error.Code != mcp.CodeUnsupportedProtocolVersion || reply.Error.Data.Requested != "2025-11-25" ||
			!strings.Contains(reply.Error.Message, "MCP-Protocol-Version: 2026-07-28") || len(reply.Error.Data.Supported) != 1 {
			t.Errorf("initialize: %d %s", status, text)
		}
	})
	t.Run("sessions only", func(t *testing.T) {
		g := newRig(t, Options{MCP: true, MCPRevision: MCPRevisionSession})
		cs, err := connect(g, "")
		if err != nil || cs.InitializeResult().ProtocolVersion != MCPRevisionSession {
			t.Fatalf("the go-sdk's default client falls back to a session: %v", err)
		}
		res, err := call(t, cs, ToolCreate, args1042(""), 0)
		if err != nil {
			t.Fatal(err)
		}
		refundIn(t, res)
		if c := g.srv.Session().Requests[0].Call; c.Revision != "" || c.Session == "" {
			t.Errorf("call %+v: want a session and no per-request revision", c)
		}
	})
	t.Run("a DELETE under the per-request revision ends no session", func(t *testing.T) {
		g := newRig(t, Options{MCP: true, Faults: []missions.Fixture{missions.TimeoutAfterCommit}})
		cs := g.agent()
		go func() { _, _ = call(t, cs, ToolCreate, args1042("k1"), 2*time.Second) }()
		waitFor(t, "the call to be held", func() bool {
			s := g.srv.Session()
			return len(s.Requests) == 1 && s.Requests[0].Wire == export.WireOpen
		})
		req, _ := http.NewRequest(http.MethodDelete, g.http.URL+MCPPath, nil)
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", MCPRevisionPerRequest)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
		waitFor(t, "the held call's end", func() bool { return g.srv.Session().Requests[0].Held != nil })
		if how := g.srv.Session().Requests[0].Held.How; how == export.HeldSessionEnded {
			t.Errorf("a DELETE the session handler never saw ended the session's held call")
		}
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Errorf("the session is gone: %v", err)
		}
	})
	t.Run("an unknown revision", func(t *testing.T) {
		_, err := New(Options{MCP: true, MCPRevision: "2025-13-01"})
		if err == nil || !strings.Contains(err.Error(), "2025-11-25") || !strings.Contains(err.Error(), "2026-07-28") {
			t.Errorf("New: %v; want the revisions it takes", err)
		}
	})
}

// TestExtraCreatesSayWhatTheyRepeat: each create for an intent that had
// one before says which it repeats and how, from what the wire showed:
// the same request re-sent, a new call with the same arguments while no
// reply had come, one after a reply came, one with other arguments; over
// REST, under the same key or a new one.
func TestExtraCreatesSayWhatTheyRepeat(t *testing.T) {
	lost := []missions.Fixture{missions.TimeoutAfterCommit}
	want := func(t *testing.T, r export.SessionRequest, of int, how, key, words string) {
		t.Helper()
		if r.Repeat == nil || *r.Repeat != (export.Repeat{Of: of, How: how, Key: key}) {
			t.Errorf("request %d repeats %+v, want of %d %s %s", r.Seq, r.Repeat, of, how, key)
			return
		}
		if got := export.DescribeRepeat(r, export.SessionRequest{Wire: export.WireHeld}); !strings.Contains(got, words) {
			t.Errorf("request %d: %q does not say %q", r.Seq, got, words)
		}
	}
	t.Run("MCP", func(t *testing.T) {
		g := newRig(t, Options{MCP: true, Faults: lost})
		cs := g.agent()
		create := func(id, amount string) string {
			return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"create_refund","arguments":{"intent":"refund-1042","charge":"ch_1042","amount":` + amount + `}}}`
		}
		if _, _, err := g.rawPost(cs.ID(), create("7", "4500"), 200*time.Millisecond); err == nil {
			t.Fatal("the lost reply answered")
		}
		waitFor(t, "the held reply's end", func() bool { return g.srv.Session().Requests[0].Wire == export.WireHeld })
		for _, b := range []string{create("7", "4500"), create("8", "4500"), create("9", "4600")} {
			if status, text, err := g.rawPost(cs.ID(), b, 5*time.Second); err != nil || status != http.StatusOK {
				t.Fatalf("%s: %d %s %v", b, status, text, err)
			}
		}
		s := g.srv.Session()
		if len(s.Requests) != 4 || s.Requests[0].Repeat != nil {
			t.Fatalf("%d requests, the first repeating %+v", len(s.Requests), s.Requests[0].Repeat)
		}
		want(t, s.Requests[1], 1, export.RepeatResent, export.KeyNone, "request 1 sent again (the same JSON-RPC id 7")
		want(t, s.Requests[2], 2, export.RepeatAfterReply, export.KeyNone, "after the provider answered request 2")
		want(t, s.Requests[3], 3, export.RepeatOtherArguments, export.KeyNone, "other arguments than request 3")
		// When a create came is the client's timing: a replay takes what
		// it repeated as recorded, and reproduces the session.
		if rec, again, err := Rerecord(s); err != nil || !bytes.Equal(rec, again) {
			t.Errorf("the session does not replay to itself: %v", err)
		}
	})
	t.Run("back to back", func(t *testing.T) {
		// A call sent the moment the one before answered comes after that
		// answer, however soon: the provider decided the answer first.
		for _, rev := range []string{MCPRevisionSession, MCPRevisionPerRequest} {
			g := newRig(t, Options{MCP: true})
			cs := g.agentAt(rev)
			for range 40 {
				if _, err := call(t, cs, ToolCreate, args1042(""), 0); err != nil {
					t.Fatal(err)
				}
			}
			for _, r := range g.srv.Session().Requests[1:] {
				if r.Repeat == nil || r.Repeat.How != export.RepeatAfterReply {
					t.Fatalf("%s: request %d repeats %+v, want after_reply", rev, r.Seq, r.Repeat)
				}
			}
		}
	})
	t.Run("REST", func(t *testing.T) {
		g := newRig(t, Options{Faults: lost})
		if a := g.do(g.quick, http.MethodPost, "/v1/refunds", "k1", refund1042()); !a.timedOut() {
			t.Fatalf("the lost reply answered: %+v", a)
		}
		waitFor(t, "the held reply's end", func() bool { return g.srv.Session().Requests[0].Wire == export.WireHeld })
		patient := &http.Client{Timeout: 5 * time.Second}
		for _, key := range []string{"k1", "k2"} {
			if a := g.do(patient, http.MethodPost, "/v1/refunds", key, refund1042()); a.status != http.StatusOK {
				t.Fatalf("key %s: %d %s %v", key, a.status, a.body, a.err)
			}
		}
		s := g.srv.Session()
		want(t, s.Requests[1], 1, export.RepeatReissued, export.KeySame, "under the same key, while request 1 had no reply (held until the client gave up)")
		want(t, s.Requests[2], 2, export.RepeatAfterReply, export.KeyNew, "under a new key, after the provider answered request 2")
		// What serve prints when it stops says it too.
		if txt := render.SessionText(s); !strings.Contains(txt, "2 refunds stand for one intent; of its creates after the first, 1 sent again while no reply had come, 1 sent again after an answer") {
			t.Errorf("the summary does not say how the creates repeated:\n%s", txt)
		}
	})
}

// TestMCPErrorsAreJSONRPCErrors: what is wrong with a message is answered
// as a JSON-RPC error with its proper code, over Streamable HTTP and over
// stdio alike: not JSON (-32700), not a request (-32600), a method the
// provider does not answer (-32601), a call before initialize (-32600,
// never code 0), an id of null (-32600, never silence).
func TestMCPErrorsAreJSONRPCErrors(t *testing.T) {
	type rpcReply struct {
		ID    json.RawMessage
		Error *struct {
			Code    int64
			Message string
		}
	}
	cases := []struct {
		name, body string
		session    bool
		code       int64
		id         string
		says       string
	}{
		{"not JSON", `{"jsonrpc":"2.0",`, true, -32700, "null", "not JSON"},
		{"an unknown method", `{"jsonrpc":"2.0","id":5,"method":"bogus/thing"}`, true, -32601, "5", `Method not found: "bogus/thing"`},
		{"a member spelled Method", `[{"jsonrpc":"2.0","id":6,"Method":"tools/list"}]`, true, -32600, "6", `spell it "method"`},
		{"no jsonrpc", `{"id":7,"method":"ping"}`, true, -32600, "7", `"jsonrpc": "2.0"`},
		{"a call before initialize", `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, false, -32600, "8", "call initialize first"},
		{"an id of null", `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, true, -32600, "null", `"id" is null`},
		{"initialize in a batch", `[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}]`, false, -32600, "null", "initialize, which MCP sends alone"},
	}
	t.Run("HTTP", func(t *testing.T) {
		g := newRig(t, Options{MCP: true})
		cs := g.agent()
		for _, c := range cases {
			session := ""
			if c.session {
				session = cs.ID()
			}
			_, text, err := g.rawPost(session, c.body, 5*time.Second)
			var r rpcReply
			if err != nil || json.Unmarshal([]byte(text), &r) != nil || r.Error == nil {
				t.Errorf("%s: %q %v: not a JSON-RPC error", c.name, text, err)
				continue
			}
			if r.Error.Code != c.code || string(r.ID) != c.id || !strings.Contains(r.Error.Message, c.says) {
				t.Errorf("%s: code %d, id %s, %q; want code %d, id %s, saying %q", c.name, r.Error.Code, r.ID, r.Error.Message, c.code, c.id, c.says)
			}
		}
	})
	t.Run("stdio", func(t *testing.T) {
		p := newStdioPeer(t, Options{})
		for _, c := range cases {
			if !c.session && !strings.HasPrefix(c.body, "[") {
				p.send(c.body)
				b, _ := json.Marshal(p.next())
				var r rpcReply
				if json.Unmarshal(b, &r) != nil || r.Error == nil || r.Error.Code != c.code || string(r.ID) != c.id || !strings.Contains(r.Error.Message, c.says) {
					t.Errorf("%s, before the handshake: %s", c.name, b)
				}
			}
		}
		p.handshake()
		for _, c := range cases {
			if !c.session || strings.HasPrefix(c.body, "[") {
				continue // a batch line is refused as a batch over stdio
			}
			p.send(c.body)
			b, _ := json.Marshal(p.next())
			var r rpcReply
			if json.Unmarshal(b, &r) != nil || r.Error == nil || r.Error.Code != c.code || string(r.ID) != c.id || !strings.Contains(r.Error.Message, c.says) {
				t.Errorf("%s: %s", c.name, b)
			}
		}
	})
}

// TestStateNeverLagsTheReply: between the moment a create's reply is
// decided (and may already be read by the client) and the moment it is
// recorded written, /_replaylab/state counts that reply as heard: it
// never shows a hidden_effect that the client's reply has already left
// behind.
func TestStateNeverLagsTheReply(t *testing.T) {
	g := newToolRig(t, Options{})
	params, e := decodeRefund(refund1042())
	if e != nil {
		t.Fatal(e.why)
	}
	turn, _, err := g.srv.takeCreate(createRequest{principal: "sk_test", key: "k1", intent: "refund-1042", params: params}, true)
	if err != nil || turn.fate != fateDeliver {
		t.Fatalf("the create: %v, fate %v", err, turn.fate)
	}
	verdict := func() missions.Verdict {
		rec := httptest.NewRecorder()
		g.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, ControlPrefix+"state", nil))
		var st State
		if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || len(st.Verdicts) != 1 {
			t.Fatalf("state: %s %v", rec.Body, err)
		}
		return st.Verdicts[0].Verdict
	}
	if v := verdict(); v != missions.ExactlyOnce {
		t.Errorf("while the reply is on its way: %s, want exactly_once", v)
	}
	g.srv.finish(turn.c, turn.i, export.WireDelivered, turn.status, turn.aerr, turn.shown)
	if v := verdict(); v != missions.ExactlyOnce {
		t.Errorf("once it is written: %s", v)
	}
	// A reply that never reached the client leaves the refund hidden.
	turn, _, err = g.srv.takeCreate(createRequest{principal: "sk_test", key: "k2", intent: "refund-2", params: params}, true)
	if err != nil {
		t.Fatal(err)
	}
	g.srv.finish(turn.c, turn.i, export.WireGone, 0, nil, nil)
	rec := httptest.NewRecorder()
	g.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, ControlPrefix+"state", nil))
	if !strings.Contains(rec.Body.String(), `"hidden_effect"`) {
		t.Errorf("a reply gone: %s", rec.Body)
	}
}

// TestMCPRefusesWhatIsNoText: an intent or a key holding a lone
// surrogate escape or bytes that are not UTF-8 is refused over MCP, as
// REST refuses it, over HTTP and stdio: decoded, x\ud800 and x\udfff would
// be one intent.
func TestMCPRefusesWhatIsNoText(t *testing.T) {
	bodies := []string{
		`{"intent":"x\ud800","charge":"ch_1","amount":100}`,
		`{"intent":"x","charge":"ch_1","amount":100,"idempotency_key":"k\udfff"}`,
		"{\"intent\":\"x\xff\",\"charge\":\"ch_1\",\"amount\":100}",
	}
	g := newRig(t, Options{MCP: true})
	cs := g.agent()
	for i, args := range bodies {
		body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call","params":{"name":"create_refund","arguments":` + args + `}}`
		_, text, err := g.rawPost(cs.ID(), body, 5*time.Second)
		if err != nil || !strings.Contains(text, `"isError":true`) || !(strings.Contains(text, "not UTF-8") || strings.Contains(text, "half of a surrogate pair")) {
			t.Errorf("%s: %s %v", args, text, err)
		}
	}
	p := newStdioPeer(t, Options{})
	p.handshake()
	p.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"create_refund","arguments":` + bodies[0] + `}}`)
	if b, _ := json.Marshal(p.next()); !strings.Contains(string(b), "half of a surrogate pair") {
		t.Errorf("over stdio: %s", b)
	}
	if n := len(g.srv.Session().Requests) + len(p.srv.Session().Requests); n != 0 {
		t.Errorf("%d requests reached the provider", n)
	}
}
