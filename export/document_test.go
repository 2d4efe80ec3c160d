package export_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
)

// TestSniffTellsDocumentsByContent: every kind of file the commands read
// is told by what it holds, on one line or many, behind a byte-order mark,
// and from a head cut short of the whole file.
func TestSniffTellsDocumentsByContent(t *testing.T) {
	c := catalogRun(t, "timeout-then-success")
	pretty, err := export.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	session := []byte(`{"schema":"replaylab.session/v1","requests":[]}`)
	for _, tt := range []struct {
		name   string
		data   []byte
		kind   export.Kind
		schema string
	}{
		{"nothing", []byte(" \n"), export.KindEmpty, ""},
		{"a mission", []byte("id: mine\ntitle: Mine\n"), export.KindMission, ""},
		{"a case", pretty, export.KindCase, export.SchemaID},
		{"a case, its head only", pretty[:200], export.KindCase, export.SchemaID},
		{"a case behind a BOM", append([]byte("\xef\xbb\xbf"), pretty...), export.KindCase, export.SchemaID},
		{"a session on one line", session, export.KindSession, export.SessionSchemaID},
		{"a session on one line, cut short", session[:40], export.KindSession, export.SessionSchemaID},
		{"a session, schema not first", []byte("{\n  \"requests\": [],\n  \"schema\": \"replaylab.session/v1\"\n}\n"), export.KindSession, export.SessionSchemaID},
		{"a history with its header", []byte(`{"schema":"` + export.HistorySchemaID + `"}` + "\n" + `{"kind":"attempt"}` + "\n"), export.KindHistory, export.HistorySchemaID},
		{"a history without one", []byte(`{"kind":"attempt","intent":"a"}` + "\n" + `{"kind":"attempt","intent":"b"}` + "\n"), export.KindHistory, ""},
		{"another document", []byte("{\n  \"schema\": \"replaylab.conform/v1\"\n}\n"), export.KindOther, "replaylab.conform/v1"},
		{"OpenTelemetry traces", []byte(`{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[]}]}` + "\n"), export.KindTraces, ""},
		{"JSON with no schema", []byte("{\n  \"a\": 1\n}\n"), export.KindJSON, ""},
		{"a session, keys sorted, on lines", []byte("{\"requests\": [],\n\"schema\": \"replaylab.session/v1\"}\n"), export.KindSession, export.SessionSchemaID},
		{"a history of a later version", []byte(`{"schema":"replaylab.history/v2"}` + "\n"), export.KindHistory, "replaylab.history/v2"},
	} {
		kind, schema := export.Sniff(tt.data)
		if kind != tt.kind || schema != tt.schema {
			t.Errorf("%s: %s %q, want %s %q", tt.name, kind, schema, tt.kind, tt.schema)
		}
	}
}

// TestReadDocumentReadsWhatItSniffs: a session is read as a session and a
// case as a case, whatever the file is called.
func TestReadDocumentReadsWhatItSniffs(t *testing.T) {
	c := catalogRun(t, "timeout-then-success")
	data, err := export.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	d, err := export.ReadDocument("x", data)
	if err != nil || d.Case == nil || d.Session != nil || d.Mission().ID != c.Mission.ID {
		t.Fatalf("a case: %+v %v", d, err)
	}
	s := &export.Session{Started: "2026-12-01T00:00:00Z",
		Settings: export.SessionSettings{Contract: ledger.V1, Retention: 5, TickMillis: 1000, IntentField: "metadata[intent]"}}
	var b bytes.Buffer
	if err := export.WriteSession(&b, s); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"on many lines": b.Bytes(), "on one line": bytes.ReplaceAll(b.Bytes(), []byte("\n"), nil)} {
		d, err := export.ReadDocument("y", data)
		if err != nil || d.Session == nil || d.Case != nil {
			t.Errorf("a session %s was read as %+v, %v", name, d, err)
		}
	}
}

// A session file broken by a typo is named by where the syntax breaks,
// not as a file of no schema.
func TestABrokenSessionSaysWhere(t *testing.T) {
	_, err := export.ReadDocument("s.json", []byte("{\n  \"schema\": \"replaylab.session/v1\",\n  \"started\": \"x\",,\n}\n"))
	if err == nil || !strings.Contains(err.Error(), "s.json:3:") || strings.Contains(err.Error(), `schema is ""`) {
		t.Errorf("got %v", err)
	}
}

// Traces given where a case or a session is read are named as traces,
// and check is pointed at.
func TestReadDocumentNamesTraces(t *testing.T) {
	_, err := export.ReadDocument("t.otlp.jsonl", []byte(`{"resourceSpans":[]}`+"\n"+`{"resourceSpans":[]}`+"\n"))
	if err == nil || !strings.Contains(err.Error(), "t.otlp.jsonl holds OpenTelemetry traces") || !strings.Contains(err.Error(), "replaylab check t.otlp.jsonl") {
		t.Fatalf("err = %v", err)
	}
}
