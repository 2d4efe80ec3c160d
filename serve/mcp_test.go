package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/buildinfo"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// agent is a go-sdk MCP client session on a rig's /mcp or, on a rig of
// newToolRig, on the provider's MCP server over the SDK's in-memory
// transports.
func (g *rig) agent() *mcp.ClientSession {
	g.t.Helper()
	return g.agentAt(MCPRevisionSession)
}

// agentAt is agent under MCP revision rev: MCPRevisionSession (initialize
// and a session) or MCPRevisionPerRequest (no session: each request
// carries its revision).
func (g *rig) agentAt(rev string) *mcp.ClientSession {
	g.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	var transport mcp.Transport
	if g.http != nil {
		transport = &mcp.StreamableClientTransport{Endpoint: g.http.URL + MCPPath, DisableStandaloneSSE: true}
	} else {
		client, server := mcp.NewInMemoryTransports()
		ss, err := g.srv.mcpTools().server.Connect(context.Background(), server, nil)
		if err != nil {
			g.t.Fatalf("connect the server: %v", err)
		}
		g.t.Cleanup(func() { _ = ss.Close() })
		transport = client
	}
	cs, err := c.Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: rev})
	if err != nil {
		g.t.Fatalf("connect: %v", err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != rev {
		g.t.Fatalf("connected under MCP %s, want %s", got, rev)
	}
	g.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// newToolRig is a provider for tests of the tools themselves, which need
// no port: its agent speaks MCP over the SDK's in-memory transports.
// What the wire does (a held reply, a closed stream, a cancellation, a raw
// POST) is tested on newRig's loopback server, and over stdio on a pipe.
func newToolRig(t *testing.T, o Options) *rig {
	t.Helper()
	clock := newFakeClock()
	o.Now = clock.Now
	if o.Hold == 0 {
		o.Hold = 5 * time.Second
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Release)
	return &rig{t: t, srv: srv, clock: clock}
}

// call calls tool with args; wait bounds the call (0: 10 seconds, room
// for a loaded machine under the race detector).
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, wait time.Duration) (*mcp.CallToolResult, error) {
	t.Helper()
	if wait == 0 {
		wait = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
}

// refundIn is the refund a tool result carries.
func refundIn(t *testing.T, res *mcp.CallToolResult) toolRefund {
	t.Helper()
	if res == nil || res.IsError {
		t.Fatalf("want a refund, got %s", resultText(res))
	}
	var r toolRefund
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &r); err != nil || r.ID == "" {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return r
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return "no result"
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "error result: " + b.String()
	}
	return b.String()
}

func args1042(key string) map[string]any {
	a := map[string]any{"intent": "refund-1042", "charge": "ch_1042", "amount": 4500, "currency": "usd"}
	if key != "" {
		a["idempotency_key"] = key
	}
	return a
}

// waitFor polls cond until it holds or a few seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("gave up waiting: %s", what)
}

// rawPost sends body to the rig's MCP endpoint as a client of MCP session
// session ("" for none) would, within wait, and returns the status and
// the body read (err when the reply broke off or never came).
func (g *rig) rawPost(session, body string, wait time.Duration) (int, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", g.http.URL+MCPPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	req.Header.Set("Replaylab-Mcp-Id", "777") // a client cannot forge the marks
	resp, err := g.http.Client().Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func TestMCPToolsAreListedHonestly(t *testing.T) {
	g := newToolRig(t, Options{MCP: true})
	cs := g.agent()
	if v := cs.InitializeResult().ServerInfo.Version; v != buildinfo.Version() {
		t.Errorf("serverInfo.version %q, want the binary's %q, as replaylab --version says", v, buildinfo.Version())
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	for _, name := range []string{ToolCreate, ToolGet, ToolList} {
		tool := byName[name]
		if tool == nil {
			t.Fatalf("tools/list lacks %s: %v", name, res.Tools)
		}
		if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("%s: want an input schema, an output schema and a description", name)
		}
	}
	create := byName[ToolCreate]
	if a := create.Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint || a.IdempotentHint || a.ReadOnlyHint {
		t.Errorf("create_refund's annotations must say destructive and not idempotent: %+v", create.Annotations)
	}
	if a := byName[ToolGet].Annotations; a == nil || !a.ReadOnlyHint {
		t.Errorf("get_refund must say read-only: %+v", a)
	}
	if !strings.Contains(create.Description, "same key on every retry") {
		t.Errorf("create_refund's description must tell a model to reuse its key: %q", create.Description)
	}
	schema, _ := json.Marshal(create.InputSchema)
	for _, want := range []string{`"idempotency_key"`, `"required":["intent"]`, `"integer"]`} {
		if !bytes.Contains(schema, []byte(want)) {
			t.Errorf("create_refund's input schema lacks %s: %s", want, schema)
		}
	}
}

func TestMCPAndRESTShareOneLedger(t *testing.T) {
	g := newRig(t, Options{MCP: true})
	cs := g.agent()
	res, err := call(t, cs, ToolCreate, args1042("k1"), 0)
	if err != nil {
		t.Fatal(err)
	}
	made := refundIn(t, res)
	if made.Status != "succeeded" || made.Intent != "refund-1042" || made.Amount != 4500 {
		t.Fatalf("refund %+v", made)
	}
	// Listed over REST.
	a := g.do(g.http.Client(), "GET", "/v1/refunds?metadata[intent]=refund-1042", "", nil)
	if a.status != 200 || !bytes.Contains(a.body, []byte(made.ID)) {
		t.Fatalf("REST list: %d %s", a.status, a.body)
	}
	// A refund made over REST is read through the tools.
	a = g.create("rest-1")
	rest := a.refund(t)
	res, err = call(t, cs, ToolGet, map[string]any{"id": rest.ID}, 0)
	if err != nil || refundIn(t, res).ID != rest.ID {
		t.Fatalf("get_refund: %v %s", err, resultText(res))
	}
	res, err = call(t, cs, ToolList, map[string]any{"intent": "refund-1042"}, 0)
	if err != nil || res.IsError {
		t.Fatalf("list_refunds: %v %s", err, resultText(res))
	}
	var l toolList
	b, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(b, &l) != nil || len(l.Refunds) != 2 || l.Refunds[1].ID != made.ID || l.Refunds[0].ID != rest.ID {
		t.Fatalf("list_refunds: %s", b)
	}
	s := g.srv.Finish()
	if s.Ledger.Effects != 2 {
		t.Fatalf("effects %d, want 2", s.Ledger.Effects)
	}
	if v := verdictOf(t, s, "refund-1042"); v.Verdict != missions.Duplicate {
		t.Fatalf("verdict %s: one intent refunded over both surfaces is a duplicate", v.Verdict)
	}
	// The tool call is recorded with its id and session.
	first := s.Requests[0]
	if first.Call == nil || first.Call.Tool != ToolCreate || first.Call.Transport != export.TransportHTTP || first.Call.Session != cs.ID() || first.Call.ID == "" {
		t.Fatalf("the first request's call: %+v", first.Call)
	}
	if s.Requests[1].Call != nil {
		t.Fatalf("a REST request has no call: %+v", s.Requests[1].Call)
	}
}

// TestMCPLostReply is the source article's case over MCP: the refund
// commits and the call never answers; the client cancels. A retry with
// the same key gets the refund that stands; a retry without one makes a
// second.
func TestMCPLostReply(t *testing.T) {
	for _, tc := range []struct {
		name     string
		retryKey string
		effects  int
		verdict  missions.Verdict
	}{
		{"same key", "k1", 1, missions.ExactlyOnce},
		{"no key", "", 2, missions.Duplicate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newRig(t, Options{MCP: true, Faults: []missions.Fixture{missions.TimeoutAfterCommit}})
			cs := g.agent()
			first := "k1"
			if tc.retryKey == "" {
				first = ""
			}
			_, err := call(t, cs, ToolCreate, args1042(first), 200*time.Millisecond)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("the lost reply: want the client's own timeout, got %v", err)
			}
			// The cancellation is received and recorded; it undoes nothing.
			waitFor(t, "the cancellation to be recorded", func() bool {
				r := g.srv.Session().Requests[0]
				return r.Call != nil && r.Call.Cancelled != nil
			})
			s := g.srv.Session()
			if s.Ledger.Effects != 1 || s.Requests[0].Wire != export.WireHeld {
				t.Fatalf("after the cancel: effects %d, wire %s", s.Ledger.Effects, s.Requests[0].Wire)
			}
			res, err := call(t, cs, ToolCreate, args1042(tc.retryKey), 0)
			if err != nil {
				t.Fatal(err)
			}
			again := refundIn(t, res)
			if tc.retryKey != "" && (again.ID != s.Ledger.Objects[0].ID.String() || res.Meta["replaylab/idempotent_replayed"] != true) {
				t.Fatalf("a same-key retry replays re_1: %+v %v", again, res.Meta)
			}
			s = g.srv.Finish()
			v := verdictOf(t, s, "refund-1042")
			if s.Ledger.Effects != tc.effects || v.Verdict != tc.verdict {
				t.Fatalf("effects %d verdict %s, want %d %s", s.Ledger.Effects, v.Verdict, tc.effects, tc.verdict)
			}
			if s.Requests[1].Call.ID == s.Requests[0].Call.ID {
				t.Fatalf("the retry is a new JSON-RPC request: ids %s and %s", s.Requests[0].Call.ID, s.Requests[1].Call.ID)
			}
		})
	}
}

// TestMCPFaults runs over HTTP: a lost reply is a call whose stream is
// held, and its cancellation arrives on the transport.
func TestMCPFaults(t *testing.T) {
	for _, tc := range []struct {
		fixture missions.Fixture
		// lost: the call never answers; else the result's text holds want.
		lost    bool
		want    string
		isError bool
		effects int
		status  string
	}{
		{fixture: missions.TimeoutBeforeCommit, lost: true, effects: 0},
		{fixture: missions.LateCommit, lost: true, effects: 1},
		{fixture: missions.FailureBeforeCommit, want: "refused before it was executed", isError: true, effects: 0},
		{fixture: missions.ServerErrorAfterCommit, want: "may have been created", isError: true, effects: 1},
		{fixture: missions.PendingFixture, want: `"status":"pending"`, effects: 1},
		{fixture: missions.Success, want: `"status":"succeeded"`, effects: 1},
	} {
		t.Run(string(tc.fixture), func(t *testing.T) {
			g := newRig(t, Options{MCP: true, Faults: []missions.Fixture{tc.fixture}, Tick: 20 * time.Millisecond, Delay: 2})
			cs := g.agent()
			res, err := call(t, cs, ToolCreate, args1042("k1"), 300*time.Millisecond)
			switch {
			case tc.lost && !errors.Is(err, context.DeadlineExceeded):
				t.Fatalf("want no answer, got %v %s", err, resultText(res))
			case !tc.lost && err != nil:
				t.Fatal(err)
			case !tc.lost && (res.IsError != tc.isError || !strings.Contains(resultText(res), tc.want)):
				t.Fatalf("result %s, want isError %v and %q", resultText(res), tc.isError, tc.want)
			}
			if tc.lost {
				waitFor(t, "the cancellation", func() bool { return g.srv.Session().Requests[0].Call.Cancelled != nil })
			}
			g.clock.Add(time.Second) // a late commit lands
			s := g.srv.Finish()
			if s.Ledger.Effects != tc.effects {
				t.Fatalf("effects %d, want %d", s.Ledger.Effects, tc.effects)
			}
			if tc.lost && s.Requests[0].Call.Cancelled == nil {
				t.Fatalf("the client's cancellation is recorded: %+v", s.Requests[0].Call)
			}
		})
	}
}

func TestMCPOpaqueErrors(t *testing.T) {
	g := newToolRig(t, Options{MCP: true, ToolErrors: ToolErrorsOpaque, Faults: []missions.Fixture{missions.FailureBeforeCommit, missions.ServerErrorAfterCommit}})
	cs := g.agent()
	for range 2 {
		res, err := call(t, cs, ToolCreate, args1042(""), 0)
		if err != nil || !res.IsError || resultText(res) != "error result: "+OpaqueError {
			t.Fatalf("want only %q, got %v %s", OpaqueError, err, resultText(res))
		}
	}
	// A refusal of the call itself stays plain: it is not the refund's.
	res, _ := call(t, cs, ToolCreate, map[string]any{"intent": "refund-1042"}, 0)
	if !res.IsError || !strings.Contains(resultText(res), "charge") {
		t.Fatalf("a call without a charge: %s", resultText(res))
	}
}

// TestMCPStreamClosedAfterCommit: crash_after_send closes the call's
// response stream once the refund has committed. The client re-issues the
// call as a new request; with the same key it gets the refund that stands.
func TestMCPStreamClosedAfterCommit(t *testing.T) {
	g := newRig(t, Options{MCP: true, Faults: []missions.Fixture{missions.CrashAfterSend}})
	cs := g.agent()
	res, err := call(t, cs, ToolCreate, args1042("k1"), 2*time.Second)
	if err == nil && !res.IsError {
		t.Fatalf("the stream closed after the commit: want no result, got %s", resultText(res))
	}
	s := g.srv.Session()
	if s.Ledger.Effects != 1 || s.Requests[0].Wire != export.WireClosed {
		t.Fatalf("effects %d wire %s", s.Ledger.Effects, s.Requests[0].Wire)
	}
	// The same client goes on: a new request with the same key.
	res, err = call(t, cs, ToolCreate, args1042("k1"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if r := refundIn(t, res); r.ID != s.Ledger.Objects[0].ID.String() {
		t.Fatalf("the re-issued call gets the refund that stands, got %s", r.ID)
	}
	if s := g.srv.Finish(); s.Ledger.Effects != 1 || verdictOf(t, s, "refund-1042").Verdict != missions.ExactlyOnce {
		t.Fatalf("effects %d verdict %s", s.Ledger.Effects, verdictOf(t, s, "refund-1042").Verdict)
	}
}

// TestMCPSessionReplaysAndChecks: a recorded MCP session replays to the
// same bytes and reads as a history.
func TestMCPSessionReplaysAndChecks(t *testing.T) {
	g := newRig(t, Options{MCP: true, Faults: []missions.Fixture{missions.TimeoutAfterCommit}})
	cs := g.agent()
	_, _ = call(t, cs, ToolCreate, args1042(""), 150*time.Millisecond)
	waitFor(t, "the cancellation", func() bool { return g.srv.Session().Requests[0].Call.Cancelled != nil })
	_, _ = call(t, cs, ToolCreate, args1042(""), 0)
	_, _ = call(t, cs, ToolList, map[string]any{"intent": "refund-1042"}, 0)
	_, _ = call(t, cs, ToolGet, map[string]any{"id": "re_9"}, 0)
	s := g.srv.Finish()
	data, err := export.MarshalSession(s)
	if err != nil {
		t.Fatal(err)
	}
	read, err := export.UnmarshalSession("s.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if diff, err := replayDiff(read); err != nil || diff != "" {
		t.Fatalf("replay: %v %s", err, diff)
	}
	if !bytes.Contains(data, []byte(`"cancelled": {`)) || !bytes.Contains(data, []byte(`"tool": "list_refunds"`)) {
		t.Fatalf("the session keeps the calls and the cancellation:\n%s", data)
	}
	h := s.History()
	if len(h) == 0 {
		t.Fatal("no history")
	}
	if v := verdictOf(t, s, "refund-1042"); v.Verdict != missions.Duplicate {
		t.Fatalf("verdict %s", v.Verdict)
	}
}

func TestMCPStdio(t *testing.T) {
	srv, err := New(Options{MCP: true, Faults: []missions.Fixture{missions.TimeoutAfterCommit}, Hold: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Release()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(ctx, sr, sw) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = call(t, cs, ToolCreate, args1042("k1"), 200*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the lost reply over stdio: %v", err)
	}
	waitFor(t, "the cancellation", func() bool { return srv.Session().Requests[0].Call.Cancelled != nil })
	res, err := call(t, cs, ToolCreate, args1042("k1"), 0)
	if err != nil || refundIn(t, res).ID != srv.Session().Ledger.Objects[0].ID.String() {
		t.Fatalf("the same-key retry over stdio: %v %s", err, resultText(res))
	}
	_ = cs.Close()
	s := srv.Finish()
	if r := s.Requests[0]; r.Call.Transport != export.TransportStdio || r.Call.ID == "" || s.Ledger.Effects != 1 {
		t.Fatalf("call %+v effects %d", r.Call, s.Ledger.Effects)
	}
}

// TestMCPBadInput: each mistake gets the answer the spec prescribes, with
// words that say what was wrong; the ledger and the session stay whole.
func TestMCPBadInput(t *testing.T) {
	g := newRig(t, Options{MCP: true})
	cs := g.agent()
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"wrong type", ToolCreate, map[string]any{"intent": "refund-1042", "charge": "ch_1", "amount": "forty-five"}, "amount"},
		{"missing intent", ToolCreate, map[string]any{"charge": "ch_1", "amount": 4500}, "intent"},
		{"missing charge", ToolCreate, map[string]any{"intent": "refund-1042", "amount": 4500}, "charge"},
		{"1 MB argument", ToolCreate, map[string]any{"intent": "refund-1042", "charge": strings.Repeat("c", 1<<20)}, "5000"},
		{"10 KB key", ToolCreate, map[string]any{"intent": "refund-1042", "charge": "ch_1", "idempotency_key": strings.Repeat("k", 10<<10)}, "255"},
		{"blank key", ToolCreate, map[string]any{"intent": "refund-1042", "charge": "ch_1", "idempotency_key": "  "}, "blank"},
		{"bad limit", ToolList, map[string]any{"limit": 1000}, "limit"},
		{"no such refund", ToolGet, map[string]any{"id": "re_404"}, "No such refund"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := call(t, cs, tc.tool, tc.args, 20*time.Second)
			if err != nil {
				t.Fatalf("want an isError result, got a protocol error: %v", err)
			}
			if !res.IsError || !strings.Contains(resultText(res), tc.want) {
				t.Fatalf("want an error result naming %q, got %s", tc.want, termtext.Shorten(resultText(res), 300))
			}
			if res.StructuredContent != nil {
				t.Fatalf("an error result shows no refund, not an empty one: %v", res.StructuredContent)
			}
		})
	}
	// An unknown tool is a protocol error that names it.
	_, err := call(t, cs, "refund_everything", map[string]any{}, 0)
	if err == nil || !strings.Contains(err.Error(), "refund_everything") {
		t.Fatalf("unknown tool: %v", err)
	}
	// An answer is recorded once its POST is over.
	waitFor(t, "every answer to be recorded", func() bool {
		for _, r := range g.srv.Session().Requests {
			if r.Wire == export.WireOpen {
				return false
			}
		}
		return true
	})
	s := g.srv.Session()
	if s.Ledger.Effects != 0 {
		t.Fatalf("bad input made %d refunds", s.Ledger.Effects)
	}
	for _, r := range s.Requests {
		if r.Wire != export.WireDelivered || len(r.Key) > MaxKeyLength || len(r.Intent) > MaxReadPayload {
			t.Fatalf("request %d kept as %+v", r.Seq, r)
		}
	}

	// Without the protocol's handshake, or with a session that does not
	// exist, the HTTP side answers with words.
	post := func(session, body string) (int, string) {
		code, b, err := g.rawPost(session, body, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return code, b
	}
	callBody := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_refund","arguments":{"intent":"refund-1042","charge":"ch_1"}}}`
	if code, body := post("no-such-session", callBody); code != http.StatusNotFound || !strings.Contains(strings.ToLower(body), "session") {
		t.Errorf("unknown session: %d %s", code, body)
	}
	if _, body := post("", callBody); !strings.Contains(body, `"code":-32600`) || !strings.Contains(body, "call initialize first") || !strings.Contains(body, `"id":1`) {
		t.Errorf("a call before initialize: %s", body)
	}
	if code, body := post("", strings.Repeat("x", MaxMCPBody+1)); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "MiB") {
		t.Errorf("an oversized body: %d %s", code, body)
	}
	if g.srv.Session().Ledger.Effects != 0 {
		t.Fatal("a refused call made a refund")
	}
}

// TestMCPClientLeavesMidCall: a client that drops its connection while
// its call is held ends the hold; the refund that committed stands.
func TestMCPClientLeavesMidCall(t *testing.T) {
	g := newRig(t, Options{MCP: true, Faults: []missions.Fixture{missions.TimeoutAfterCommit}})
	cs := g.agent()
	// A raw POST on the session, dropped after a moment without a cancel.
	body := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"create_refund","arguments":{"intent":"refund-1042","charge":"ch_1042","amount":4500}}}`
	if _, _, err := g.rawPost(cs.ID(), body, 150*time.Millisecond); err == nil {
		t.Fatal("a held call answered")
	}
	waitFor(t, "the hold to end", func() bool { return g.srv.Session().Requests[0].Wire == export.WireHeld })
	s := g.srv.Finish()
	if s.Ledger.Effects != 1 || s.Requests[0].Call.ID != "99" || s.Requests[0].Call.Cancelled != nil {
		t.Fatalf("effects %d call %+v", s.Ledger.Effects, s.Requests[0].Call)
	}
	if v := verdictOf(t, s, "refund-1042"); v.Verdict != missions.HiddenEffect {
		t.Fatalf("verdict %s", v.Verdict)
	}
}

// TestMCPCallsSurviveARestart: with --db, a tool call, its JSON-RPC id and
// the client's cancellation are on disk like any request; the reopened
// provider replays the key's refund to the next call.
func TestMCPCallsSurviveARestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	clock := newFakeClock()
	o := Options{MCP: true, Faults: []missions.Fixture{missions.TimeoutAfterCommit}}
	g, _ := openRig(t, o, db, clock)
	cs := g.agent()
	if _, err := call(t, cs, ToolCreate, args1042("k1"), 200*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the lost reply: %v", err)
	}
	waitFor(t, "the cancellation", func() bool { return g.srv.Session().Requests[0].Call.Cancelled != nil })
	before := g.srv.Session()
	_ = cs.Close()
	g.stop()

	g2, rec := openRig(t, o, db, clock)
	if rec == nil || rec.Requests != 1 || rec.Refunds != 1 {
		t.Fatalf("recovered %+v", rec)
	}
	after := g2.srv.Session()
	a, _ := export.MarshalSession(before)
	b, _ := export.MarshalSession(after)
	if !bytes.Equal(a, b) {
		t.Fatalf("the reopened provider differs:\nbefore %s\nafter  %s", a, b)
	}
	res, err := call(t, g2.agent(), ToolCreate, args1042("k1"), 0)
	if err != nil || refundIn(t, res).ID != after.Ledger.Objects[0].ID.String() {
		t.Fatalf("the same key after the restart: %v %s", err, resultText(res))
	}
}

// stdioPeer is a client that speaks raw lines to ServeStdio.
type stdioPeer struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	srv  *Server
	done chan error
}

func newStdioPeer(t *testing.T, o Options) *stdioPeer {
	o.MCP = true
	if o.Hold == 0 {
		o.Hold = time.Minute
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	p := &stdioPeer{t: t, in: cw, out: bufio.NewScanner(cr), srv: srv, done: make(chan error, 1)}
	p.out.Buffer(nil, 1<<20)
	go func() { p.done <- srv.ServeStdio(context.Background(), sr, sw); sw.Close() }()
	t.Cleanup(func() { srv.Release(); cw.Close() })
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// next reads the next message serve writes.
func (p *stdioPeer) next() map[string]any {
	p.t.Helper()
	if !p.out.Scan() {
		p.t.Fatalf("serve wrote nothing more: %v", p.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(p.out.Bytes(), &m); err != nil {
		p.t.Fatalf("serve wrote %q: %v", p.out.Text(), err)
	}
	return m
}

func (p *stdioPeer) handshake() {
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := p.next(); m["id"] != 0.0 || m["result"] == nil {
		p.t.Fatalf("initialize: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func createLine(id, key string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"create_refund","arguments":{"intent":"refund-1042","charge":"ch_1042","amount":4500,"idempotency_key":"` + key + `"}}}`
}

// TestMCPStdioSurvivesBadLines: a line that is not a JSON-RPC message is
// answered with an error of no id and skipped; the session goes on, with
// the refund made before it.
func TestMCPStdioSurvivesBadLines(t *testing.T) {
	p := newStdioPeer(t, Options{})
	p.handshake()
	p.send(createLine("1", "k1"))
	if m := p.next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("the create: %v", m)
	}
	for _, bad := range []string{`{oops`, `[]`, `null`, `42`, `{"jsonrpc":"1.0","id":2,"method":"ping"}`, `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`} {
		p.send(bad)
		m := p.next()
		e, _ := m["error"].(map[string]any)
		if (m["id"] != nil && m["id"] != 2.0) || e == nil || !strings.Contains(e["message"].(string), "skipped") {
			t.Fatalf("%s: answered %v", bad, m)
		}
	}
	p.send(createLine("4", "k1"))
	if m := p.next(); m["id"] != 4.0 || m["result"] == nil {
		t.Fatalf("a create after the bad lines: %v", m)
	}
	if s := p.srv.Session(); s.Ledger.Effects != 1 || len(s.Requests) != 2 {
		t.Fatalf("effects %d, requests %d", s.Ledger.Effects, len(s.Requests))
	}
}

// TestMCPStdioLostReplyIsNeverAnswered: over stdio a cancelled call whose
// reply was lost gets no answer at all, as the spec asks.
func TestMCPStdioLostReplyIsNeverAnswered(t *testing.T) {
	p := newStdioPeer(t, Options{Faults: []missions.Fixture{missions.TimeoutAfterCommit}})
	p.handshake()
	p.send(createLine("1", "k1"))
	waitFor(t, "the create", func() bool { return len(p.srv.Session().Requests) == 1 })
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"gave up"}}`)
	waitFor(t, "the hold to end", func() bool { return p.srv.Session().Requests[0].Wire == export.WireHeld })
	p.send(createLine("2", "k1"))
	// The next message is the answer to call 2: nothing was sent for 1.
	if m := p.next(); m["id"] != 2.0 || m["result"] == nil {
		t.Fatalf("want the answer to call 2 first, got %v", m)
	}
	r := p.srv.Session().Requests[0]
	if r.Call.Cancelled == nil || r.Call.Cancelled.Reason != "gave up" {
		t.Fatalf("the cancellation: %+v", r.Call)
	}
}

// TestMCPStdioAnswersWhatItReadBeforeTheEnd: a call read just before the
// input ends is answered before the session closes.
func TestMCPStdioAnswersWhatItReadBeforeTheEnd(t *testing.T) {
	p := newStdioPeer(t, Options{})
	p.handshake()
	p.send(createLine("1", "k1"))
	p.in.Close()
	if m := p.next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("the last call: %v", m)
	}
	if err := <-p.done; err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	s := p.srv.Finish()
	if r := s.Requests[0]; r.Wire != export.WireDelivered || verdictOf(t, s, "refund-1042").Verdict != missions.ExactlyOnce {
		t.Fatalf("wire %s verdict %s", r.Wire, verdictOf(t, s, "refund-1042").Verdict)
	}
}

// TestMCPEndingASessionEndsItsHeldCalls: a client that ends its session
// (DELETE) while a call is held is answered at once, and the held call
// ends with the session, its reply lost; it is not kept to the hold's cap.
func TestMCPEndingASessionEndsItsHeldCalls(t *testing.T) {
	g := newRig(t, Options{MCP: true, Faults: []missions.Fixture{missions.TimeoutAfterCommit}, Hold: 10 * time.Minute})
	cs := g.agent()
	go func() { _, _ = call(t, cs, ToolCreate, args1042("k1"), time.Minute) }()
	waitFor(t, "the create", func() bool { return len(g.srv.Session().Requests) == 1 })
	req, _ := http.NewRequest("DELETE", g.http.URL+MCPPath, nil)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	deleted := make(chan int, 1)
	go func() {
		if resp, err := g.http.Client().Do(req); err == nil {
			resp.Body.Close()
			deleted <- resp.StatusCode
		}
	}()
	select {
	case code := <-deleted:
		if code != http.StatusNoContent {
			t.Fatalf("DELETE: %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the DELETE waited on the held call")
	}
	waitFor(t, "the hold to end", func() bool { return g.srv.Session().Requests[0].Wire == export.WireHeld })
}

// TestMCPCancellationsFindTheirCall: a cancellation is matched by the
// whole id, not a cut one; one of a call already answered is of nothing.
func TestMCPCancellationsFindTheirCall(t *testing.T) {
	g := newRig(t, Options{MCP: true, Faults: []missions.Fixture{missions.Success, missions.TimeoutAfterCommit, missions.TimeoutAfterCommit}})
	cs := g.agent()
	post := func(body string, wait time.Duration) { _, _, _ = g.rawPost(cs.ID(), body, wait) }
	long := strings.Repeat("L", 100)
	call := func(id string) string {
		return `{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"create_refund","arguments":{"intent":"refund-1042","charge":"ch_1042","amount":4500}}}`
	}
	cancel := func(id string) string {
		return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"` + id + `","reason":"r-` + id[len(id)-1:] + `"}}`
	}
	post(call("answered"), 5*time.Second)
	post(cancel("answered"), 5*time.Second)
	for _, id := range []string{long + "A", long + "B"} {
		go post(call(id), 2*time.Second)
	}
	waitFor(t, "both held calls", func() bool { return len(g.srv.Session().Requests) == 3 })
	post(cancel(long+"B"), 5*time.Second)
	waitFor(t, "the cancellation", func() bool {
		for _, r := range g.srv.Session().Requests {
			if r.Call.Cancelled != nil {
				return true
			}
		}
		return false
	})
	for _, r := range g.srv.Session().Requests {
		switch {
		case r.Seq == 1 && r.Call.Cancelled != nil:
			t.Errorf("a cancellation after the answer was recorded: %+v", r.Call)
		case r.Seq > 1 && (r.Call.Cancelled != nil) != (r.Call.Cancelled != nil && r.Call.Cancelled.Reason == "r-B"):
			t.Errorf("call %s: cancelled %+v", r.Call.ID, r.Call.Cancelled)
		}
	}
}

func TestMCPRefusesWhatItCannotTellApart(t *testing.T) {
	g := newRig(t, Options{MCP: true})
	body := `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_refund","arguments":{}}}]`
	code, b, err := g.rawPost("", body, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if code != 400 || !strings.Contains(b, "one tool call a request") {
		t.Errorf("a batch of calls: %d %s", code, b)
	}
	if _, err := New(Options{MCP: true, IntentField: "charge"}); err == nil || !strings.Contains(err.Error(), "metadata[NAME]") {
		t.Errorf("--mcp with --intent-field charge: %v", err)
	}
}

func TestMCPArgumentWords(t *testing.T) {
	g := newToolRig(t, Options{MCP: true})
	cs := g.agent()
	for _, tc := range []struct {
		args any
		want string
	}{
		{map[string]any{"intent": "refund-1042", "charge": "ch_1", "amount": 1e20}, "maximum"},
		{map[string]any{"intent": "refund-1042", "charge": "ch_1", "amount": 4500, "idempotency_key": nil}, ""},
		{map[string]any{"intent": "refund-1042", "charge": "ch_1", "amount": 4500, "amonut": 1}, `Unknown argument "amonut". create_refund takes an object of arguments: intent, charge`},
		{[]int{1, 2}, "not a JSON object"},
		{map[string]any{"intent": "", "charge": "ch_1", "amount": 4500}, "Missing intent"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolCreate, Arguments: tc.args})
		cancel()
		switch {
		case err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.want == "" && res.IsError:
			t.Errorf("%v: %s", tc.args, resultText(res))
		case tc.want != "" && (!res.IsError || !strings.Contains(resultText(res), tc.want)):
			t.Errorf("%v: want an error naming %q, got %s", tc.args, tc.want, resultText(res))
		}
	}
	// A refused list is of no intent: nothing was told of one.
	_, _ = call(t, cs, ToolList, map[string]any{"intent": "refund-9", "limit": 1000}, 0)
	waitFor(t, "the list", func() bool { r := g.srv.Session().Requests; return r[len(r)-1].Wire != export.WireOpen })
	if r := g.srv.Session().Requests; r[len(r)-1].Kind != export.RequestRefused || r[len(r)-1].Intent != "" {
		t.Errorf("a refused list: %+v", r[len(r)-1])
	}
}

// TestMCPStdioIDs: over stdio an id the SDK would change is refused; a
// second call with the id of one still open is answered with an error,
// not dropped; a cancellation of a call answered already does not
// silence a later call that reuses its id.
func TestMCPStdioIDs(t *testing.T) {
	p := newStdioPeer(t, Options{Faults: []missions.Fixture{missions.Success, missions.TimeoutAfterCommit}})
	p.handshake()
	p.send(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`)
	if m := p.next(); m["id"] != nil || !strings.Contains(m["error"].(map[string]any)["message"].(string), "2^53") {
		t.Fatalf("a fractional id: %v", m)
	}
	p.send(createLine("1", "k1"))
	if m := p.next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("call 1: %v", m)
	}
	// A cancellation of call 1, answered already: of nothing.
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"late"}}`)
	// Call 2 is held (its reply lost); a second call 2 meanwhile is
	// refused at once.
	p.send(createLine("2", "k2"))
	waitFor(t, "call 2", func() bool { return len(p.srv.Session().Requests) == 2 })
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := p.next(); m["id"] != 2.0 || m["error"] == nil {
		t.Fatalf("a second call 2 while the first is open: %v", m)
	}
	// Call 1's id again, after its late cancellation: answered.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if m := p.next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("a call reusing an answered id: %v", m)
	}
	if r := p.srv.Session().Requests[0]; r.Call.Cancelled != nil {
		t.Fatalf("a cancellation after the answer was recorded: %+v", r.Call)
	}
}

// TestMCPHTTPIDsAndBatches: over HTTP an id the SDK would change is
// refused, and a batch cannot hide a tool call behind a "Method" spelled
// otherwise.
func TestMCPHTTPIDsAndBatches(t *testing.T) {
	g := newRig(t, Options{MCP: true})
	cs := g.agent()
	code, b, err := g.rawPost(cs.ID(), `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, 10*time.Second)
	if err != nil || code != 400 || !strings.Contains(b, "2^53") {
		t.Errorf("an id past 2^53: %d %s %v", code, b, err)
	}
	code, b, _ = g.rawPost("", `[{"jsonrpc":"2.0","id":4,"method":"tools/call","Method":"ping","params":{"name":"create_refund","arguments":{}}}]`, 10*time.Second)
	if code != 400 || !strings.Contains(b, "one tool call a request") {
		t.Errorf("a batch hiding its call: %d %s", code, b)
	}
}

// TestAWriteTheClientNeverTakesIsGivenUp: a client that stops reading
// cannot keep serve from stopping.
func TestAWriteTheClientNeverTakesIsGivenUp(t *testing.T) {
	r, w := io.Pipe() // nobody reads r
	defer r.Close()
	lw := &lineWriter{w: w, abandon: make(chan struct{})}
	done := make(chan error, 1)
	go func() { _, err := lw.Write([]byte("{}\n")); done <- err }()
	lw.giveUp()
	select {
	case err := <-done:
		if !errors.Is(err, errGaveUp) {
			t.Fatalf("the write: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the write was not given up")
	}
	if _, err := lw.Write([]byte("{}\n")); !errors.Is(err, errGaveUp) {
		t.Fatalf("a write after giving up: %v", err)
	}
}
