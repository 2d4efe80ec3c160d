package serve

// The MCP tools' contract: create_refund, get_refund and list_refunds,
// their arguments, schemas and descriptions, and the handlers that take
// each call to the core.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/buildinfo"
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

// tools is the provider's MCP side: the MCP server with its three tools,
// over the Server's ledger, faults and session.
type tools struct {
	s      *Server
	server *mcp.Server
	// http serves the revisions with sessions; perRequest the revisions
	// without (2026-07-28 and after), where a POST is the whole call and
	// its closing cancels the handler.
	http, perRequest http.Handler

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
	t.server = mcp.NewServer(&mcp.Implementation{Name: "replaylab-refunds", Title: "replaylab refunds (a simulated provider)", Version: buildinfo.Version()},
		&mcp.ServerOptions{Logger: quiet, Instructions: "A simulated refunds provider: refunds made here are counted, and replaylab judges whether each intent was refunded exactly once."})
	mcp.AddTool(t.server, &mcp.Tool{Name: ToolCreate, Title: "Create a refund", Description: createDescription, InputSchema: schemaJSON(createSchema()),
		Annotations: &mcp.ToolAnnotations{Title: "Create a refund", DestructiveHint: boolPtr(true), IdempotentHint: false, OpenWorldHint: boolPtr(true)}}, t.create)
	mcp.AddTool(t.server, &mcp.Tool{Name: ToolGet, Title: "Read a refund", Description: getDescription, InputSchema: schemaJSON(inferred[getArgs]()),
		Annotations: &mcp.ToolAnnotations{Title: "Read a refund", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(true)}}, t.get)
	mcp.AddTool(t.server, &mcp.Tool{Name: ToolList, Title: "List refunds", Description: listDescription, InputSchema: schemaJSON(inferred[listArgs]()),
		Annotations: &mcp.ToolAnnotations{Title: "List refunds", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(true)}}, t.list)
	t.server.AddReceivingMiddleware(t.receiving)
	t.http = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return t.server }, &mcp.StreamableHTTPOptions{Logger: quiet, SessionTimeout: s.opts.MCPIdle})
	t.perRequest = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return t.server },
		&mcp.StreamableHTTPOptions{Logger: quiet, Stateless: true, PropagateRequestCancellation: true})
	return t
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
func toolKey(args json.RawMessage, k string) (string, *refusal) {
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

// decode reads a create's typed arguments as decodeRefund reads the
// REST form, parameter by parameter in the order of their names, so that
// a tool call is checked, digested and kept as the same create over REST
// is: the intent goes in the metadata field that carries it (intentField,
// else DefaultIntentField). It returns the parameters and the intent.
func (a createArgs) decode(intentField string) (refundParams, string, *refusal) {
	p := refundParams{Other: map[string]string{}, Metadata: map[string]string{}}
	field := intentField
	if _, ok := metadataField(field); !ok {
		field = DefaultIntentField
	}
	meta, _ := metadataField(field)
	params := []struct{ name, value string }{
		{"charge", a.Charge}, {"currency", a.Currency}, {field, a.Intent}, {"payment_intent", a.PaymentIntent}, {"reason", a.Reason},
	}
	if a.Amount != nil {
		params = append(params, struct{ name, value string }{"amount", strconv.FormatInt(*a.Amount, 10)})
	}
	slices.SortFunc(params, func(x, y struct{ name, value string }) int { return strings.Compare(x.name, y.name) })
	for _, kv := range params {
		var e *refusal
		switch {
		case kv.value == "":
			continue // left out, as the form leaves it
		case kv.name == field:
			e = p.takeMetadata(kv.name, meta, []string{kv.value})
		default:
			e = p.take(kv.name, kv.value)
		}
		if e != nil {
			return p, a.intentIn(intentField), e
		}
	}
	return p, a.intentIn(intentField), p.whole()
}

// intentIn is the intent a create's arguments carry in intentField: the
// intent argument where it is a metadata field, else the parameter it
// names.
func (a createArgs) intentIn(intentField string) string {
	v := a.Intent
	switch intentField {
	case "charge":
		v = a.Charge
	case "payment_intent":
		v = a.PaymentIntent
	}
	return strings.Clone(strings.TrimSpace(v))
}

// errResult is a tool error result: the provider's words, or only
// OpaqueError under --tool-errors opaque. The words of a tool's own
// refusal (a missing argument) stay plain: they are not the refund's. It
// is a Go error, which the SDK makes an isError result of with no
// structured content: an error shows no refund, not an empty one.
func (t *tools) errResult(e *refusal, opaque bool) error {
	if opaque && t.s.opts.ToolErrors == ToolErrorsOpaque {
		return errors.New(OpaqueError)
	}
	// The provider's words for the refusal: its type and code, as a
	// Stripe client reads them, then what a person reads.
	w := e.stripe()
	if w.Code != "" {
		return errors.New(w.Type + " (" + w.Code + "): " + w.Message)
	}
	return errors.New(w.Type + ": " + w.Message)
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
	params, intent, de := in.decode(s.opts.IntentField)
	if e == nil {
		e = de
	}
	if e == nil {
		e = s.intentRefused(intent)
	}
	if e != nil {
		return nil, toolRefund{}, t.refused(p, ck, intent, key, toolWords(e, s.opts.IntentField), call, traceOf(req))
	}
	turn, _, err := s.takeCreate(createRequest{principal: principalOfCall(req), key: key, intent: intent, params: params, call: call, trace: traceOf(req)}, p != nil)
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
		wire, how := s.hold(ctx, gone, t.endedOf(call))
		s.heldEnded(turn.c, turn.i, how)
		s.finish(turn.c, turn.i, wire, 0, nil, nil)
		t.lost(p, ck)
		return nil, toolRefund{}, errNoReply
	}
	if ctx.Err() != nil || (p != nil && p.left()) {
		s.streamClosed(turn.c, turn.i)
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

// traceOf is the W3C trace context a tool call carries: its
// _meta.traceparent, as the MCP conventions of OpenTelemetry propagate
// it, else the traceparent header of the HTTP request that carried it.
func traceOf(req *mcp.CallToolRequest) string {
	if req.Params != nil {
		if v, ok := req.Params.Meta["traceparent"].(string); ok {
			if tp := traceparent(v); tp != "" {
				return tp
			}
		}
	}
	if ex := req.Extra; ex != nil && ex.Header != nil {
		return traceparent(ex.Header.Get("traceparent"))
	}
	return ""
}

// toolWords says e in the tool's words: the intent is the intent
// argument, not the form field that carries it over REST.
func toolWords(e *refusal, field string) *refusal {
	out := *e
	if out.param == field {
		out.param = "intent"
	}
	out.why = strings.ReplaceAll(out.why, "start serve with --intent-field naming a field your client sends", "give the intent argument")
	out.why = strings.ReplaceAll(out.why, "Send "+field+"=<the logical operation's id>", "Give intent, the logical refund's id,")
	out.why = strings.ReplaceAll(out.why, field, "intent")
	return &out
}

// refused logs a call refused before the ledger and answers it.
func (t *tools) refused(p *post, ck callKey, intent, key string, e *refusal, call *export.ToolCall, tp string) error {
	c, i, _, err := t.s.logRefused(intent, key, e, call, tp)
	if err != nil {
		return t.errResult(errUnrecorded(err), false)
	}
	t.answer(p, ck, c, i, e.status(), e, nil)
	return t.errResult(e, false)
}

// get serves get_refund, as GET /v1/refunds/{id}.
func (t *tools) get(ctx context.Context, req *mcp.CallToolRequest, in getArgs) (*mcp.CallToolResult, toolRefund, error) {
	s := t.s
	defer s.busy()()
	call, ck, p := t.callOf(req, ToolGet)
	s.lockFor(traceOf(req))
	i, o, found, world := s.c.retrieveLogged(in.ID)
	s.c.setCall(i, call)
	if !world.Answered {
		return nil, toolRefund{}, t.heldRead(ctx, p, ck, call, i)
	}
	var (
		e     *refusal
		shown []missions.EvidenceObject
		out   toolRefund
	)
	status := 200
	if world.Code != http.StatusOK {
		e = readError()
		status = e.status()
	} else if found {
		shown = shownOf(o)
		out = toolRefundOf(o, o.Status, s.c.created(o))
	} else {
		e = notFound(in.ID)
		status = e.status()
	}
	err := s.record(i, planned{wire: export.WireDelivered, status: status, err: e, shown: shown})
	c := s.c
	s.mu.Unlock()
	if err != nil {
		return nil, toolRefund{}, t.errResult(errUnrecorded(err), false)
	}
	t.answer(p, ck, c, i, status, e, shown)
	if e != nil {
		// A read's error keeps its words under --tool-errors opaque,
		// whose words are a create's.
		return nil, toolRefund{}, t.errResult(e, false)
	}
	return nil, out, nil
}

// list serves list_refunds, as GET /v1/refunds.
func (t *tools) list(ctx context.Context, req *mcp.CallToolRequest, in listArgs) (*mcp.CallToolResult, toolList, error) {
	s := t.s
	defer s.busy()()
	call, ck, p := t.callOf(req, ToolList)
	field := s.opts.IntentField
	if _, ok := metadataField(field); !ok {
		field = DefaultIntentField
	}
	lq, query, e := in.decode(s.opts.IntentField)
	if e != nil {
		return nil, toolList{}, t.refused(p, ck, "", "", toolWords(e, field), call, traceOf(req))
	}
	s.lockFor(traceOf(req))
	i, page, more, world, e := s.c.listLogged(lq, query)
	if e != nil {
		s.mu.Unlock()
		return nil, toolList{}, t.refused(p, ck, "", "", toolWords(e, field), call, traceOf(req))
	}
	s.c.setCall(i, call)
	if !world.Answered {
		return nil, toolList{}, t.heldRead(ctx, p, ck, call, i)
	}
	if world.Code != http.StatusOK {
		e := readError()
		err := s.record(i, planned{wire: export.WireDelivered, status: e.status(), err: e})
		c := s.c
		s.mu.Unlock()
		if err != nil {
			return nil, toolList{}, t.errResult(errUnrecorded(err), false)
		}
		t.answer(p, ck, c, i, e.status(), e, nil)
		return nil, toolList{}, t.errResult(e, false)
	}
	out := toolList{Refunds: []toolRefund{}, HasMore: more}
	var shown []missions.EvidenceObject
	for _, o := range page {
		out.Refunds = append(out.Refunds, toolRefundOf(o, o.Status, s.c.created(o)))
		shown = append(shown, shownOf(o)...)
	}
	err := s.record(i, planned{wire: export.WireDelivered, status: 200, shown: shown})
	c := s.c
	s.mu.Unlock()
	if err != nil {
		return nil, toolList{}, t.errResult(errUnrecorded(err), false)
	}
	t.answer(p, ck, c, i, 200, nil, shown)
	return nil, out, nil
}

// heldRead ends a read tool call that met read_timeout: recorded held,
// it waits until the client cancels it, ends its session or goes, and
// never answers. The caller holds mu, which heldRead releases.
func (t *tools) heldRead(ctx context.Context, p *post, ck callKey, call *export.ToolCall, i int) error {
	s := t.s
	err := s.record(i, planned{wire: export.WireHeld})
	c := s.c
	s.mu.Unlock()
	if err != nil {
		return t.errResult(errUnrecorded(err), false)
	}
	t.track(ck, c, i)
	defer t.untrack(ck, false)
	var gone <-chan struct{}
	if p != nil {
		gone = p.gone
	}
	wire, how := s.hold(ctx, gone, t.endedOf(call))
	s.heldEnded(c, i, how)
	s.finish(c, i, wire, 0, nil, nil)
	t.lost(p, ck)
	return errNoReply
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
	sch := inferred[createArgs]()
	lo, hi := 1.0, float64(MaxAmount)
	amount := sch.Properties["amount"]
	amount.Minimum, amount.Maximum = &lo, &hi
	key := sch.Properties["idempotency_key"]
	key.Type, key.Types = "", []string{"null", "string"}
	return sch
}

// inferred is the input schema the SDK would infer from a tool's
// arguments, T.
func inferred[T any]() *jsonschema.Schema {
	sch, err := jsonschema.For[T](nil)
	if err != nil {
		panic("a tool's schema: " + err.Error()) // the types are ours; a test builds them
	}
	return sch
}

// schemaJSON is a tool's input schema as the JSON tools/list gives. A
// tool whose schema is JSON text, not a *jsonschema.Schema, costs the SDK
// a copy of that text on each call of the revisions without sessions,
// where it reads the schema for x-mcp-header annotations, rather than a
// marshal of the whole schema; the SDK still validates the arguments
// against it, resolved once.
func schemaJSON(sch *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(sch)
	if err != nil {
		panic("a tool's schema: " + err.Error())
	}
	return b
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
