package traces

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
)

// Scope names the instrumentation that writes a session's spans.
const Scope = "github.com/replaylab/replaylab/serve"

// WriteSession writes the provider's side of a session as OTLP/JSON
// lines, as the file exporter writes them: one TracesData per line, the
// session's own span first, then one span per request.
//
// A request is a server span: an MCP tool call by the MCP conventions
// ("tools/call create_refund"), a REST request by the HTTP server ones
// ("POST /v1/refunds"). The fault it met, what the ledger did and what
// became of the reply are attributes (replaylab.*) and events. A request
// sent with a trace context (traceparent) is a child of the client's span
// in the client's trace, linked to the session's span; one sent without
// is a child of the session's span. Times are the provider's clock:
// tick 0 at the session's start, a tick apart as the session ran. The
// same session writes the same bytes.
func WriteSession(w io.Writer, s *export.Session) error {
	bw := bufio.NewWriter(w)
	base := sessionStart(s)
	tick := time.Duration(s.Settings.TickMillis) * time.Millisecond
	at := func(t int) pcommon.Timestamp { return pcommon.NewTimestampFromTime(base.Add(time.Duration(t) * tick)) }
	root := ids(s, "session")
	var m ptrace.JSONMarshaler
	write := func(td ptrace.Traces) error {
		b, err := m.MarshalTraces(td)
		if err != nil {
			return err
		}
		bw.Write(b)
		return bw.WriteByte('\n')
	}
	last := s.Tick
	for r := range s.Each() {
		last = max(last, r.Tick)
	}

	td, ss := sessionTraces(s)
	sp := ss.AppendEmpty()
	sp.SetTraceID(pcommon.TraceID(root.trace))
	sp.SetSpanID(pcommon.SpanID(root.span))
	sp.SetName("replaylab serve session")
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetStartTimestamp(at(0))
	sp.SetEndTimestamp(at(last) + 1)
	a := sp.Attributes()
	a.PutStr("replaylab.contract", string(s.Settings.Contract))
	a.PutInt("replaylab.retention_ticks", int64(s.Settings.Retention))
	a.PutInt("replaylab.tick_ms", s.Settings.TickMillis)
	a.PutInt("replaylab.effects", int64(s.Outcome.Effects))
	if s.Mission != nil {
		a.PutStr("replaylab.mission", s.Mission.ID)
	}
	for _, v := range s.Outcome.Verdicts {
		ev := sp.Events().AppendEmpty()
		ev.SetName("replaylab.verdict")
		ev.SetTimestamp(at(last))
		ev.Attributes().PutStr("replaylab.intent", v.Intent)
		ev.Attributes().PutStr("replaylab.verdict", string(v.Verdict))
		ev.Attributes().PutInt("replaylab.effects", int64(v.Effects))
	}
	if err := write(td); err != nil {
		return err
	}
	for r := range s.Each() {
		td, ss := sessionTraces(s)
		requestSpan(ss.AppendEmpty(), s, r, root, at, last)
		if err := write(td); err != nil {
			return err
		}
	}
	return bw.Flush()
}

type spanIDs struct {
	trace [16]byte
	span  [8]byte
}

// ids are a span's ids, made from the session and what names the span:
// the same session gives the same ids.
func ids(s *export.Session, what string) spanIDs {
	h := sha256.Sum256([]byte(s.Started + "\x00" + string(s.Settings.Contract) + "\x00" + what))
	var out spanIDs
	copy(out.trace[:], h[:16])
	copy(out.span[:], h[16:24])
	return out
}

// sessionStart is tick 0's time; a session that kept none starts at the
// first nanosecond, since a span needs a time.
func sessionStart(s *export.Session) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, s.Started); err == nil {
		return t
	}
	return time.Unix(0, 1)
}

func sessionTraces(s *export.Session) (ptrace.Traces, ptrace.SpanSlice) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "replaylab serve")
	sc := rs.ScopeSpans().AppendEmpty()
	sc.Scope().SetName(Scope)
	return td, sc.Spans()
}

// routes are the REST routes of each kind of request.
var routes = map[string][2]string{
	export.RequestCreate:   {"POST", "/v1/refunds"},
	export.RequestRetrieve: {"GET", "/v1/refunds/{id}"},
	export.RequestList:     {"GET", "/v1/refunds"},
	export.RequestUpdate:   {"POST", "/v1/refunds/{id}"},
	export.RequestCancel:   {"POST", "/v1/refunds/{id}/cancel"},
	export.RequestFaults:   {"POST", "/_replaylab/faults"},
}

func requestSpan(sp ptrace.Span, s *export.Session, r export.SessionRequest, root spanIDs, at func(int) pcommon.Timestamp, last int) {
	own := ids(s, "request "+strconv.Itoa(r.Seq))
	sp.SetSpanID(pcommon.SpanID(own.span))
	trace, parent := root.trace, root.span
	if tid, pid, ok := parseTraceparent(r.Traceparent); ok {
		trace, parent = tid, pid
		l := sp.Links().AppendEmpty()
		l.SetTraceID(pcommon.TraceID(root.trace))
		l.SetSpanID(pcommon.SpanID(root.span))
		l.Attributes().PutStr("replaylab.link", "the session this request was served in")
	}
	sp.SetTraceID(pcommon.TraceID(trace))
	sp.SetParentSpanID(pcommon.SpanID(parent))
	sp.SetKind(ptrace.SpanKindServer)
	a := sp.Attributes()
	if c := r.Call; c != nil {
		sp.SetName("tools/call " + c.Tool)
		a.PutStr("mcp.method.name", "tools/call")
		a.PutStr("gen_ai.operation.name", "execute_tool")
		a.PutStr("gen_ai.tool.name", c.Tool)
		a.PutStr("jsonrpc.request.id", c.ID)
		if c.Session != "" {
			a.PutStr("mcp.session.id", c.Session)
		}
		transport := "tcp"
		if c.Transport == export.TransportStdio {
			transport = "pipe"
		}
		a.PutStr("network.transport", transport)
	} else {
		route, ok := routes[r.Kind]
		if ok {
			sp.SetName(route[0] + " " + route[1])
			a.PutStr("http.request.method", route[0])
			a.PutStr("http.route", route[1])
		} else {
			sp.SetName("HTTP") // refused before its route was known
		}
		if r.Status != 0 && r.Wire == export.WireDelivered {
			a.PutInt("http.response.status_code", int64(r.Status))
		}
	}
	a.PutInt("replaylab.seq", int64(r.Seq))
	a.PutStr("replaylab.kind", r.Kind)
	if r.Again > 0 {
		// The requests alike it that came right after, counted on it.
		a.PutInt("replaylab.again", int64(r.Again))
	}
	put := func(k, v string) {
		if v != "" {
			a.PutStr(k, v)
		}
	}
	put("replaylab.intent", r.Intent)
	put("replaylab.idempotency_key", r.Key)
	put("replaylab.fixture", string(r.Fixture))
	put("replaylab.read_fault", string(r.ReadFault))
	put("replaylab.provider", r.Provider)
	put("replaylab.wire", r.Wire)
	put("replaylab.error", r.Error)
	refund := ""
	if len(r.Shown) > 0 {
		refund = r.Shown[0].Object.String()
	} else if r.Response != nil && r.Response.Object != 0 {
		refund = r.Response.Object.String()
	}
	put("replaylab.refund", refund)
	switch {
	case r.Wire == export.WireDelivered && r.Status >= 500:
		sp.Status().SetCode(ptrace.StatusCodeError)
		a.PutStr("error.type", strconv.Itoa(r.Status))
	case r.Call != nil && r.Error != "":
		sp.Status().SetCode(ptrace.StatusCodeError)
		a.PutStr("error.type", "tool_error")
	}
	start := at(r.Tick)
	sp.SetStartTimestamp(start)
	end := start + pcommon.Timestamp(time.Millisecond)
	event := func(name string, t pcommon.Timestamp, kv ...string) {
		ev := sp.Events().AppendEmpty()
		ev.SetName(name)
		ev.SetTimestamp(t)
		for i := 0; i+1 < len(kv); i += 2 {
			ev.Attributes().PutStr(kv[i], kv[i+1])
		}
	}
	if r.Fixture != "" {
		event("replaylab.fault", start, "replaylab.fixture", string(r.Fixture), "replaylab.delay_ticks", strconv.Itoa(r.Delay))
	}
	if r.ReadFault != "" {
		event("replaylab.read_fault", start, "replaylab.read_fault", string(r.ReadFault))
	}
	switch ledger.Action(r.Provider) {
	case ledger.Committed, ledger.Completed:
		event("replaylab.effect", start, "replaylab.refund", refund, "replaylab.effect", "a refund committed: one more effect")
	case ledger.Executing:
		event("replaylab.effect", at(r.Tick+r.Delay), "replaylab.effect", fmt.Sprintf("the refund commits %d ticks after the request", r.Delay))
	case ledger.Replayed:
		event("replaylab.replayed", start, "replaylab.effect", "the saved response was returned: no new effect")
	}
	if c := r.Call; c != nil && c.Cancelled != nil {
		t := at(c.Cancelled.Tick)
		event("mcp.cancelled", t, "replaylab.reason", c.Cancelled.Reason)
		end = max(end, t)
	}
	switch r.Wire {
	case export.WireDelivered:
		event("replaylab.reply", end, "replaylab.wire", r.Wire)
	case export.WireHeld, export.WireOpen:
		// The reply never left: the span lasts until the client went
		// away or the session ended.
		if r.Call == nil || r.Call.Cancelled == nil {
			end = at(last) + 1
		}
		event("replaylab.reply", end, "replaylab.wire", r.Wire, "replaylab.note", "the reply was held and never sent")
	default:
		event("replaylab.reply", end, "replaylab.wire", r.Wire)
	}
	sp.SetEndTimestamp(end)
}

// parseTraceparent reads a W3C traceparent's trace id and parent id.
func parseTraceparent(tp string) (trace [16]byte, span [8]byte, ok bool) {
	if len(tp) != 55 {
		return trace, span, false
	}
	t, err1 := hex.DecodeString(tp[3:35])
	p, err2 := hex.DecodeString(tp[36:52])
	if err1 != nil || err2 != nil {
		return trace, span, false
	}
	copy(trace[:], t)
	copy(span[:], p)
	return trace, span, true
}

// WriteRecord writes s to w in format f: the session, its history, or
// the provider's spans (WriteSession).
func WriteRecord(w io.Writer, f export.RecordFormat, s *export.Session) error {
	switch f {
	case export.RecordTraces:
		return WriteSession(w, s)
	case export.RecordHistory:
		data, err := export.MarshalHistory(s.History())
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	return export.WriteSession(w, s)
}
