package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/serve"
)

// check exits 0 on a clean history, 1 on anomalies, 2 on a line that does
// not read, naming the line.
func TestCheckExitCodes(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.jsonl")
	os.WriteFile(clean, []byte(`{"type":"attempt","intent":"i","key":"k","outcome":"info"}`+"\n"+`{"type":"attempt","intent":"i","key":"k","outcome":"ok"}`+"\n"+`{"type":"record","intent":"i","key":"k","object":"re_1","status":"succeeded"}`+"\n"), 0o644)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"type":"attempt","intent":"i","key":"k","outcome":"ok"}`+"\n"+`{"type":"attempt","intent":"i","outcome":"perhaps"}`+"\n"), 0o644)
	caseFile := writeCase(t, dir, "timeout-then-success")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"check", clean}, 0, "no anomaly"},
		{[]string{"check", "testdata/history.jsonl"}, exitVerdict, "9 anomalies"},
		{[]string{"check", bad}, exitBadInput, "bad.jsonl:2: outcome \"perhaps\""},
		{[]string{"check", caseFile}, exitBadInput, "not a history"},
		{[]string{"check", dir}, exitBadInput, "is a directory"},
		{[]string{"check", filepath.Join(dir, "missing.jsonl")}, exitBadInput, "no such file"},
	}
	for _, tc := range cases {
		code, out, errOut := cli(tc.args...)
		if code != tc.code || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("%v: exit %d, %q %q; want %d and %q", tc.args, code, out, errOut, tc.code, tc.want)
		}
	}
}

// serve --record FILE.jsonl writes a history that check reads; check
// reads a session file as its history too, and says so.
func TestCheckServeRecords(t *testing.T) {
	record := filepath.Join(t.TempDir(), "h.jsonl")
	c := startServe(t, "--faults", "timeout_after_commit,success", "--until", "2", "--record", record)
	c.create(t, 200*time.Millisecond, "k1")
	c.create(t, 2*time.Second, "k2")
	if code := c.wait(t); code != 0 {
		t.Fatalf("serve exit %d:\n%s", code, c.stderr)
	}
	code, out, errOut := cli("check", record)
	if code != exitVerdict || !strings.Contains(out, "key_changed") || !strings.Contains(out, "duplicate_effect") {
		t.Fatalf("check of a fresh-key session's history: exit %d\n%s%s", code, out, errOut)
	}
	session := recordSession(t, serve.Options{Faults: []missions.Fixture{missions.TimeoutAfterCommit}, Hold: time.Second}, "k", "k")
	code, out, errOut = cli("check", session)
	if code != 0 || !strings.Contains(out, "is a serve session") || !strings.Contains(out, "no anomaly") {
		t.Fatalf("check of a stable-key session: exit %d\n%s%s", code, out, errOut)
	}
}

// docs/check.md shows the example history and what check says of it: both
// are held to the files and the program.
func TestCheckDocsShowTheExample(t *testing.T) {
	doc, err := os.ReadFile("docs/check.md")
	if err != nil {
		t.Fatal(err)
	}
	history, err := os.ReadFile("testdata/history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```\n"+string(history)+"```") {
		t.Error("docs/check.md does not show testdata/history.jsonl as it is")
	}
	_, out, errOut := cli("check", "testdata/history.jsonl")
	if !strings.Contains(string(doc), "$ replaylab check testdata/history.jsonl\n"+out+errOut+"```") {
		t.Errorf("docs/check.md does not show what check prints now:\n%s%s", out, errOut)
	}
}

// TestCheckReadsASessionOnOneLine: a session written compact, on one
// line, is a session to check, not a history whose first line is wrong.
func TestCheckReadsASessionOnOneLine(t *testing.T) {
	dir := t.TempDir()
	pretty := filepath.Join(dir, "session.json")
	b := emptySession(t)
	oneLine := filepath.Join(dir, "one-line.json")
	if err := os.WriteFile(pretty, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(oneLine, append(bytes.ReplaceAll(b, []byte("\n"), nil), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	// An empty session has nothing to check: the same words for both, as
	// its history, where a history reader would trip on the first line.
	wantCode, wantOut, wantErr := cli("check", pretty)
	code, out, errOut := cli("check", oneLine)
	same := func(s string) string { return strings.ReplaceAll(s, oneLine, pretty) }
	if code != wantCode || same(out) != wantOut || same(errOut) != wantErr || !strings.Contains(wantErr, "nothing to check") {
		t.Errorf("one line: exit %d\n%s%s\nmany lines: exit %d\n%s%s", code, out, errOut, wantCode, wantOut, wantErr)
	}
}

// TestCheckReadsASessionWithItsKeysSorted: a session that another tool
// rewrote with its keys in order (jq -S), the schema no longer first, is
// still a session to check.
func TestCheckReadsASessionWithItsKeysSorted(t *testing.T) {
	dir := t.TempDir()
	b := emptySession(t)
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	sorted, err := json.MarshalIndent(doc, "", " ") // a map's keys come out sorted
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sorted.json")
	if err := os.WriteFile(path, sorted, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := cli("check", path); code != exitBadInput || !strings.Contains(errOut, "nothing to check") {
		t.Errorf("a sorted session: exit %d, %q; want it read as a session with nothing to check", code, errOut)
	}
}

// emptySession is a session with no request, as serve writes it.
func emptySession(t *testing.T) []byte {
	t.Helper()
	s := &export.Session{Started: "2026-12-01T00:00:00Z",
		Settings: export.SessionSettings{Contract: ledger.V1, Retention: 5, TickMillis: 1000, IntentField: "metadata[intent]"}}
	var b bytes.Buffer
	if err := export.WriteSession(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCheckReadsTraces: a file of OpenTelemetry traces is read as
// traces, joined with a refunds list when one is given; a trace with no
// write-tool span is refused, not reported clean.
func TestCheckReadsTraces(t *testing.T) {
	code, out, errOut := cli("check", "testdata/traces.otlp.jsonl", "testdata/refunds.json")
	if code != exitVerdict || !strings.Contains(errOut, "the traces show 7 anomalies") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"resent_after_unknown: refund-1042: create_refund's outcome was unknown (info: timeout), and it was sent again under another key: a new tool call (id \"call_2\", after \"call_1\") with the same arguments: the model called the tool again\n",
		"  testdata/traces.otlp.jsonl:1  span a000000000000003 \"execute_tool create_refund\" call \"call_1\"  info  key \"k-1042-a\"  timeout\n",
		"  testdata/refunds.json:28  refund re_0008 (succeeded) for refund-5005\n",
		"testdata/traces.otlp.jsonl: 5 lines, 11 spans: 8 write-tool calls and 1 read of 5 intents; testdata/refunds.json: 8 refunds: 7 anomalies\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	path := filepath.Join(t.TempDir(), "traces.otlp.jsonl")
	if err := os.WriteFile(path, []byte(`{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[]}]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := cli("check", path); code != exitBadInput || !strings.Contains(errOut, "no span of a write tool") || strings.Contains(out, "no anomaly") {
		t.Errorf("a trace with no write-tool span: exit %d, %q %q", code, out, errOut)
	}
	for _, args := range [][]string{
		{"check", "testdata/history.jsonl", "testdata/refunds.json"},
		{"check", "testdata/history.jsonl", "--write-tools", "x"},
		{"check", "testdata/traces.otlp.jsonl", "--write-tools", ""},
		{"check", "testdata/traces.otlp.jsonl", "--write-tools", "get_refund"},
		{"check", "testdata/traces.otlp.jsonl", "--key-field", "intent"},
	} {
		if code, _, errOut := cli(args...); code != exitBadInput || errOut == "" {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
}

// docs/check.md shows what check says of the example traces, as it says
// it now.
func TestCheckDocsShowTheTraceExample(t *testing.T) {
	doc, err := os.ReadFile("docs/check.md")
	if err != nil {
		t.Fatal(err)
	}
	_, out, errOut := cli("check", "testdata/traces.otlp.jsonl", "testdata/refunds.json")
	if !strings.Contains(string(doc), "$ replaylab check testdata/traces.otlp.jsonl testdata/refunds.json\n"+out+errOut+"```") {
		t.Errorf("docs/check.md does not show what check prints now:\n%s%s", out, errOut)
	}
}
