package check_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/replaylab/replaylab/check"
)

func traceCheck(t *testing.T, tracesPath, records string) *check.TraceResult {
	t.Helper()
	in, err := check.Open(tracesPath, records, check.DefaultTraceOptions(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if in.Traces == nil {
		t.Fatalf("%s was not read as traces", tracesPath)
	}
	return in.Traces
}

func anomaliesOf(tr *check.TraceResult) []check.TraceAnomaly {
	var out []check.TraceAnomaly
	tr.Each(func(a check.TraceAnomaly) bool {
		out = append(out, a)
		return true
	})
	return out
}

// The docs' example: five intents an agent framework traced with GenAI
// execute_tool spans, joined with a saved GET /v1/refunds page.
func TestTracesJoinedWithRefunds(t *testing.T) {
	tr := traceCheck(t, "../testdata/traces.otlp.jsonl", "../testdata/refunds.json")
	type got struct{ kind, intent, hop string }
	var all []got
	for _, a := range anomaliesOf(tr) {
		all = append(all, got{a.Kind, a.Intent, a.Hop})
		if len(a.Evidence) == 0 {
			t.Errorf("%s %s has no evidence", a.Kind, a.Intent)
		}
	}
	want := []got{
		{check.Duplicate, "refund-1042", ""},
		{check.Resent, "refund-1042", check.HopModel},
		{check.Duplicate, "refund-2001", ""},
		{check.Resent, "refund-2001", check.HopSameCall},
		{check.Duplicate, "refund-4004", ""},
		{check.Resent, "refund-4004", check.HopOtherArguments},
		{check.Unlearned, "refund-5005", ""},
	}
	if !slices.Equal(all, want) {
		t.Fatalf("anomalies\n got %v\nwant %v", all, want)
	}
	if tr.Writes != 8 || tr.Reads != 1 || tr.Records != 8 || tr.Intents != 5 {
		t.Errorf("counts: %d writes, %d reads, %d records, %d intents", tr.Writes, tr.Reads, tr.Records, tr.Intents)
	}
	// refund-3003 timed out, then a list by intent showed its refund:
	// settled by a read, no anomaly.
	for _, a := range anomaliesOf(tr) {
		if a.Intent == "refund-3003" {
			t.Errorf("refund-3003, settled by its list, reported %s", a.Kind)
		}
	}
	// A duplicate's evidence: the spans that sent it, then the refunds
	// with their lines in the records file.
	dup := anomaliesOf(tr)[0]
	ev := dup.Evidence
	if len(ev) != 4 || ev[0].SpanID != "a000000000000003" || ev[0].Outcome != "info" || ev[1].Object != "re_0002" ||
		ev[2].File != "../testdata/refunds.json" || ev[2].Line != 76 || ev[3].Object != "re_0001" {
		t.Errorf("duplicate evidence = %+v", ev)
	}
}

func TestTracesAloneSayOnlyWhatSpansShow(t *testing.T) {
	tr := traceCheck(t, "../testdata/traces.otlp.jsonl", "")
	for _, a := range anomaliesOf(tr) {
		if a.Kind != check.Resent {
			t.Errorf("without records, %s was reported for %s", a.Kind, a.Intent)
		}
	}
	if tr.Len() != 3 {
		t.Errorf("%d anomalies, want the 3 resends", tr.Len())
	}
	var text bytes.Buffer
	if err := tr.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "no provider records given, so only what the spans show: 3 anomalies") {
		t.Errorf("summary:\n%s", text.String())
	}
	var js bytes.Buffer
	if err := tr.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Writes    int `json:"write_calls"`
		Anomalies []struct {
			Kind, Hop string
			Evidence  []struct {
				Line   int    `json:"line"`
				SpanID string `json:"span_id"`
				CallID string `json:"call_id"`
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Writes != 8 || len(rep.Anomalies) != 3 || rep.Anomalies[1].Hop != check.HopSameCall || rep.Anomalies[1].Evidence[1].CallID != "call_7" {
		t.Errorf("JSON report: %s", js.String())
	}
}

// file writes TracesData lines, each holding the spans fills make.
func spansFile(t *testing.T, fills ...func(ptrace.SpanSlice)) string {
	t.Helper()
	var b strings.Builder
	for _, fill := range fills {
		td := ptrace.NewTraces()
		fill(td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans())
		raw, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "t.otlp.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type toolSpan struct {
	span, parent byte
	name, kind   string
	at           int64
	attrs        map[string]string
	clientKind   bool
}

func addSpan(ss ptrace.SpanSlice, s toolSpan) {
	sp := ss.AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{9})
	sp.SetSpanID(pcommon.SpanID{s.span})
	if s.parent != 0 {
		sp.SetParentSpanID(pcommon.SpanID{s.parent})
	}
	sp.SetName(s.name)
	if s.clientKind {
		sp.SetKind(ptrace.SpanKindClient)
	}
	sp.SetStartTimestamp(pcommon.Timestamp(1_796_205_600_000_000_000 + s.at*1e9))
	sp.SetEndTimestamp(pcommon.Timestamp(1_796_205_600_000_000_000 + (s.at+1)*1e9))
	for k, v := range s.attrs {
		sp.Attributes().PutStr(k, v)
	}
}

// A framework's execute_tool span above its MCP client's tools/call
// spans: the client spans are what went on the wire, one attempt each,
// and take the framework's call id and arguments.
func TestLayersCountTheWireOnce(t *testing.T) {
	args := `{"intent":"refund-1042","amount":4500,"idempotency_key":"k-1"}`
	path := spansFile(t, func(ss ptrace.SpanSlice) {
		addSpan(ss, toolSpan{span: 1, name: "execute_tool create_refund", at: 0, attrs: map[string]string{"gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": args}})
		addSpan(ss, toolSpan{span: 2, parent: 1, name: "tools/call create_refund", clientKind: true, at: 0, attrs: map[string]string{"mcp.method.name": "tools/call", "error.type": "-32001"}})
		addSpan(ss, toolSpan{span: 3, parent: 1, name: "tools/call create_refund", clientKind: true, at: 2, attrs: map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.call.result": `{"id":"re_0001","status":"succeeded"}`}})
	})
	tr := traceCheck(t, path, "")
	if tr.Writes != 2 {
		t.Fatalf("%d write calls, want the 2 on the wire (the framework's span is above them)", tr.Writes)
	}
	// The SDK re-sent the same call with the same key: no resend anomaly.
	if tr.Len() != 0 {
		t.Errorf("a re-send under the same key was reported: %v", anomaliesOf(tr))
	}
}

// The same call id re-sent without the key: the hop is the layer below
// the model, and the call id comes down from the framework's span.
func TestTheHopOfAResend(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, then map[string]string
		hop         string
	}{
		{"same call id", map[string]string{"gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": `{"intent":"i","amount":1}`},
			map[string]string{"gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": `{"intent":"i","amount":1,"idempotency_key":"k2"}`}, check.HopSameCall},
		{"new call id, same arguments", map[string]string{"gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": `{"intent":"i","amount":1,"idempotency_key":"k1"}`},
			map[string]string{"gen_ai.tool.call.id": "c2", "gen_ai.tool.call.arguments": `{ "amount": 1, "intent": "i", "idempotency_key": "k2" }`}, check.HopModel},
		{"other arguments", map[string]string{"gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": `{"intent":"i","amount":1,"idempotency_key":"k1"}`},
			map[string]string{"gen_ai.tool.call.id": "c2", "gen_ai.tool.call.arguments": `{"intent":"i","amount":2}`}, check.HopOtherArguments},
		{"no call ids", map[string]string{"gen_ai.tool.call.arguments": `{"intent":"i","amount":1,"idempotency_key":"k1"}`},
			map[string]string{"gen_ai.tool.call.arguments": `{"intent":"i","amount":1,"idempotency_key":"k2"}`}, check.HopSameArguments},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.first["error.type"] = "timeout"
			path := spansFile(t, func(ss ptrace.SpanSlice) {
				addSpan(ss, toolSpan{span: 1, name: "execute_tool create_refund", at: 0, attrs: tc.first})
			}, func(ss ptrace.SpanSlice) {
				addSpan(ss, toolSpan{span: 2, name: "execute_tool create_refund", at: 5, attrs: tc.then})
			})
			as := anomaliesOf(traceCheck(t, path, ""))
			if len(as) != 1 || as[0].Kind != check.Resent || as[0].Hop != tc.hop || as[0].Intent != "i" {
				t.Fatalf("anomalies = %+v; want one %s, hop %s", as, check.Resent, tc.hop)
			}
		})
	}
}

func TestSpanOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		attrs   map[string]string
		failed  bool
		outcome string
	}{
		{"a refund named", map[string]string{"gen_ai.tool.call.result": `{"id":"re_1","status":"succeeded"}`}, false, "ok"},
		{"no result captured", map[string]string{}, false, "ok"},
		{"a pending refund", map[string]string{"gen_ai.tool.call.result": `{"id":"re_1","status":"pending"}`}, false, "info"},
		{"an MCP isError result with a refusal", map[string]string{"gen_ai.tool.call.result": `{"isError":true,"content":[{"type":"text","text":"invalid_request_error (parameter_missing): give amount"}]}`}, false, "fail"},
		{"an MCP isError result of a 500", map[string]string{"gen_ai.tool.call.result": `{"isError":true,"content":[{"type":"text","text":"api_error: the provider failed (500)"}]}`}, false, "info"},
		{"a timeout", map[string]string{"error.type": "timeout"}, true, "info"},
		{"JSON-RPC -32001", map[string]string{"error.type": "-32001"}, true, "info"},
		{"a 503", map[string]string{"error.type": "503"}, true, "info"},
		{"a 400", map[string]string{"error.type": "400"}, true, "fail"},
		{"an unknown error", map[string]string{"error.type": "java.lang.Oops"}, true, "info"},
		{"a result naming no refund", map[string]string{"gen_ai.tool.call.result": `{"ok":true}`}, false, "info"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.attrs["gen_ai.tool.call.arguments"] = `{"intent":"i"}`
			path := spansFile(t, func(ss ptrace.SpanSlice) {
				addSpan(ss, toolSpan{span: 1, name: "execute_tool create_refund", attrs: tc.attrs})
			})
			if got := outcomeIn(t, path); got != tc.outcome {
				t.Errorf("outcome %q, want %q", got, tc.outcome)
			}
		})
	}
}

// outcomeIn is the outcome check gave the one write span in path, read
// from a duplicate's evidence (two records for its intent).
func outcomeIn(t *testing.T, path string) string {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "refunds.json")
	os.WriteFile(rec, []byte(`{"object":"list","data":[{"id":"re_8","object":"refund","status":"succeeded","metadata":{"intent":"i"}},{"id":"re_9","object":"refund","status":"succeeded","metadata":{"intent":"i"}}],"has_more":false}`), 0o644)
	for _, a := range anomaliesOf(traceCheck(t, path, rec)) {
		if a.Kind == check.Duplicate {
			return a.Evidence[0].Outcome
		}
	}
	t.Fatal("no duplicate reported")
	return ""
}

func TestTraceInputRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	chat := spansFile(t, func(ss ptrace.SpanSlice) { addSpan(ss, toolSpan{span: 1, name: "chat model"}) })
	other := spansFile(t, func(ss ptrace.SpanSlice) {
		addSpan(ss, toolSpan{span: 1, name: "execute_tool search", attrs: map[string]string{"gen_ai.tool.name": "search"}})
	})
	badArgs := spansFile(t, func(ss ptrace.SpanSlice) {
		addSpan(ss, toolSpan{span: 1, name: "execute_tool create_refund", attrs: map[string]string{"gen_ai.tool.call.arguments": "intent=refund-1042"}})
	})
	good := "../testdata/traces.otlp.jsonl"
	for _, tc := range []struct {
		name, traces, records, says string
	}{
		{"no tool span", chat, "", "no span of a write tool: 1 span, none a tool call"},
		{"no write-tool span", other, "", `the tool calls are of "search"; name the write tools with --write-tools`},
		{"arguments not JSON", badArgs, "", "t.otlp.jsonl:1: resourceSpans[0].scopeSpans[0].spans[0]: span 0100000000000000 (\"execute_tool create_refund\"): the captured arguments do not read as a JSON object: intent=refund-1042"},
		{"records not a list", good, write("r1.json", `{"object":"refund","id":"re_1"}`), `r1.json:1: not a list of refunds`},
		{"a list of something else", good, write("r2.json", "{\"object\":\"list\",\n\"data\":[\n{\"object\":\"charge\",\"id\":\"ch_1\"}],\"has_more\":false}"), `r2.json:3: data[0] is not a refund`},
		{"a refund of no status", good, write("r3.json", `{"object":"list","data":[{"object":"refund","id":"re_1","status":"done"}]}`), `refund re_1 has status "done"`},
		{"records not JSON", good, write("r4.json", `{"object":"list",`), `r4.json:1: not a list of refunds`},
		{"an empty records file", good, write("r5.json", ``), `holds no list of refunds`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := check.Open(tc.traces, tc.records, check.DefaultTraceOptions(), 0)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v; want it to say %q", err, tc.says)
			}
		})
	}
	if _, err := check.Open("../testdata/history.jsonl", "../testdata/refunds.json", check.DefaultTraceOptions(), 0); err == nil || !strings.Contains(err.Error(), "a records file goes with traces only") {
		t.Errorf("a history with a records file: %v", err)
	}
}

// Records from a Stripe list: requires_action is pending, a refund naming
// no intent is left out and counted, and has_more on the last page is
// said.
func TestStripeRecords(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "refunds.json")
	os.WriteFile(rec, []byte(`{"object":"list","data":[{"id":"re_2","object":"refund","status":"requires_action","metadata":{"intent":"refund-1042"}},{"id":"re_3","object":"refund","status":"succeeded","metadata":{}}],"has_more":true}`), 0o644)
	tr := traceCheck(t, "../testdata/traces.otlp.jsonl", rec)
	if tr.Records != 1 || tr.Unlinked != 1 || !tr.HasMore {
		t.Errorf("records %d, unlinked %d, has_more %v", tr.Records, tr.Unlinked, tr.HasMore)
	}
	var text bytes.Buffer
	tr.WriteText(&text)
	for _, want := range []string{"(and 1 naming no intent in metadata[intent], left out)", "its last page says has_more: true"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the report does not say %q:\n%s", want, text.String())
		}
	}
}

// A span whose arguments were not captured is an attempt of unknown key,
// its trace standing for its intent.
func TestSpanWithoutArguments(t *testing.T) {
	path := spansFile(t, func(ss ptrace.SpanSlice) {
		addSpan(ss, toolSpan{span: 1, name: "execute_tool create_refund", attrs: map[string]string{"error.type": "timeout"}})
		addSpan(ss, toolSpan{span: 2, name: "execute_tool create_refund", at: 3})
	})
	as := anomaliesOf(traceCheck(t, path, ""))
	if len(as) != 1 || as[0].Kind != check.Resent || as[0].Hop != check.HopUnknown || !strings.HasPrefix(as[0].Intent, "(trace 09000000") {
		t.Fatalf("anomalies = %+v", as)
	}
	if !strings.Contains(as[0].Message, "sent again with no key") {
		t.Errorf("message: %s", as[0].Message)
	}
}

// What an adversarial pass found, each held: a span written twice, an
// intent argument that names nothing, arguments twice, a field nothing
// carries, a send while the first was still out, numbers spelled two
// ways.
func TestTraceEdges(t *testing.T) {
	timeout := map[string]string{"gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": `{"intent":"i","amount":4500,"idempotency_key":"k1"}`, "error.type": "timeout"}
	t.Run("a span written twice is one", func(t *testing.T) {
		one := func(ss ptrace.SpanSlice) {
			addSpan(ss, toolSpan{span: 1, name: "execute_tool create_refund", attrs: timeout})
		}
		tr := traceCheck(t, spansFile(t, one, one), "")
		if tr.Writes != 1 || tr.Len() != 0 {
			t.Fatalf("%d writes, %v", tr.Writes, anomaliesOf(tr))
		}
	})
	t.Run("one span id saying two things is refused", func(t *testing.T) {
		path := spansFile(t, func(ss ptrace.SpanSlice) {
			addSpan(ss, toolSpan{span: 1, name: "execute_tool create_refund", attrs: timeout})
		}, func(ss ptrace.SpanSlice) {
			addSpan(ss, toolSpan{span: 1, name: "execute_tool create_refund", at: 5, attrs: map[string]string{"gen_ai.tool.call.arguments": `{"intent":"i"}`}})
		})
		if _, err := check.Open(path, "", check.DefaultTraceOptions(), 0); err == nil || !strings.Contains(err.Error(), ":2: span 0100000000000000 of trace 09000000000000000000000000000000 is on line 1 too, saying other things") {
			t.Fatalf("err = %v", err)
		}
	})
	for _, tc := range []struct{ name, args, says string }{
		{"a null intent", `{"intent":null}`, `the argument "intent" is null`},
		{"an empty intent", `{"intent":""}`, `the argument "intent" is empty`},
		{"an argument twice", `{"intent":"a","intent":"b"}`, `the argument "intent" appears twice`},
		{"an intent not a string", `{"intent":7}`, `the argument "intent" is 7, not a string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := spansFile(t, func(ss ptrace.SpanSlice) {
				addSpan(ss, toolSpan{span: 1, name: "execute_tool create_refund", attrs: map[string]string{"gen_ai.tool.call.arguments": tc.args}})
			})
			if _, err := check.Open(path, "", check.DefaultTraceOptions(), 0); err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v; want %q", err, tc.says)
			}
		})
	}
	t.Run("an intent field no call carries", func(t *testing.T) {
		o := check.DefaultTraceOptions()
		o.IntentField = "order"
		_, err := check.Open("../testdata/traces.otlp.jsonl", "", o, 0)
		if err == nil || !strings.Contains(err.Error(), `no call of create_refund names its intent in an argument "order" (--intent-field)`) {
			t.Fatalf("err = %v", err)
		}
		o = check.DefaultTraceOptions()
		o.KeyField = "nokey"
		tr := traceCheck2(t, "../testdata/traces.otlp.jsonl", o)
		var text bytes.Buffer
		tr.WriteText(&text)
		if !tr.Unkeyed || !strings.Contains(text.String(), `no call's arguments carry "nokey" (--key-field)`) {
			t.Errorf("a key field no call carries is not said:\n%s", text.String())
		}
	})
	t.Run("a send while the first was still out is no resend after unknown", func(t *testing.T) {
		path := spansFile(t, func(ss ptrace.SpanSlice) {
			long := toolSpan{span: 1, name: "execute_tool create_refund", at: 0, attrs: timeout}
			addSpan(ss, long)
			ss.At(0).SetEndTimestamp(ss.At(0).StartTimestamp() + 30e9)
			addSpan(ss, toolSpan{span: 2, name: "execute_tool create_refund", at: 10, attrs: map[string]string{"gen_ai.tool.call.id": "c2", "gen_ai.tool.call.arguments": `{"intent":"i","amount":4500,"idempotency_key":"k2"}`}})
		})
		for _, a := range anomaliesOf(traceCheck(t, path, "")) {
			if a.Kind == check.Resent {
				t.Fatalf("a concurrent send was called a resend: %s", a.Message)
			}
		}
	})
	t.Run("a resend stamped to the millisecond its first call ended in is a resend", func(t *testing.T) {
		path := spansFile(t, func(ss ptrace.SpanSlice) {
			addSpan(ss, toolSpan{span: 1, name: "execute_tool create_refund", attrs: timeout})
			addSpan(ss, toolSpan{span: 2, name: "execute_tool create_refund", attrs: map[string]string{"gen_ai.tool.call.id": "c2", "gen_ai.tool.call.arguments": `{"intent":"i","amount":4500,"idempotency_key":"k2"}`}})
			first, again := ss.At(0), ss.At(1)
			first.SetEndTimestamp(first.StartTimestamp() + 400_700_000) // 400.7 ms
			again.SetStartTimestamp(first.StartTimestamp() + 400_000_000)
			again.SetEndTimestamp(again.StartTimestamp() + 10_000_000)
		})
		as := anomaliesOf(traceCheck(t, path, ""))
		if len(as) != 1 || as[0].Kind != check.Resent {
			t.Fatalf("anomalies = %+v", as)
		}
	})
	t.Run("4500 and 4500.0 are the same arguments", func(t *testing.T) {
		path := spansFile(t, func(ss ptrace.SpanSlice) {
			addSpan(ss, toolSpan{span: 1, name: "execute_tool create_refund", attrs: timeout})
			addSpan(ss, toolSpan{span: 2, name: "execute_tool create_refund", at: 5, attrs: map[string]string{"gen_ai.tool.call.id": "c2", "gen_ai.tool.call.arguments": `{"intent":"i","amount":4500.0,"idempotency_key":"k2"}`}})
		})
		as := anomaliesOf(traceCheck(t, path, ""))
		if len(as) != 1 || as[0].Hop != check.HopModel {
			t.Fatalf("anomalies = %+v", as)
		}
	})
}

func traceCheck2(t *testing.T, path string, o check.TraceOptions) *check.TraceResult {
	t.Helper()
	in, err := check.Open(path, "", o, 0)
	if err != nil {
		t.Fatal(err)
	}
	return in.Traces
}

// Records given in the wrong place, or a refund the join leaves out, are
// said as such.
func TestRecordsInTheirPlace(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "refunds.json")
	os.WriteFile(list, []byte(`{"object":"list","data":[{"id":"re_0002","object":"refund","status":"succeeded","metadata":{}},{"id":"re_0002","object":"refund","status":"succeeded","metadata":{}}],"has_more":false}`), 0o644)
	if _, err := check.Open(list, "", check.DefaultTraceOptions(), 0); err == nil || !strings.Contains(err.Error(), "holds a list of refunds (the provider's records): give it after the traces it joins") {
		t.Errorf("a refunds list alone: %v", err)
	}
	if _, err := check.Open("../testdata/traces.otlp.jsonl", "../testdata/traces.otlp.jsonl", check.DefaultTraceOptions(), 0); err == nil || !strings.Contains(err.Error(), "holds OpenTelemetry traces; the second file is the provider's records") {
		t.Errorf("traces as records: %v", err)
	}
	empty := filepath.Join(dir, "e.otlp.jsonl")
	os.WriteFile(empty, []byte("\n\n"), 0o644)
	if _, err := check.Open(empty, "", check.DefaultTraceOptions(), 0); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("an empty file: %v", err)
	}
	tr := traceCheck(t, "../testdata/traces.otlp.jsonl", list)
	if tr.Unlinked != 1 {
		t.Errorf("a refund listed twice counted %d times", tr.Unlinked)
	}
	said := false
	for _, a := range anomaliesOf(tr) {
		if a.Kind == check.OKNoEffect && a.Intent == "refund-1042" {
			said = strings.Contains(a.Message, "re_0002 is in "+list+", but names no intent in metadata[intent], so it was left out of the join")
		}
	}
	if !said {
		t.Error("ok_without_effect of refund-1042 does not say its refund was left out of the join")
	}
}

// The file @traceloop/instrumentation-mcp wrote of the naive agent
// (check/testdata/otel-node) shows its resend: the second call starts in
// the millisecond the first one's timeout ended, as OpenTelemetry JS
// stamps a span's start to the millisecond and its end to the
// nanosecond.
func TestTheTraceloopFileShowsTheResend(t *testing.T) {
	as := anomaliesOf(traceCheck(t, "../traces/testdata/traceloop.otlp.jsonl", ""))
	if len(as) != 1 || as[0].Kind != check.Resent || as[0].Hop != check.HopSameArguments || as[0].Intent != "refund-1042" {
		t.Fatalf("anomalies = %+v", as)
	}
}
