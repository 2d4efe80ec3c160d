package check_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/replaylab/replaylab/check"
	"github.com/replaylab/replaylab/export"
)

func historySchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(export.HistorySchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("history.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("history.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkLines checks a history given as lines.
func checkLines(t *testing.T, lines ...string) (*check.Report, error) {
	t.Helper()
	return check.History("h.jsonl", strings.NewReader(strings.Join(lines, "\n")+"\n"))
}

// Each anomaly is found, with the lines that show it, and nothing else is.
func TestCheckHistoryAnomalies(t *testing.T) {
	att := func(intent, key, digest, outcome string) string {
		return `{"type":"attempt","intent":"` + intent + `","key":"` + key + `","digest":"` + digest + `","outcome":"` + outcome + `"}`
	}
	rec := func(intent, key, object, status string) string {
		return `{"type":"record","intent":"` + intent + `","key":"` + key + `","object":"` + object + `","status":"` + status + `"}`
	}
	cases := []struct {
		name  string
		lines []string
		want  []string // kind@lines
	}{
		{"clean: a timeout, a same-key retry, one refund", []string{att("i", "k", "d", "info"), att("i", "k", "d", "ok"), rec("i", "k", "re_1", "succeeded")}, nil},
		{"clean: two failures, no refund", []string{att("i", "k", "d", "fail"), att("i", "k", "d", "fail")}, nil},
		{"clean: a refund that failed is no effect", []string{att("i", "k", "d", "info"), rec("i", "k", "re_1", "failed")}, nil},
		{"duplicate", []string{att("i", "k", "d", "ok"), rec("i", "k", "re_1", "succeeded"), rec("i", "k", "re_2", "pending")}, []string{"duplicate_effect@2,3"}},
		{"never learned", []string{att("i", "k", "d", "info"), att("i", "k", "d", "fail"), rec("i", "k", "re_1", "succeeded")}, []string{"effect_never_learned@1,3"}},
		{"key changed", []string{att("i", "a", "d", "fail"), att("i", "b", "d", "ok"), rec("i", "b", "re_1", "succeeded")}, []string{"key_changed@1,2"}},
		{"key reused with another payload", []string{att("i", "k", "d1", "ok"), att("i", "k", "d2", "fail"), rec("i", "k", "re_1", "succeeded")}, []string{"key_reused_with_other_payload@1,2"}},
		{"record without attempt", []string{att("i", "k", "d", "ok"), rec("i", "k", "re_1", "succeeded"), rec("j", "k2", "re_2", "succeeded")}, []string{"record_without_attempt@3"}},
		{"fresh key after a timeout: both", []string{att("i", "a", "d", "info"), att("i", "b", "d", "ok"), rec("i", "a", "re_1", "succeeded"), rec("i", "b", "re_2", "succeeded")},
			[]string{"key_changed@1,2", "duplicate_effect@3,4"}},
		{"a fail that took effect", []string{att("i", "k", "d", "fail"), rec("i", "k", "re_1", "succeeded")}, []string{"effect_never_learned@1,2"}},
		{"a read-back tells the client", []string{att("i", "k", "d", "info"), `{"type":"read","intent":"i","object":"re_1","status":"succeeded"}`, rec("i", "k", "re_1", "succeeded")}, nil},
		{"ok without an effect", []string{att("i", "k", "d", "ok"), rec("i", "k", "re_1", "failed")}, []string{"ok_without_effect@1"}},
		{"ok naming another object", []string{`{"type":"attempt","intent":"i","key":"k","digest":"d","outcome":"ok","object":"re_9"}`, rec("i", "k", "re_1", "succeeded")}, []string{"ok_without_effect@1,2"}},
		{"one key for two intents", []string{att("i", "k", "d", "ok"), att("j", "k", "d", "ok"), rec("i", "k", "re_1", "succeeded")}, []string{"key_shared_by_intents@1,2", "ok_without_effect@2"}},
		{"a record listed twice is one effect", []string{att("i", "k", "d", "ok"), rec("i", "k", "re_1", "succeeded"), rec("i", "k", "re_1", "succeeded")}, nil},
	}
	for _, tc := range cases {
		expect(t, tc.name, kinds(t, tc.lines...), tc.want...)
	}
}

// A line that does not read stops the check with its line number and
// what is wrong.
func TestCheckHistoryMalformed(t *testing.T) {
	good := `{"type":"attempt","intent":"i","key":"k","outcome":"ok"}`
	cases := []struct {
		line string
		want string
	}{
		{`{"type":"attempt","intent":"i","outcome":"maybe"}`, `outcome "maybe"`},
		{`{"type":"attempt","intent":"i"}`, `no "outcome"`},
		{`{"type":"record","intent":"i","object":"re_1","status":"done"}`, `status "done"`},
		{`{"type":"record","intent":"i","status":"succeeded"}`, `no "object"`},
		{`{"type":"note","intent":"i"}`, `type "note"`},
		{`{"intent":"i","outcome":"ok"}`, `no "type"`},
		{`{"type":"attempt","outcome":"ok"}`, `no "intent"`},
		{`{"type":"attempt","intent":"i","outcome":"ok","colour":"red"}`, `unknown field "colour"`},
		{`{"type":"attempt","intent":"i","outcome":"ok","start":"yesterday"}`, `not a time`},
		{`{"type":"attempt","intent":5,"outcome":"ok"}`, `"intent" holds a number`},
		{`{"type":"attempt","intent":"i","outcome":"ok"`, `ends inside`},
		{`[1,2]`, `expected a JSON object`},
		{`{"schema":"replaylab.history/v1"}`, `belongs on the first line only`},
		{`{"TYPE":"attempt","Intent":"i","OUTCOME":"ok"}`, `unknown field "TYPE"`},
		{`{"type":"attempt","intent":"i","outcome":"ok","start":"2026-12-01T10:00:05Z","end":"2026-12-01T10:00:00Z"}`, `end 2026-12-01T10:00:00Z is before start`},
		{`{"type":"record","intent":"i","object":"re_1"}`, `has no "status"`},
		{`{"type":"read","intent":"i","object":"re_1","status":"succeeded","outcome":"ok"}`, `a read has no "outcome"`},
		{`{"type":"attempt","intent":"i","outcome":"ok"} {"type":"attempt"}`, `more than one JSON value`},
		{strings.Repeat("x", export.MaxHistoryLine+10), `longer than`},
	}
	for _, tc := range cases {
		_, err := checkLines(t, good, tc.line, good)
		var he *export.HistoryError
		if !errors.As(err, &he) || he.Line != 2 || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "h.jsonl:2: ") {
			t.Errorf("%.60q: %v, want h.jsonl:2: …%s", tc.line, err, tc.want)
		}
	}
}

// The example history in testdata/ shows every anomaly, and every line of
// it fits the history's JSON Schema, as do the lines the reader writes.
func TestHistoryExampleAndSchema(t *testing.T) {
	f, err := os.Open("../testdata/history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := check.History("history.jsonl", f)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, a := range rep.Anomalies {
		kinds[a.Kind] = true
	}
	for _, k := range check.Kinds {
		if !kinds[k] {
			t.Errorf("the example shows no %s", k)
		}
	}
	schema := historySchema(t)
	_, _ = f.Seek(0, 0)
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(sc.Text()))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(v); err != nil {
			t.Errorf("line %d does not fit the schema: %v", n, err)
		}
	}
	// Lines the reader refuses, the schema refuses too.
	for _, bad := range []string{`{"type":"attempt","intent":"i","outcome":"maybe"}`, `{"type":"record","intent":"i","status":"succeeded"}`, `{"type":"attempt","intent":"i","outcome":"ok","colour":"red"}`} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if schema.Validate(v) == nil {
			t.Errorf("the schema takes %s", bad)
		}
		if _, err := checkLines(t, bad); err == nil {
			t.Errorf("the reader takes %s", bad)
		}
	}
}

// A byte-order mark is not a line's problem; an empty history is.
func TestCheckHistoryEdges(t *testing.T) {
	bom := "\ufeff" + `{"type":"attempt","intent":"i","key":"k","outcome":"fail"}` + "\n"
	if _, err := check.History("bom.jsonl", strings.NewReader(bom)); err != nil {
		t.Errorf("a history with a byte-order mark: %v", err)
	}
	for _, empty := range []string{"", "\n\n", `{"schema":"replaylab.history/v1"}` + "\n"} {
		if _, err := check.History("e.jsonl", strings.NewReader(empty)); err == nil || !strings.Contains(err.Error(), "nothing to check") {
			t.Errorf("%q: %v", empty, err)
		}
	}
	if _, err := check.History("v9.jsonl", strings.NewReader(`{"schema":"replaylab.history/v9"}`+"\n")); err == nil || !strings.Contains(err.Error(), "this build reads") {
		t.Errorf("a future header: %v", err)
	}
}

// Many records of one intent are read in one pass, each object once, and
// a field repeated on a line is refused.
func TestCheckHistoryManyRecordsAndRepeatedFields(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"attempt","intent":"i","key":"k","outcome":"info"}` + "\n")
	const n = 50000
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"type":"record","intent":"i","key":"k","object":"re_%d","status":"succeeded"}`+"\n", i)
	}
	fmt.Fprintf(&b, `{"type":"record","intent":"i","key":"k","object":"re_0","status":"succeeded"}`+"\n")
	rep, err := check.History("many.jsonl", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Anomalies) != 2 || rep.Anomalies[0].Kind != check.Unlearned || len(rep.Anomalies[1].Lines) != n {
		t.Fatalf("anomalies: %d, first %s, duplicate over %d lines", len(rep.Anomalies), rep.Anomalies[0].Kind, len(rep.Anomalies[len(rep.Anomalies)-1].Lines))
	}
	if _, err := checkLines(t, `{"type":"attempt","intent":"a","intent":"b","outcome":"ok"}`); err == nil || !strings.Contains(err.Error(), `field "intent" appears twice`) {
		t.Errorf("a repeated field: %v", err)
	}
}
