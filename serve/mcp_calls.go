package serve

// Call tracking for the MCP tools over Streamable HTTP: which POST and
// connection carries each call, its JSON-RPC id, its cancellation (before
// or after the call), and the end of its session.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/jsontext"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// The private request headers that tell a tool handler which call it
// serves: set by the transport's side of the provider (the HTTP handler,
// the stdio connection), never taken from a client.
const (
	hdrTransport = "Replaylab-Mcp-Transport"
	hdrID        = "Replaylab-Mcp-Id"
	hdrPost      = "Replaylab-Mcp-Post"
	hdrRevision  = "Replaylab-Mcp-Revision"
)

// perRequestRevision is the revision a request that carries its own names
// (the MCP-Protocol-Version header, from 2026-07-28 on), or "" for a
// request of the revisions with sessions.
func perRequestRevision(r *http.Request) string {
	if v := r.Header.Get("Mcp-Protocol-Version"); v >= MCPRevisionPerRequest {
		return v
	}
	return ""
}

// revisionRefused says why the revision of r is not served under
// Options.MCPRevision, or "".
func (t *tools) revisionRefused(rev string) string {
	switch only := t.s.opts.MCPRevision; {
	case only == MCPRevisionSession && rev != "":
		return "" // the session handler refuses it, naming the revisions it takes
	case only == MCPRevisionPerRequest && rev == "":
		return "This provider serves MCP " + MCPRevisionPerRequest + " only (--mcp-revision " + MCPRevisionPerRequest + "): no initialize and no sessions. Send each request with the header MCP-Protocol-Version: " + MCPRevisionPerRequest + " and its _meta (io.modelcontextprotocol/protocolVersion, clientInfo, clientCapabilities), as SEP-2575 says; a client that negotiates (the go-sdk from v1.8.0) does so on its own."
	}
	return ""
}

// earlyCancel is a cancellation that came before its call: its reason,
// and when it came.
type earlyCancel struct {
	reason string
	at     time.Time
}

// earlyFor is how long a cancellation waits for its call.
const earlyFor = 2 * time.Second

// callKey names a call: its MCP session and its JSON-RPC id (keyID).
type callKey struct{ session, id string }

// callAt is where a call's request is: its core and index.
type callAt struct {
	c *core
	i int
}

// maxEarly bounds the cancellations kept for calls not yet logged, and
// maxUnanswered the calls kept, after they end unanswered, for a
// cancellation that comes late.
const (
	maxEarly      = 256
	maxUnanswered = 1024
)

// post is one HTTP POST to the MCP endpoint that carries a call: the
// tool handler closes its stream for a crash after the commit, and a
// held call ends when the client goes.
type post struct {
	mu   sync.Mutex
	w    http.ResponseWriter
	gone <-chan struct{}
	// cut: the connection was closed; over: the POST was answered (or
	// the client left) and its handler returned.
	cut, over bool
	// wrote: some of the answer was written, and err is the write that
	// failed, if one did.
	wrote bool
	err   error
	// answered records the call's answer once the POST ends: delivered
	// when it was written, gone when it was not.
	answered func(wire string)
}

// close closes the POST's connection without a reply: the response
// stream ends, as a provider's does when its process dies.
func (p *post) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut || p.over {
		return
	}
	p.cut = true
	if conn, _, err := http.NewResponseController(p.w).Hijack(); err == nil {
		_ = conn.Close()
	}
}

// errCut is what a write to a POST whose connection was closed meets.
var errCut = errors.New("the response stream was closed (crash_after_send)")

// postWriter is the POST's ResponseWriter as the SDK is given it: every
// write takes the post's lock, so that close never races a write, and a
// write after close writes nothing.
type postWriter struct{ p *post }

func (w postWriter) Header() http.Header { return w.p.w.Header() }

func (w postWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	if w.p.cut {
		return 0, errCut
	}
	n, err := w.p.w.Write(b)
	if err != nil {
		w.p.err = err
	} else if n > 0 {
		w.p.wrote = true
	}
	return n, err
}

func (w postWriter) WriteHeader(code int) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	if !w.p.cut {
		w.p.w.WriteHeader(code)
	}
}

func (w postWriter) FlushError() error {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	if w.p.cut {
		return errCut
	}
	err := http.NewResponseController(w.p.w).Flush()
	if err != nil {
		w.p.err = err
	}
	return err
}

// settle records the answer of the POST's call, now that the POST is
// over: delivered if it was written whole, gone if not.
func (p *post) settle() {
	p.mu.Lock()
	f := p.answered
	wire := export.WireGone
	if p.wrote && p.err == nil && !p.cut {
		wire = export.WireDelivered
	}
	p.over = true
	p.mu.Unlock()
	if f != nil {
		f(wire)
	}
}

func (p *post) left() bool {
	select {
	case <-p.gone:
		return true
	default:
		return false
	}
}

// ServeHTTP serves the MCP endpoint: each POST's call is marked with its
// JSON-RPC id and its connection, for the tool handler, then handed to
// the SDK's Streamable HTTP handler.
func (t *tools) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k := range r.Header {
		if strings.HasPrefix(strings.ToLower(k), "replaylab-") {
			delete(r.Header, k)
		}
	}
	rev := perRequestRevision(r)
	handler := t.http
	if rev != "" && t.s.opts.MCPRevision != MCPRevisionSession {
		handler = t.perRequest
	}
	if msg := t.revisionRefused(rev); msg != "" && r.Method != http.MethodPost {
		writeUnsupportedRevision(w, "null", r.Header.Get("Mcp-Protocol-Version"), msg)
		return
	}
	if r.Method == http.MethodDelete && handler == t.http {
		// The client ends its session: its held calls end with it (the
		// SDK's DELETE waits for them). A DELETE of the revisions
		// without sessions ends none.
		if id := r.Header.Get("Mcp-Session-Id"); t.live(id) {
			t.endSession(id)
		}
	}
	if r.Method != http.MethodPost {
		handler.ServeHTTP(w, r)
		return
	}
	// The call's answer is recorded before the provider counts the
	// request done.
	defer t.s.busy()()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMCPBody))
	if err != nil {
		status, msg := http.StatusBadRequest, "The request body could not be read: "+err.Error()+"."
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			status, msg = http.StatusRequestEntityTooLarge, "The request is over "+strconv.Itoa(MaxMCPBody>>20)+" MiB; no refund's arguments come near that (strings are at most 5000 characters)."
		}
		writeRPCError(w, status, jsonrpc.CodeInvalidRequest, msg)
		return
	}
	id := rawID(body)
	if msg := t.revisionRefused(rev); msg != "" {
		raw := string(id)
		if idProblem(id) != "" || raw == "" {
			raw = "null"
		}
		writeUnsupportedRevision(w, raw, requestedRevision(r, body), msg)
		return
	}
	if msg := idProblem(id); msg != "" {
		writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, msg+".")
		return
	}
	if batchCallsTools(body) {
		writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest,
			"The request is a batch with a tools/call in it; replaylab serve takes one tool call a request, so that the session can tell each call and its cancellation apart. Send the calls one at a time (batches are not part of MCP since 2025-06-18).")
		return
	}
	if b := t.checkPost(r, body, handler == t.perRequest); b != nil {
		status := http.StatusBadRequest
		if b.read {
			// A request the server read and will not serve: its error is
			// the answer.
			status = http.StatusOK
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(rpcError(b.id, b.code, b.msg))
		return
	}
	if handler == t.http && r.Header.Get("Mcp-Session-Id") == "" && isInitialize(body) && t.sessionsFull() {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(http.StatusServiceUnavailable)
		raw := string(id)
		if raw == "" {
			raw = "null"
		}
		_, _ = w.Write(rpcError(raw, -32000, fmt.Sprintf("This provider keeps at most %d MCP sessions at once, and has that many. End a session when done with it (DELETE /mcp with its Mcp-Session-Id, as the SDKs do on close); a session idle for %v ends by itself.", MaxMCPSessions, t.s.opts.MCPIdle)))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	p := &post{w: w, gone: r.Context().Done()}
	t.mu.Lock()
	t.next++
	n := t.next
	t.posts[n] = p
	t.mu.Unlock()
	r.Header.Set(hdrTransport, export.TransportHTTP)
	r.Header.Set(hdrPost, strconv.Itoa(n))
	if id := callIDOf(id); id != "" {
		r.Header.Set(hdrID, id)
	}
	if handler == t.perRequest {
		r.Header.Set(hdrRevision, rev)
	}
	handler.ServeHTTP(postWriter{p}, r)
	t.mu.Lock()
	delete(t.posts, n)
	t.mu.Unlock()
	p.settle()
}

// writeUnsupportedRevision answers a request whose revision is not served
// with JSON-RPC's unsupported-protocol-version error (SEP-2575), naming
// the one that is.
func writeUnsupportedRevision(w http.ResponseWriter, id, requested, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "error": map[string]any{
		"code": mcp.CodeUnsupportedProtocolVersion, "message": msg,
		"data": mcp.UnsupportedProtocolVersionData{Supported: []string{MCPRevisionPerRequest}, Requested: requested}}})
	_, _ = w.Write(append(b, '\n'))
}

// checkPost checks the messages of a POST (checkMessage): one, or each
// of a batch. A session's POST carries its Mcp-Session-Id; a request of
// the revisions without sessions needs no initialize.
func (t *tools) checkPost(r *http.Request, body []byte, perRequest bool) *badMessage {
	initialized := perRequest || r.Header.Get("Mcp-Session-Id") != ""
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' && json.Valid(trimmed) {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) != nil || len(batch) == 0 {
			return &badMessage{id: "null", code: jsonrpc.CodeInvalidRequest, msg: "The batch is empty or not a list of messages; send one JSON-RPC 2.0 message a request."}
		}
		for _, m := range batch {
			if b := checkMessage(m, initialized); b != nil {
				return b
			}
			if isInitialize(m) {
				return &badMessage{id: "null", code: jsonrpc.CodeInvalidRequest, msg: "The batch holds an initialize, which MCP sends alone; send initialize as its own request."}
			}
		}
		return nil
	}
	return checkMessage(body, initialized)
}

// requestedRevision is the revision a refused request asked for: its
// MCP-Protocol-Version header, else an initialize's protocolVersion.
func requestedRevision(r *http.Request, body []byte) string {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		return termtext.Shorten(v, 40)
	}
	var m struct {
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &m)
	return termtext.Shorten(m.Params.ProtocolVersion, 40)
}

// batchCallsTools reports whether body is a JSON-RPC batch with a
// tools/call in it.
func batchCallsTools(body []byte) bool {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '[' {
		return false
	}
	// Each member's "method" exactly, as the SDK reads it (encoding/json
	// would take "Method" too).
	var batch []map[string]json.RawMessage
	if json.Unmarshal(body, &batch) != nil {
		return false
	}
	for _, m := range batch {
		var method string
		if json.Unmarshal(m["method"], &method) == nil && method == "tools/call" {
			return true
		}
	}
	return false
}

// writeRPCError answers an HTTP request with a JSON-RPC error of no id.
func writeRPCError(w http.ResponseWriter, status int, code int64, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(rpcError("null", code, msg))
}

// rpcError is a JSON-RPC error answering id (its JSON; "null" for none),
// as one line.
func rpcError(id string, code int64, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "error": map[string]any{"code": code, "message": msg}})
	return append(b, '\n')
}

// rawID is the "id" of body, one JSON-RPC message, as sent: the member
// named exactly so, as the SDK reads it (encoding/json would take "ID"
// too); nil for none, or a batch.
func rawID(body []byte) json.RawMessage {
	var head map[string]json.RawMessage
	if json.Unmarshal(body, &head) != nil {
		return nil
	}
	return bytes.TrimSpace(head["id"])
}

// callIDOf is a raw id in JSON as idJSON writes it ("" for none).
func callIDOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return ""
	}
	return idJSON(v)
}

// keyID is a JSON-RPC id as the provider keys its calls by it: whole when
// short, else its digest, so that a client's ids cannot grow what is kept.
func keyID(id string) string {
	if len(id) <= MaxReadPayload {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// maxExactID is the largest whole number the SDK keeps exact as an id (it
// reads ids as float64).
const maxExactID = 1 << 53

// idProblem says what is wrong with a raw id (rawID) that the SDK would
// change as it reads it (a fraction, a whole number past 2^53), or "".
func idProblem(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] == '"' || raw[0] == 'n' {
		return ""
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n > maxExactID || n < -maxExactID {
		return "The id " + termtext.Shorten(string(raw), 40) + " is not a whole number from -2^53 to 2^53, which JSON-RPC ids are read as; give a string id, or a whole number in that range"
	}
	return ""
}

// idJSON is a JSON-RPC id in JSON, whole, one way for every transport:
// 7, "a". The session keeps it cut to MaxReadPayload.
func idJSON(v any) string {
	switch n := v.(type) {
	case float64:
		if n == float64(int64(n)) {
			v = int64(n)
		}
	case json.Number:
		return n.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// callOf is the session's record of the call req, the key that names it
// whole, and the POST that carries it (nil over stdio).
func (t *tools) callOf(req *mcp.CallToolRequest, tool string) (*export.ToolCall, callKey, *post) {
	c := &export.ToolCall{Tool: tool, Transport: export.TransportStdio}
	var p *post
	id, scope := "", ""
	if ex := req.Extra; ex != nil && ex.Header != nil {
		if tr := ex.Header.Get(hdrTransport); tr != "" {
			c.Transport = tr
		}
		id = ex.Header.Get(hdrID)
		c.Revision = ex.Header.Get(hdrRevision)
		if n, err := strconv.Atoi(ex.Header.Get(hdrPost)); err == nil {
			t.mu.Lock()
			p = t.posts[n]
			t.mu.Unlock()
			if c.Revision != "" {
				// No session: the POST is the call's whole scope, and its
				// id is of it alone.
				scope = "post " + strconv.Itoa(n)
			}
		}
	}
	if id == "" {
		id = "null"
	}
	c.ID = termtext.Shorten(id, MaxReadPayload)
	if req.Session != nil && c.Revision == "" {
		c.Session = req.Session.ID()
		scope = c.Session
	}
	return c, callKey{scope, keyID(id)}, p
}

// answer records the answer to call i of core c once it is known whether
// it reached the client: over HTTP when the POST is over, over stdio when
// the SDK has written it. Until then the provider counts the call as
// being answered.
func (t *tools) answer(p *post, key callKey, c *core, i, status int, e *refusal, shown []missions.EvidenceObject) {
	record := func(wire string) {
		if wire == export.WireDelivered {
			t.s.finish(c, i, wire, status, e, shown)
		} else {
			t.s.finish(c, i, wire, 0, nil, nil)
		}
	}
	if p != nil {
		p.mu.Lock()
		if p.over {
			// The POST ended before its answer was known: nothing of it
			// reached the client.
			p.mu.Unlock()
			record(export.WireGone)
			return
		}
		p.answered = record
		p.mu.Unlock()
		return
	}
	t.mu.Lock()
	conn := t.stdio
	t.mu.Unlock()
	if conn == nil {
		record(export.WireDelivered)
		return
	}
	conn.await(key.id, record, t.s.busy())
}

// lost ends a call whose reply the provider never sends: over HTTP its
// stream is closed, over stdio its answer is dropped.
func (t *tools) lost(p *post, key callKey) {
	if p != nil {
		p.close()
		return
	}
	t.mu.Lock()
	c := t.stdio
	t.mu.Unlock()
	if c != nil {
		c.silence(key.id)
	}
}

// track notes where call key's request is, for its cancellation, and
// takes a cancellation that came first. untrack forgets an answered call:
// a cancellation after its answer is of nothing. A call that got no
// answer is kept a while (the last maxUnanswered), as its client's
// cancellation can come after the call ended on its side (the client
// dropped its request first).
func (t *tools) track(key callKey, c *core, i int) {
	t.mu.Lock()
	t.inflight[key] = callAt{c, i}
	e, early := t.early[key]
	delete(t.early, key)
	t.mu.Unlock()
	if early && time.Since(e.at) <= earlyFor {
		t.s.markCancelled(c, i, e.reason)
	}
}

func (t *tools) untrack(key callKey, answered bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if answered {
		delete(t.inflight, key)
		return
	}
	t.unanswered = append(t.unanswered, key)
	if len(t.unanswered) > maxUnanswered {
		delete(t.inflight, t.unanswered[0])
		t.unanswered = t.unanswered[1:]
	}
}

// endSession ends the held calls of MCP session id ("" for stdio). The
// calls held hold the channel; the session keeps no entry after.
func (t *tools) endSession(id string) {
	ch := t.sessionEnded(id)
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
	// The entry stays, closed, for a call racing the DELETE; sessionsFull
	// forgets it once the session is gone.
}

// MaxMCPSessions bounds the MCP sessions kept at once: an initialize
// past it is refused until one ends (DELETE) or idles out.
const MaxMCPSessions = 1000

// sessionsFull reports whether MaxMCPSessions sessions are open, and
// forgets the entries of sessions that ended without a DELETE (they idled
// out).
func (t *tools) sessionsFull() bool {
	live := map[string]bool{}
	for ss := range t.server.Sessions() {
		if ss.ID() != "" {
			live[ss.ID()] = true
		}
	}
	t.mu.Lock()
	for id := range t.ended {
		if id != "" && !live[id] {
			delete(t.ended, id)
		}
	}
	t.mu.Unlock()
	return len(live) >= MaxMCPSessions
}

// isInitialize reports whether body is one initialize request.
func isInitialize(body []byte) bool {
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == "initialize"
}

// live reports whether id names an MCP session being served.
func (t *tools) live(id string) bool {
	for ss := range t.server.Sessions() {
		if ss.ID() == id {
			return true
		}
	}
	return false
}

// endedOf is closed when call's session ends; nil for a call of a
// revision without sessions.
func (t *tools) endedOf(call *export.ToolCall) <-chan struct{} {
	if call.Revision != "" {
		return nil
	}
	return t.sessionEnded(call.Session)
}

// sessionEnded is closed when MCP session id ends.
func (t *tools) sessionEnded(id string) chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch, ok := t.ended[id]
	if !ok {
		ch = make(chan struct{})
		t.ended[id] = ch
	}
	return ch
}

// receiving sees every message before the SDK handles it. It records
// each notifications/cancelled against the call it names (received,
// kept, and undoing nothing; a cancellation of a call already answered,
// or of none, is of nothing), and answers a tool call whose arguments are
// not an object of the tool's own, in words that name what it takes.
func (t *tools) receiving(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
				if _, what := jsontext.Problem(p.Arguments); what != "" {
					// Decoded, it would read as U+FFFD: two intents or keys
					// that differ only there would be one.
					msg := "The arguments hold " + what + ". Every text argument (intent, idempotency_key, charge, …) must be UTF-8 text, as over REST; nothing was sent to the provider."
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil
				}
				if msg := argumentsProblem(p.Name, p.Arguments); msg != "" {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil
				}
			}
		}
		if method == "notifications/cancelled" {
			if p, ok := req.GetParams().(*mcp.CancelledParams); ok && p != nil && p.RequestID != nil {
				session := ""
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
					session = ss.ID()
				}
				t.cancel(callKey{session, keyID(idJSON(p.RequestID))}, p.Reason)
			}
		}
		return next(ctx, method, req)
	}
}

// cancel records the client's cancellation of call key: on its request
// if it is being answered, else kept for a moment in case the call itself
// is still on its way in.
func (t *tools) cancel(key callKey, reason string) {
	reason = termtext.Shorten(reason, 200)
	t.mu.Lock()
	at, ok := t.inflight[key]
	if !ok {
		// Kept a moment for a call still on its way in: long enough for
		// the call that went first, not for a later one that reuses the
		// id of one answered already.
		now := time.Now()
		for k, e := range t.early {
			if now.Sub(e.at) > earlyFor {
				delete(t.early, k)
			}
		}
		if len(t.early) < maxEarly {
			t.early[key] = earlyCancel{reason, now}
		}
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	t.s.markCancelled(at.c, at.i, reason)
}

// markCancelled records on request i of core c that the client cancelled
// its tool call, now, with reason.
func (s *Server) markCancelled(c *core, i int, reason string) {
	s.lockNow()
	defer s.mu.Unlock()
	if c != s.c {
		return
	}
	s.cancelled(c, i, reason)
}

// streamCancel is the reason a call of a revision without sessions is
// cancelled by: its response stream closed.
const streamCancel = "the call's response stream closed, which under MCP 2026-07-28 is its cancellation"

// streamClosed records the cancellation of request i of core c when its
// call is of a revision without sessions, whose client closed the
// call's response stream before the reply.
func (s *Server) streamClosed(c *core, i int) {
	s.lockNow()
	defer s.mu.Unlock()
	if c != s.c {
		return
	}
	if c.perRequestCall(i) {
		s.cancelled(c, i, streamCancel)
	}
}

// cancelled records on request i of core c that its tool call was
// cancelled, now, with reason. The caller holds mu.
func (s *Server) cancelled(c *core, i int, reason string) {
	cancel, seq, held := c.cancelCall(i, reason)
	if cancel == nil {
		return
	}
	if s.failed == nil {
		_ = s.write(entry(logEntry{Cancel: &cancelEntry{Seq: seq, Cancellation: *cancel}}))
	}
	// A client may close the call's stream before its cancellation is
	// sent (the go-sdk does): the hold that ended then was cancelled all
	// the same.
	if held != nil {
		s.setHeld(c, i, *held)
	}
}

// closeSessions ends every MCP session.
func (t *tools) closeSessions() {
	for ss := range t.server.Sessions() {
		_ = ss.Close()
	}
}
