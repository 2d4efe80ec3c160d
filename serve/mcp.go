package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// The provider's MCP tools (serve --mcp).
const (
	ToolCreate = "create_refund"
	ToolGet    = "get_refund"
	ToolList   = "list_refunds"
)

// MCPPath is where the MCP tools are served over Streamable HTTP.
const MCPPath = "/mcp"

// What a tool's error result says (--tool-errors).
const (
	// ToolErrorsPlain: the provider's own words, which tell a refusal
	// from a saved server error.
	ToolErrorsPlain = "plain"
	// ToolErrorsOpaque: every error result of a create that reached the
	// provider says OpaqueError and nothing else, as a refund tool that
	// hides its provider's words does. A refusal of the call itself (a
	// missing argument) stays in words.
	ToolErrorsOpaque = "opaque"
)

// ToolErrorModes lists what --tool-errors takes.
func ToolErrorModes() []string { return []string{ToolErrorsPlain, ToolErrorsOpaque} }

// OpaqueError is all an error result says under ToolErrorsOpaque.
const OpaqueError = "Failed to create refund"

// MaxMCPBody bounds an MCP request over HTTP: room for an argument far
// over any limit a refund has, so that such an argument is answered by
// the tool, which says which limit it broke.
const MaxMCPBody = 4 << 20

// The private request headers that tell a tool handler which call it
// serves: set by the transport's side of the provider (the HTTP handler,
// the stdio connection), never taken from a client.
const (
	hdrTransport = "Replaylab-Mcp-Transport"
	hdrID        = "Replaylab-Mcp-Id"
	hdrPost      = "Replaylab-Mcp-Post"
)

// tools is the provider's MCP side: the MCP server with its three tools,
// over the Server's ledger, faults and session.
type tools struct {
	s      *Server
	server *mcp.Server
	http   http.Handler

	mu    sync.Mutex
	posts map[int]*post
	next  int
	// inflight holds where the calls being answered are in the session,
	// by MCP session and full JSON-RPC id, for their cancellations; early
	// holds cancellations that came before their call was logged.
	inflight   map[callKey]callAt
	unanswered []callKey
	early      map[callKey]earlyCancel
	// ended holds, per MCP session, a channel closed when the client ends
	// the session (over stdio, when its input ends): its held calls end.
	ended map[string]chan struct{}
	// stdio is the stdio session's connection, when one is served.
	stdio *stdioConn
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

// createArgs are create_refund's arguments.
type createArgs struct {
	Intent         string `json:"intent" jsonschema:"the id of the logical refund this call carries out (e.g. refund-1042), at most 500 characters; the same on every retry of it"`
	Charge         string `json:"charge,omitempty" jsonschema:"the charge to refund (ch_...); give charge or payment_intent"`
	PaymentIntent  string `json:"payment_intent,omitempty" jsonschema:"the payment intent to refund (pi_...); give charge or payment_intent"`
	Amount         *int64 `json:"amount,omitempty" jsonschema:"the amount to refund in the currency's smallest unit (4500 is 45.00), from 1 to 99999999; this provider holds no charges, so it needs the amount"`
	Currency       string `json:"currency,omitempty" jsonschema:"three-letter ISO currency code, lowercase (usd)"`
	Reason         string `json:"reason,omitempty" jsonschema:"duplicate, fraudulent or requested_by_customer"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"mint one key per intent, keep it, and send the same key on every retry of that intent: the provider then answers a retry with the first call's result instead of refunding again; at most 255 characters; null or left out sends none"`
}

// getArgs are get_refund's arguments.
type getArgs struct {
	ID string `json:"id" jsonschema:"the refund's id (re_...), as create_refund or list_refunds gave it"`
}

// listArgs are list_refunds' arguments.
type listArgs struct {
	Intent        string `json:"intent,omitempty" jsonschema:"list the refunds made for this intent: how to find out whether a call whose result never came made a refund"`
	Charge        string `json:"charge,omitempty" jsonschema:"list the refunds of this charge"`
	PaymentIntent string `json:"payment_intent,omitempty" jsonschema:"list the refunds of this payment intent"`
	Limit         int    `json:"limit,omitempty" jsonschema:"how many refunds at most, 1 to 100 (10 when left out)"`
}

// toolRefund is a refund as the tools show it.
type toolRefund struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	Amount        int64             `json:"amount"`
	Currency      string            `json:"currency"`
	Status        string            `json:"status"`
	Intent        string            `json:"intent"`
	Charge        string            `json:"charge,omitempty"`
	PaymentIntent string            `json:"payment_intent,omitempty"`
	Reason        string            `json:"reason,omitempty"`
	Created       int64             `json:"created"`
	Metadata      map[string]string `json:"metadata,omitempty"`
}

// toolList is list_refunds' result.
type toolList struct {
	Refunds []toolRefund `json:"refunds"`
	HasMore bool         `json:"has_more"`
}

func toolRefundOf(o ledger.Object, st ledger.Status, created int64) toolRefund {
	r := refundOf(o, st, created)
	out := toolRefund{ID: r.ID, Object: r.Object, Amount: r.Amount, Currency: r.Currency, Status: r.Status, Intent: o.Intent, Created: r.Created, Metadata: r.Metadata}
	for _, f := range []struct {
		to   *string
		from *string
	}{{&out.Charge, r.Charge}, {&out.PaymentIntent, r.PaymentIntent}, {&out.Reason, r.Reason}} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
	return out
}

// Descriptions a model reads.
const (
	createDescription = "Refund a charge or payment intent. The refund is real money: a call that times out or errors may still have made it. " +
		"Mint one idempotency_key per intent, keep it, and send the same key on every retry of that intent; with the key, a retry returns the first call's refund instead of making a second. " +
		"Without a key, every call that reaches the provider can refund again. When a call's result never comes, do not call again with a new key: call again with the same key, or list_refunds by intent to find out what happened."
	getDescription  = "Read one refund by its id: its status (pending, succeeded, failed, canceled) now."
	listDescription = "List refunds, newest first, by intent, charge or payment intent. Use it to reconcile: to find out whether an earlier call whose result never came made a refund."
)

func boolPtr(b bool) *bool { return &b }

// newTools builds the provider's MCP server.
func newTools(s *Server) *tools {
	t := &tools{s: s, posts: map[int]*post{}, inflight: map[callKey]callAt{}, early: map[callKey]earlyCancel{}, ended: map[string]chan struct{}{}}
	quiet := slog.New(slog.DiscardHandler)
	t.server = mcp.NewServer(&mcp.Implementation{Name: "replaylab-refunds", Title: "replaylab refunds (a simulated provider)", Version: "1"},
		&mcp.ServerOptions{Logger: quiet, Instructions: "A simulated refunds provider: refunds made here are counted, and replaylab judges whether each intent was refunded exactly once."})
	mcp.AddTool(t.server, &mcp.Tool{Name: ToolCreate, Title: "Create a refund", Description: createDescription, InputSchema: createSchema(),
		Annotations: &mcp.ToolAnnotations{Title: "Create a refund", DestructiveHint: boolPtr(true), IdempotentHint: false, OpenWorldHint: boolPtr(true)}}, t.create)
	mcp.AddTool(t.server, &mcp.Tool{Name: ToolGet, Title: "Read a refund", Description: getDescription,
		Annotations: &mcp.ToolAnnotations{Title: "Read a refund", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(true)}}, t.get)
	mcp.AddTool(t.server, &mcp.Tool{Name: ToolList, Title: "List refunds", Description: listDescription,
		Annotations: &mcp.ToolAnnotations{Title: "List refunds", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(true)}}, t.list)
	t.server.AddReceivingMiddleware(t.receiving)
	t.http = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return t.server }, &mcp.StreamableHTTPOptions{Logger: quiet})
	return t
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
	if r.Method == http.MethodDelete {
		// The client ends its session: its held calls end with it (the
		// SDK's DELETE waits for them).
		if id := r.Header.Get("Mcp-Session-Id"); t.live(id) {
			t.endSession(id)
		}
	}
	if r.Method != http.MethodPost {
		t.http.ServeHTTP(w, r)
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
	if msg := idProblem(id); msg != "" {
		writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, msg+".")
		return
	}
	if batchCallsTools(body) {
		writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest,
			"The request is a batch with a tools/call in it; replaylab serve takes one tool call a request, so that the session can tell each call and its cancellation apart. Send the calls one at a time (batches are not part of MCP since 2025-06-18).")
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
	t.http.ServeHTTP(postWriter{p}, r)
	t.mu.Lock()
	delete(t.posts, n)
	t.mu.Unlock()
	p.settle()
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
	id := ""
	if ex := req.Extra; ex != nil && ex.Header != nil {
		if tr := ex.Header.Get(hdrTransport); tr != "" {
			c.Transport = tr
		}
		id = ex.Header.Get(hdrID)
		if n, err := strconv.Atoi(ex.Header.Get(hdrPost)); err == nil {
			t.mu.Lock()
			p = t.posts[n]
			t.mu.Unlock()
		}
	}
	if id == "" {
		id = "null"
	}
	c.ID = termtext.Shorten(id, MaxReadPayload)
	if req.Session != nil {
		c.Session = req.Session.ID()
	}
	return c, callKey{c.Session, keyID(id)}, p
}

// answer records the answer to call i of core c once it is known whether
// it reached the client: over HTTP when the POST is over, over stdio when
// the SDK has written it. Until then the provider counts the call as
// being answered.
func (t *tools) answer(p *post, key callKey, c *core, i, status int, e *apiError, shown []missions.EvidenceObject) {
	record := func(wire string) {
		if wire == export.WireDelivered {
			t.s.finish(c, i, wire, status, e, shown)
		} else {
			t.s.finish(c, i, wire, 0, nil, nil)
		}
	}
	if p != nil {
		p.mu.Lock()
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

// endSession ends the held calls of MCP session id ("" for stdio).
func (t *tools) endSession(id string) {
	ch := t.sessionEnded(id)
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
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

// principalOfCall is who the digest binds a call's refund to: the bearer
// token of its HTTP request when it has one, else "mcp".
func principalOfCall(req *mcp.CallToolRequest) string {
	if ex := req.Extra; ex != nil && ex.Header != nil {
		if h := ex.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
			if k := strings.TrimSpace(h[len("Bearer "):]); k != "" {
				return k
			}
		}
	}
	return "mcp"
}

// toolKey checks a call's idempotency key as keyOf checks the header:
// absent is none, but one sent blank, not UTF-8 or over 255 characters
// is refused.
func toolKey(args json.RawMessage, k string) (string, *apiError) {
	if k == "" {
		var raw map[string]json.RawMessage
		if json.Unmarshal(args, &raw) == nil {
			if v, sent := raw["idempotency_key"]; sent && string(bytes.TrimSpace(v)) != "null" {
				return checkKey("", "idempotency_key", "idempotency_key", "argument")
			}
		}
		return "", nil
	}
	return checkKey(k, "idempotency_key", "idempotency_key", "argument")
}

// form is a create's arguments as the REST API's form, so that a tool
// call is checked, digested and kept as the same create over REST is.
func (a createArgs) form(intentField string) url.Values {
	f := url.Values{}
	set := func(k, v string) {
		if v != "" {
			f.Set(k, v)
		}
	}
	set("charge", a.Charge)
	set("payment_intent", a.PaymentIntent)
	if a.Amount != nil {
		f.Set("amount", strconv.FormatInt(*a.Amount, 10))
	}
	set("currency", a.Currency)
	set("reason", a.Reason)
	if _, ok := metadataField(intentField); ok {
		set(intentField, a.Intent)
	} else {
		set(DefaultIntentField, a.Intent)
	}
	return f
}

// errResult is a tool error result: the provider's words, or only
// OpaqueError under --tool-errors opaque. The words of a tool's own
// refusal (a missing argument) stay plain: they are not the refund's. It
// is a Go error, which the SDK makes an isError result of with no
// structured content: an error shows no refund, not an empty one.
func (t *tools) errResult(e *apiError, opaque bool) error {
	msg := e.Message
	if opaque && t.s.opts.ToolErrors == ToolErrorsOpaque {
		msg = OpaqueError
	} else if e.Code != "" {
		msg = e.Type + " (" + e.Code + "): " + msg
	} else {
		msg = e.Type + ": " + msg
	}
	return errors.New(msg)
}

// errNoReply ends a call whose reply the provider never sends (a lost
// reply the client has given up on): whatever it returns, the client
// does not hear it.
var errNoReply = errors.New("no reply: the provider lost this call's reply")

// create serves create_refund: the call meets its fault as a POST
// /v1/refunds does.
func (t *tools) create(ctx context.Context, req *mcp.CallToolRequest, in createArgs) (*mcp.CallToolResult, toolRefund, error) {
	s := t.s
	defer s.busy()()
	call, ck, p := t.callOf(req, ToolCreate)
	key, e := toolKey(req.Params.Arguments, in.IdempotencyKey)
	var params refundParams
	form := in.form(s.opts.IntentField)
	intent := intentOf(form, s.opts.IntentField)
	if e == nil {
		params, e = decodeRefund(form)
	}
	if e == nil {
		e = s.intentRefused(intent)
	}
	if e != nil {
		return nil, toolRefund{}, t.refused(p, ck, intent, key, toolWords(e, s.opts.IntentField), call)
	}
	turn, _, err := s.takeCreate(principalOfCall(req), key, intent, params, call, p != nil)
	if err != nil {
		return nil, toolRefund{}, t.errResult(errUnrecorded(err), false)
	}
	t.track(ck, turn.c, turn.i)
	answered := false
	defer func() { t.untrack(ck, answered) }()
	switch turn.fate {
	case fateClose:
		// The commit stands; the response stream closes before the
		// result is written.
		s.crashed(turn, intent)
		p.close()
		return nil, toolRefund{}, errNoReply
	case fateHold:
		// No result: the call waits until the client cancels it, ends
		// its session or goes. Over stdio a crash after the commit is
		// this too: the stream there is the whole session.
		var gone <-chan struct{}
		if p != nil {
			gone = p.gone
		}
		wire := s.hold(ctx, gone, t.sessionEnded(call.Session))
		s.finish(turn.c, turn.i, wire, 0, nil, nil)
		t.lost(p, ck)
		return nil, toolRefund{}, errNoReply
	}
	if ctx.Err() != nil || (p != nil && p.left()) {
		s.finish(turn.c, turn.i, export.WireGone, 0, nil, nil)
		t.lost(p, ck)
		return nil, toolRefund{}, errNoReply
	}
	t.answer(p, ck, turn.c, turn.i, turn.status, turn.aerr, turn.shown)
	answered = true
	if turn.aerr != nil {
		return nil, toolRefund{}, t.errResult(turn.aerr, true)
	}
	res := &mcp.CallToolResult{Meta: mcp.Meta{"replaylab/request": requestID(turn.i + 1)}}
	if turn.origin > 0 {
		res.Meta["replaylab/original_request"] = requestID(turn.origin)
	}
	if turn.res.Action == ledger.Replayed {
		res.Meta["replaylab/idempotent_replayed"] = true
	}
	return res, toolRefundOf(turn.obj, turn.res.Response.Status, turn.created), nil
}

// toolWords says e in the tool's words: the intent is the intent
// argument, not the form field that carries it over REST.
func toolWords(e *apiError, field string) *apiError {
	out := *e
	if out.Param == field {
		out.Param = "intent"
	}
	out.Message = strings.ReplaceAll(out.Message, "start serve with --intent-field naming a field your client sends", "give the intent argument")
	out.Message = strings.ReplaceAll(out.Message, "Send "+field+"=<the logical operation's id>", "Give intent, the logical refund's id,")
	out.Message = strings.ReplaceAll(out.Message, field, "intent")
	return &out
}

// refused logs a call refused before the ledger and answers it.
func (t *tools) refused(p *post, ck callKey, intent, key string, e *apiError, call *export.ToolCall) error {
	c, i, err := t.s.logRefused(intent, key, e, call)
	if err != nil {
		return t.errResult(errUnrecorded(err), false)
	}
	t.answer(p, ck, c, i, e.Status, e, nil)
	return t.errResult(e, false)
}

// get serves get_refund, as GET /v1/refunds/{id}.
func (t *tools) get(ctx context.Context, req *mcp.CallToolRequest, in getArgs) (*mcp.CallToolResult, toolRefund, error) {
	s := t.s
	defer s.busy()()
	call, ck, p := t.callOf(req, ToolGet)
	s.lockNow()
	i, o, found := s.c.retrieveLogged(in.ID)
	s.c.setCall(i, call)
	var (
		e     *apiError
		shown []missions.EvidenceObject
		out   toolRefund
	)
	status := 200
	if found {
		shown = shownOf(o)
		out = toolRefundOf(o, o.Status, s.c.created(o))
	} else {
		e = notFound(in.ID)
		status = e.Status
	}
	err := s.record(i, planned{wire: export.WireDelivered, status: status, err: e, shown: shown})
	c := s.c
	s.mu.Unlock()
	if err != nil {
		return nil, toolRefund{}, t.errResult(errUnrecorded(err), false)
	}
	t.answer(p, ck, c, i, status, e, shown)
	if e != nil {
		return nil, toolRefund{}, t.errResult(e, false)
	}
	return nil, out, nil
}

// list serves list_refunds, as GET /v1/refunds.
func (t *tools) list(ctx context.Context, req *mcp.CallToolRequest, in listArgs) (*mcp.CallToolResult, toolList, error) {
	s := t.s
	defer s.busy()()
	call, ck, p := t.callOf(req, ToolList)
	q := url.Values{}
	for k, v := range map[string]string{"charge": in.Charge, "payment_intent": in.PaymentIntent} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if in.Limit != 0 {
		q.Set("limit", strconv.Itoa(in.Limit))
	}
	field := s.opts.IntentField
	if _, ok := metadataField(field); !ok {
		field = DefaultIntentField
	}
	if in.Intent != "" {
		q.Set(field, in.Intent)
	}
	lq, e := parseList(q, field)
	if e != nil {
		return nil, toolList{}, t.refused(p, ck, "", "", toolWords(e, field), call)
	}
	s.lockNow()
	page, more, e := s.c.list(lq)
	if e != nil {
		s.mu.Unlock()
		return nil, toolList{}, t.refused(p, ck, "", "", toolWords(e, field), call)
	}
	out := toolList{Refunds: []toolRefund{}, HasMore: more}
	var shown []missions.EvidenceObject
	for _, o := range page {
		out.Refunds = append(out.Refunds, toolRefundOf(o, o.Status, s.c.created(o)))
		shown = append(shown, shownOf(o)...)
	}
	i := s.c.logRead(export.RequestList, lq.intent, q.Encode())
	s.c.setCall(i, call)
	err := s.record(i, planned{wire: export.WireDelivered, status: 200, shown: shown})
	c := s.c
	s.mu.Unlock()
	if err != nil {
		return nil, toolList{}, t.errResult(errUnrecorded(err), false)
	}
	t.answer(p, ck, c, i, 200, nil, shown)
	return nil, out, nil
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
	r := c.reqs.get(i)
	if r.Call == nil || r.Call.Cancelled != nil {
		return
	}
	call := *r.Call
	call.Cancelled = &export.Cancellation{Tick: max(c.led.Now(), r.Tick), Reason: reason}
	c.setCall(i, &call)
	if s.failed == nil {
		_ = s.write(entry(logEntry{Cancel: &cancelEntry{Seq: r.Seq, Cancellation: *call.Cancelled}}))
	}
}

// toolArguments lists each tool's arguments, as its schema names them.
var toolArguments = map[string][]string{
	ToolCreate: fieldsOf[createArgs](),
	ToolGet:    fieldsOf[getArgs](),
	ToolList:   fieldsOf[listArgs](),
}

// fieldsOf lists the JSON names of T's fields.
func fieldsOf[T any]() []string {
	var out []string
	rt := reflect.TypeFor[T]()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}

// argumentsProblem says what is wrong with a call's arguments, before the
// SDK reads them into the tool's type: not an object, or a name the tool
// does not take. "" when nothing is, or the tool is not one of ours (the
// SDK answers that itself).
func argumentsProblem(tool string, args json.RawMessage) string {
	names, ok := toolArguments[tool]
	if !ok {
		return ""
	}
	takes := tool + " takes an object of arguments: " + strings.Join(names, ", ") + "."
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return ""
	}
	var fields map[string]json.RawMessage
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &fields) != nil {
		return "The arguments are not a JSON object. " + takes
	}
	for name := range fields {
		if !slices.Contains(names, name) {
			return "Unknown argument " + strconv.Quote(termtext.Shorten(name, 100)) + ". " + takes
		}
	}
	return ""
}

// createSchema is create_refund's input schema: inferred from its
// arguments, with the bounds an amount has, and a key that may be sent as
// null for none.
func createSchema() *jsonschema.Schema {
	sch, err := jsonschema.For[createArgs](nil)
	if err != nil {
		panic("create_refund's schema: " + err.Error()) // the type is ours; a test builds it
	}
	lo, hi := 1.0, float64(MaxAmount)
	amount := sch.Properties["amount"]
	amount.Minimum, amount.Maximum = &lo, &hi
	key := sch.Properties["idempotency_key"]
	key.Type, key.Types = "", []string{"null", "string"}
	return sch
}

// closeSessions ends every MCP session.
func (t *tools) closeSessions() {
	for ss := range t.server.Sessions() {
		_ = ss.Close()
	}
}

// mcpTools is the provider's MCP side, made on first use.
func (s *Server) mcpTools() *tools {
	s.toolsOnce.Do(func() { s.tools = newTools(s) })
	return s.tools
}

// ToolNames lists the MCP tools, in the order tools/list gives them.
func ToolNames() []string {
	return slices.Sorted(slices.Values([]string{ToolCreate, ToolGet, ToolList}))
}
