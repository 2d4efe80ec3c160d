package traces_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/traces"
)

func session() *export.Session {
	committed := &ledger.Response{Code: 200, Object: 1}
	return &export.Session{
		Started:  "2026-12-01T10:00:00Z",
		Settings: export.SessionSettings{Contract: ledger.V1, Retention: 10, TickMillis: 1000},
		Requests: []export.SessionRequest{
			{Seq: 1, Tick: 0, Kind: export.RequestCreate, Intent: "refund-1042", Key: "k1", Fixture: missions.TimeoutAfterCommit, Provider: "committed", Response: committed, Wire: export.WireHeld,
				Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
			{Seq: 2, Tick: 3, Kind: export.RequestCreate, Intent: "refund-1042", Key: "k1", Fixture: missions.Success, Provider: "replayed", Response: committed, Wire: export.WireDelivered, Status: 200,
				Shown: []missions.EvidenceObject{{Object: 1, Status: ledger.Succeeded}}},
			{Seq: 3, Tick: 4, Kind: export.RequestCreate, Intent: "refund-2001", Fixture: missions.TimeoutAfterCommit, Provider: "committed", Response: &ledger.Response{Code: 200, Object: 2}, Wire: export.WireHeld,
				Call: &export.ToolCall{Tool: "create_refund", Transport: export.TransportHTTP, Session: "S1", ID: "7", Cancelled: &export.Cancellation{Tick: 6, Reason: "timed out"}}},
			{Seq: 4, Tick: 7, Kind: export.RequestList, Intent: "refund-2001", ReadFault: missions.ReadServerError, Wire: export.WireDelivered, Status: 500, Error: "api_error"},
		},
		Tick: 8,
	}
}

// ns is the time d nanoseconds after the session's start, as OTLP/JSON
// writes it.
func ns(d int64) string {
	return strconv.FormatInt(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixNano()+d, 10)
}

type span struct {
	TraceID      string `json:"traceId"`
	SpanID       string `json:"spanId"`
	ParentSpanID string `json:"parentSpanId"`
	Name         string `json:"name"`
	Kind         int    `json:"kind"`
	Start        string `json:"startTimeUnixNano"`
	End          string `json:"endTimeUnixNano"`
	Attributes   []struct {
		Key   string         `json:"key"`
		Value map[string]any `json:"value"`
	} `json:"attributes"`
	Events []struct {
		Name string `json:"name"`
	} `json:"events"`
	Links  []json.RawMessage `json:"links"`
	Status struct {
		Code int `json:"code"`
	} `json:"status"`
}

func (s span) attr(k string) any {
	for _, a := range s.Attributes {
		if a.Key == k {
			for _, v := range a.Value {
				return v
			}
		}
	}
	return nil
}

func TestASessionAsSpans(t *testing.T) {
	var b bytes.Buffer
	if err := traces.WriteSession(&b, session()); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	traces.WriteSession(&again, session())
	if !bytes.Equal(b.Bytes(), again.Bytes()) {
		t.Fatal("the same session wrote different spans")
	}
	var spans []span
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var td struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans []span `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
		}
		if err := json.Unmarshal([]byte(line), &td); err != nil {
			t.Fatal(err)
		}
		spans = append(spans, td.ResourceSpans[0].ScopeSpans[0].Spans...)
	}
	if len(spans) != 5 {
		t.Fatalf("%d spans, want the session's and 4 requests'", len(spans))
	}
	root, rest, replay, mcp, list := spans[0], spans[1], spans[2], spans[3], spans[4]
	if root.Name != "replaylab serve session" || root.ParentSpanID != "" {
		t.Errorf("root span %+v", root)
	}
	// The client's trace context: its trace, its span as the parent, and
	// a link to the session.
	if rest.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || rest.ParentSpanID != "00f067aa0ba902b7" || len(rest.Links) != 1 {
		t.Errorf("a request sent with a traceparent: %+v", rest)
	}
	if rest.Name != "POST /v1/refunds" || rest.Kind != 2 || rest.attr("http.route") != "/v1/refunds" || rest.attr("replaylab.fixture") != "timeout_after_commit" ||
		rest.attr("replaylab.wire") != "held" || rest.attr("replaylab.refund") != "re_0001" || rest.attr("http.response.status_code") != nil {
		t.Errorf("the held create: %+v", rest)
	}
	// Held until the session ended: tick 8 of a 1 s clock.
	if rest.End != ns(8e9+1) {
		t.Errorf("the held create ends at %s", rest.End)
	}
	if replay.TraceID != root.TraceID || replay.ParentSpanID != root.SpanID || replay.attr("http.response.status_code") != "200" {
		t.Errorf("a request without a trace context is the session's child: %+v", replay)
	}
	names := func(s span) string {
		var out []string
		for _, e := range s.Events {
			out = append(out, e.Name)
		}
		return strings.Join(out, ",")
	}
	if names(rest) != "replaylab.fault,replaylab.effect,replaylab.reply" || names(replay) != "replaylab.fault,replaylab.replayed,replaylab.reply" {
		t.Errorf("events: %s / %s", names(rest), names(replay))
	}
	if mcp.Name != "tools/call create_refund" || mcp.attr("mcp.method.name") != "tools/call" || mcp.attr("jsonrpc.request.id") != "7" || mcp.attr("mcp.session.id") != "S1" ||
		!strings.Contains(names(mcp), "mcp.cancelled") || mcp.End != ns(6e9) {
		t.Errorf("the MCP call: %+v (%s)", mcp, names(mcp))
	}
	if list.Status.Code != 2 || list.attr("error.type") != "500" || list.attr("replaylab.read_fault") != "read_server_error" {
		t.Errorf("the failed read: %+v", list)
	}
	// The file reads back as traces: server spans, none a client's call.
	st, err := traces.Read("s.otlp.jsonl", &b, func(*traces.Call) error { return nil })
	if err != nil || st.Spans != 5 || st.Calls != 0 || st.Server != 4 {
		t.Errorf("read back: %+v, %v", st, err)
	}
}
