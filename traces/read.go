// Package traces holds OpenTelemetry traces as replaylab meets them: the
// tool-call spans of an agent, read from OTLP/JSON lines as the
// OpenTelemetry file exporter writes them, and a serve session written as
// the provider's spans. Decoding is the collector's pdata; what a span
// means for an intent is check's business, not this package's.
package traces

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// MaxLine bounds one line of a traces file: one TracesData, one batch of
// the file exporter.
const MaxLine = 64 << 20

// Convention names the semantic conventions a tool-call span follows.
type Convention string

// The conventions a tool-call span is recognised by.
const (
	// GenAI is OpenTelemetry's GenAI "execute_tool {gen_ai.tool.name}"
	// span (gen_ai.operation.name = execute_tool).
	GenAI Convention = "execute_tool"
	// MCP is the MCP conventions' client span "tools/call {tool}"
	// (mcp.method.name = tools/call, kind client).
	MCP Convention = "tools/call"
	// Traceloop is @traceloop/instrumentation-mcp's "{tool}.tool" span
	// (traceloop.span.kind = tool).
	Traceloop Convention = "traceloop"
	// AISDK is the Vercel AI SDK's "ai.toolCall" span.
	AISDK Convention = "ai.toolCall"
)

// Call is one tool-call span: the facts a span gives of a call, as the
// span states them. Args and Result are JSON text where the span
// captured them ("" where it did not); Error is the first error signal
// it carries: error.type, else an exception event's type and message,
// else the status message of a span whose status is an error.
type Call struct {
	// Line is the line of the file the span is on; where in that line
	// is Path's.
	Line    int
	i, j, k int

	Trace  pcommon.TraceID
	Span   pcommon.SpanID
	Parent pcommon.SpanID

	Name       string
	Convention Convention
	Tool       string
	// CallID is the tool call's id (gen_ai.tool.call.id, ai.toolCall.id);
	// RequestID the JSON-RPC request id (jsonrpc.request.id).
	CallID    string
	RequestID string

	// Start and End are Unix nanoseconds.
	Start, End int64

	Args   string
	Result string
	// Failed: the span's status is an error, or it names an error type.
	Failed bool
	Error  string
}

// Path is where in its line the span is:
// resourceSpans[0].scopeSpans[0].spans[3].
func (c *Call) Path() string {
	return fmt.Sprintf("resourceSpans[%d].scopeSpans[%d].spans[%d]", c.i, c.j, c.k)
}

// Stats counts what a file held.
type Stats struct {
	Lines, Spans, Calls int
	// Server counts server spans: a provider's side of the calls (what
	// serve --record writes), not a client's.
	Server int
}

// Error is a line of a traces file that does not read: where, and what
// is wrong, in the words of the field it is about.
type Error struct {
	Name string
	Line int
	// Field is the path to the field at fault, when one is known.
	Field string
	Err   error
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s:%d: %s: %v", e.Name, e.Line, e.Field, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Read reads OTLP/JSON lines from r (named name in errors), one
// TracesData per line, and calls fn with each tool-call span, in the
// order of the file. Every span is held to what the format asks: ids in
// hex of their length, times as decimal strings, a name and both times.
// A line that does not read stops it with an *Error. Lines are decoded
// on a goroutine of their own, a few ahead of fn.
func Read(name string, r io.Reader, fn func(*Call) error) (Stats, error) {
	out := make(chan batch, 4)
	stop := make(chan struct{})
	go func() {
		defer close(out)
		decode(name, r, out, stop)
	}()
	var st Stats
	var err error
	for b := range out {
		st.Lines, st.Spans, st.Server = b.lines, b.spans, b.server
		for i := 0; err == nil && i < len(b.calls); i++ {
			st.Calls++
			if err = fn(&b.calls[i]); err != nil {
				close(stop)
			}
		}
		if err == nil && b.err != nil {
			err = b.err
		}
	}
	return st, err
}

// batch is one line's tool-call spans, the counts so far, or the error
// that ends the file.
type batch struct {
	calls                []Call
	lines, spans, server int
	err                  error
}

// decode reads r's lines and sends each line's calls on out, until the
// file ends, a line does not read, or stop is closed.
func decode(name string, r io.Reader, out chan<- batch, stop <-chan struct{}) {
	br := bufio.NewReaderSize(r, 1<<20)
	var u ptrace.JSONUnmarshaler
	lines, spans, server := 0, 0, 0
	send := func(b batch) bool {
		b.lines, b.spans, b.server = lines, spans, server
		select {
		case out <- b:
			return true
		case <-stop:
			return false
		}
	}
	for {
		raw, err := readLine(br)
		if len(raw) == 0 && errors.Is(err, io.EOF) {
			send(batch{})
			return
		}
		lines++
		if err != nil && !errors.Is(err, io.EOF) {
			send(batch{err: &Error{Name: name, Line: lines, Err: err}})
			return
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			if errors.Is(err, io.EOF) {
				send(batch{})
				return
			}
			continue
		}
		if msg := shape(raw); msg != "" {
			send(batch{err: &Error{Name: name, Line: lines, Err: errors.New(msg)}})
			return
		}
		if field, msg := numberTime(raw); field != "" {
			send(batch{err: &Error{Name: name, Line: lines, Field: field, Err: errors.New(msg)}})
			return
		}
		td, derr := u.UnmarshalTraces(raw)
		if derr != nil {
			send(batch{err: lineError(name, lines, raw, derr)})
			return
		}
		var b batch
		rss := td.ResourceSpans()
		for i := range rss.Len() {
			sss := rss.At(i).ScopeSpans()
			for j := range sss.Len() {
				ss := sss.At(j).Spans()
				for k := range ss.Len() {
					sp := ss.At(k)
					spans++
					if werr := whole(sp); werr != nil {
						at := Call{i: i, j: j, k: k}
						b.err = &Error{Name: name, Line: lines, Field: at.Path(), Err: werr}
						send(b)
						return
					}
					var c Call
					if !callOf(sp, &c) {
						if sp.Kind() == ptrace.SpanKindServer {
							server++
						}
						continue
					}
					c.Line, c.i, c.j, c.k = lines, i, j, k
					b.calls = append(b.calls, c)
				}
			}
		}
		if !send(b) || errors.Is(err, io.EOF) {
			if errors.Is(err, io.EOF) {
				send(batch{})
			}
			return
		}
	}
}

// whole refuses a span the format says cannot be: no name, no times, an
// end before its start, an empty id.
func whole(sp ptrace.Span) error {
	switch {
	case sp.TraceID().IsEmpty():
		return errors.New("the span has no traceId (32 hex digits)")
	case sp.SpanID().IsEmpty():
		return errors.New("the span has no spanId (16 hex digits)")
	case sp.Name() == "":
		return fmt.Errorf("span %s has no name", sp.SpanID())
	case sp.StartTimestamp() == 0:
		return fmt.Errorf("span %s (%q) has no startTimeUnixNano", sp.SpanID(), sp.Name())
	case sp.EndTimestamp() == 0:
		return fmt.Errorf("span %s (%q) has no endTimeUnixNano", sp.SpanID(), sp.Name())
	case sp.EndTimestamp() < sp.StartTimestamp():
		return fmt.Errorf("span %s (%q) ends before it starts", sp.SpanID(), sp.Name())
	}
	return nil
}

// callOf fills c from sp when sp is a tool-call span of a convention
// replaylab reads, and says whether it was.
func callOf(sp ptrace.Span, c *Call) bool {
	attrs := sp.Attributes()
	str := func(k string) string {
		if v, ok := attrs.Get(k); ok {
			return v.AsString()
		}
		return ""
	}
	name := sp.Name()
	if sp.Kind() == ptrace.SpanKindServer {
		return false // the provider's side of a call, not the caller's
	}
	switch {
	case str("gen_ai.operation.name") == "execute_tool" || strings.HasPrefix(name, "execute_tool "):
		c.Convention = GenAI
		c.Tool = cmp.Or(str("gen_ai.tool.name"), strings.TrimPrefix(name, "execute_tool "))
	case (str("mcp.method.name") == "tools/call" || strings.HasPrefix(name, "tools/call ")) && sp.Kind() == ptrace.SpanKindClient:
		c.Convention = MCP
		c.Tool = cmp.Or(str("gen_ai.tool.name"), strings.TrimPrefix(name, "tools/call "))
	case str("traceloop.span.kind") == "tool":
		c.Convention = Traceloop
		c.Tool = cmp.Or(str("traceloop.entity.name"), strings.TrimSuffix(name, ".tool"))
		c.Args, c.Result = str("traceloop.entity.input"), str("traceloop.entity.output")
	case name == "ai.toolCall" || str("ai.operationId") == "ai.toolCall":
		c.Convention = AISDK
		c.Tool = str("ai.toolCall.name")
		c.CallID = str("ai.toolCall.id")
		c.Args, c.Result = str("ai.toolCall.args"), str("ai.toolCall.result")
	default:
		return false
	}
	if c.Convention == GenAI || c.Convention == MCP {
		c.CallID = str("gen_ai.tool.call.id")
		c.Args, c.Result = str("gen_ai.tool.call.arguments"), str("gen_ai.tool.call.result")
	}
	c.RequestID = str("jsonrpc.request.id")
	c.Trace, c.Span, c.Parent = sp.TraceID(), sp.SpanID(), sp.ParentSpanID()
	c.Name = name
	c.Start, c.End = int64(sp.StartTimestamp()), int64(sp.EndTimestamp())
	c.Failed = sp.Status().Code() == ptrace.StatusCodeError
	if e := str("error.type"); e != "" {
		c.Failed, c.Error = true, e
	} else if e := exception(sp); e != "" {
		c.Error = e
	} else if c.Failed {
		c.Error = sp.Status().Message()
	}
	return true
}

// exception is the type and message of sp's first exception event.
func exception(sp ptrace.Span) string {
	evs := sp.Events()
	for i := range evs.Len() {
		ev := evs.At(i)
		if ev.Name() != "exception" {
			continue
		}
		var typ, msg string
		if v, ok := ev.Attributes().Get("exception.type"); ok {
			typ = v.AsString()
		}
		if v, ok := ev.Attributes().Get("exception.message"); ok {
			msg = v.AsString()
		}
		switch {
		case typ == "" || strings.Contains(msg, typ):
			return msg
		case msg == "":
			return typ
		}
		return typ + ": " + msg
	}
	return ""
}

// readLine reads one line, at most MaxLine bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > MaxLine {
			return nil, fmt.Errorf("the line is longer than %d bytes, the most one TracesData may take here", MaxLine)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			line = append(line, frag...)
			continue
		}
		if line != nil {
			line = append(line, frag...)
		} else {
			line = frag
		}
		return line, err
	}
}
