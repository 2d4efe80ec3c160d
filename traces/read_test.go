package traces_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/replaylab/replaylab/traces"
)

// line is one TracesData holding spans made by each fill, as JSON.
func line(t *testing.T, fills ...func(ptrace.Span)) string {
	t.Helper()
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i, fill := range fills {
		sp := ss.AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{1, 2, 3})
		sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
		sp.SetStartTimestamp(1_796_205_600_000_000_000)
		sp.SetEndTimestamp(1_796_205_601_000_000_000)
		fill(sp)
	}
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func read(t *testing.T, text string) ([]traces.Call, traces.Stats, error) {
	t.Helper()
	var calls []traces.Call
	st, err := traces.Read("t.otlp.jsonl", strings.NewReader(text), func(c *traces.Call) error {
		calls = append(calls, *c)
		return nil
	})
	return calls, st, err
}

func TestEachConventionIsACall(t *testing.T) {
	text := line(t,
		func(sp ptrace.Span) {
			sp.SetName("execute_tool create_refund")
			sp.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
			sp.Attributes().PutStr("gen_ai.tool.name", "create_refund")
			sp.Attributes().PutStr("gen_ai.tool.call.id", "call_1")
			sp.Attributes().PutStr("gen_ai.tool.call.arguments", `{"intent":"refund-1042"}`)
			sp.Attributes().PutStr("error.type", "timeout")
		},
		func(sp ptrace.Span) {
			sp.SetName("tools/call create_refund")
			sp.SetKind(ptrace.SpanKindClient)
			sp.Attributes().PutStr("mcp.method.name", "tools/call")
			sp.Attributes().PutStr("jsonrpc.request.id", "7")
			// Arguments as a key-value list, not a string.
			sp.Attributes().PutEmptyMap("gen_ai.tool.call.arguments").PutStr("intent", "refund-2001")
		},
		func(sp ptrace.Span) {
			// An MCP server span is the provider's side, not an attempt.
			sp.SetName("tools/call create_refund")
			sp.SetKind(ptrace.SpanKindServer)
			sp.Attributes().PutStr("mcp.method.name", "tools/call")
		},
		func(sp ptrace.Span) {
			sp.SetName("create_refund.tool")
			sp.Attributes().PutStr("traceloop.span.kind", "tool")
			sp.Attributes().PutStr("traceloop.entity.name", "create_refund")
			sp.Attributes().PutStr("traceloop.entity.input", `{"tool_name":"create_refund","arguments":{"intent":"refund-3003"}}`)
			sp.Status().SetCode(ptrace.StatusCodeError)
			ev := sp.Events().AppendEmpty()
			ev.SetName("exception")
			ev.Attributes().PutStr("exception.type", "-32001")
			ev.Attributes().PutStr("exception.message", "MCP error -32001: Request timed out")
		},
		func(sp ptrace.Span) {
			sp.SetName("ai.toolCall")
			sp.Attributes().PutStr("ai.toolCall.name", "create_refund")
			sp.Attributes().PutStr("ai.toolCall.id", "tc_9")
			sp.Attributes().PutStr("ai.toolCall.args", `{"intent":"refund-4004"}`)
			sp.Attributes().PutStr("ai.toolCall.result", `{"id":"re_0001"}`)
		},
		func(sp ptrace.Span) { sp.SetName("chat scripted-model") },
	)
	calls, st, err := read(t, text)
	if err != nil {
		t.Fatal(err)
	}
	if st.Spans != 6 || st.Calls != 4 || len(calls) != 4 {
		t.Fatalf("stats %+v, %d calls; want 6 spans, 4 calls", st, len(calls))
	}
	want := []struct {
		conv                  traces.Convention
		tool, id, req, errTxt string
		args                  string
		failed                bool
	}{
		{traces.GenAI, "create_refund", "call_1", "", "timeout", `{"intent":"refund-1042"}`, true},
		{traces.MCP, "create_refund", "", "7", "", `{"intent":"refund-2001"}`, false},
		{traces.Traceloop, "create_refund", "", "", "MCP error -32001: Request timed out", `{"tool_name":"create_refund","arguments":{"intent":"refund-3003"}}`, true},
		{traces.AISDK, "create_refund", "tc_9", "", "", `{"intent":"refund-4004"}`, false},
	}
	for i, w := range want {
		c := calls[i]
		if c.Convention != w.conv || c.Tool != w.tool || c.CallID != w.id || c.RequestID != w.req || c.Error != w.errTxt || c.Args != w.args || c.Failed != w.failed {
			t.Errorf("call %d = %+v\nwant %+v", i, c, w)
		}
		if c.Line != 1 || c.Start != 1_796_205_600_000_000_000 || c.End != 1_796_205_601_000_000_000 {
			t.Errorf("call %d: line %d, times %d–%d", i, c.Line, c.Start, c.End)
		}
	}
	if calls[3].Result != `{"id":"re_0001"}` {
		t.Errorf("the AI SDK's result is %q", calls[3].Result)
	}
}

// TestTheExportersFileAsWritten reads a file written by
// @traceloop/instrumentation-mcp through @opentelemetry/otlp-transformer's
// JSON serializer (check/testdata/otel-node's agent, against serve): times
// are strings there, small integers numbers.
func TestTheExportersFileAsWritten(t *testing.T) {
	data, err := os.ReadFile("testdata/traceloop.otlp.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	calls, st, err := read(t, string(data))
	if err != nil {
		t.Fatal(err)
	}
	if st.Lines != 5 || st.Spans != 5 {
		t.Errorf("stats %+v", st)
	}
	var creates []traces.Call
	for _, c := range calls {
		if c.Tool == "create_refund" {
			creates = append(creates, c)
		}
	}
	if len(creates) != 2 || !creates[0].Failed || !strings.Contains(creates[0].Error, "timed out") || creates[1].Failed ||
		!strings.Contains(creates[1].Result, "re_0002") || !strings.Contains(creates[0].Args, `"intent":"refund-1042"`) {
		t.Fatalf("creates = %+v", creates)
	}
}

func TestBadLinesAreRefusedWithLineAndField(t *testing.T) {
	good := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba902b7","name":"x","startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}`
	for _, tc := range []struct {
		name, line, field, says string
	}{
		{"bad hex trace id", strings.Replace(good, "4bf92f3577b34da6a3ce929d0e0e4736", "zz", 1), "resourceSpans[0].scopeSpans[0].spans[0].traceId", "32 hex digits"},
		{"short span id", strings.Replace(good, "00f067aa0ba902b7", "00f0", 1), "resourceSpans[0].scopeSpans[0].spans[0].spanId", "16 hex digits"},
		{"a time as a JSON number", strings.Replace(good, `"startTimeUnixNano":"1"`, `"startTimeUnixNano":1796205600000000000`, 1), "resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano", "decimal string"},
		{"a time that is no number", strings.Replace(good, `"endTimeUnixNano":"2"`, `"endTimeUnixNano":"soon"`, 1), "resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano", "not a time"},
		{"no name", strings.Replace(good, `"name":"x",`, "", 1), "resourceSpans[0].scopeSpans[0].spans[0]", "has no name"},
		{"no start", strings.Replace(good, `"startTimeUnixNano":"1",`, "", 1), "resourceSpans[0].scopeSpans[0].spans[0]", "no startTimeUnixNano"},
		{"no end", strings.Replace(good, `,"endTimeUnixNano":"2"`, "", 1), "resourceSpans[0].scopeSpans[0].spans[0]", "no endTimeUnixNano"},
		{"ends before it starts", strings.Replace(good, `"startTimeUnixNano":"1"`, `"startTimeUnixNano":"3"`, 1), "resourceSpans[0].scopeSpans[0].spans[0]", "ends before it starts"},
		{"cut short", good[:60], "", "cut short"},
		{"not JSON inside", strings.Replace(good, `"name":"x"`, `"name":x`, 1), "resourceSpans[0].scopeSpans[0].spans[0].name", "not JSON at byte"},
		{"an array", `[` + good + `]`, "", "expected one TracesData object on each line"},
		{"an empty object", `{}`, "", `no "resourceSpans"`},
		{"another document", `{"type":"attempt","intent":"refund-1042"}`, "", `no "resourceSpans"`},
		{"trailing garbage", good + `}}garbage`, "", "more follows the TracesData object on the line (at byte 181)"},
		{"not UTF-8", strings.Replace(good, `"name":"x"`, "\"name\":\"x\xff\"", 1), "", "not UTF-8 (byte"},
		{"a lone surrogate", strings.Replace(good, `"name":"x"`, `"name":"x\ud800"`, 1), "", `escape that is no character (\ud800 at byte`},
		{"no trace id", strings.Replace(good, `"traceId":"4bf92f3577b34da6a3ce929d0e0e4736",`, "", 1), "resourceSpans[0].scopeSpans[0].spans[0]", "no traceId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := read(t, good+"\n"+tc.line+"\n")
			var te *traces.Error
			if !errors.As(err, &te) {
				t.Fatalf("err = %v, want a *traces.Error", err)
			}
			if te.Line != 2 || te.Field != tc.field || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %q (line %d, field %q); want line 2, field %q, saying %q", err, te.Line, te.Field, tc.field, tc.says)
			}
			if !strings.HasPrefix(err.Error(), "t.otlp.jsonl:2: ") {
				t.Errorf("the message does not start with the file and line: %q", err)
			}
		})
	}
}

// An int64 attribute written as a JSON number, as the JavaScript
// serializer writes small integers, is read: OTLP/JSON receivers accept
// both; only times must be strings.
func TestIntAttributesAsNumbersAreRead(t *testing.T) {
	text := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba902b7","name":"execute_tool create_refund","startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"retry","value":{"intValue":2}}]}]}]}]}`
	calls, _, err := read(t, text)
	if err != nil || len(calls) != 1 {
		t.Fatalf("calls %v, err %v", calls, err)
	}
}
