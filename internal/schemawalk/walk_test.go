package schemawalk_test

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/internal/schemawalk"
)

const schema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "required": ["schema", "n"],
  "properties": {
    "schema": {"const": "x/v1"},
    "n": {"type": "integer", "minimum": 1},
    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}
  }
}`

// The walk says, for a document of its noun, the first problem and where
// it lies; a document that fits has none.
func TestScanNamesTheFirstProblem(t *testing.T) {
	s, err := schemawalk.Compile([]byte(schema), "note")
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Scan([]byte(`{"schema":"x/v1","n":2,"tags":["a"]}`)); !r.Fits() || !r.Object() {
		t.Errorf("a fitting document does not fit")
	}
	for _, tt := range []struct {
		doc, want string
		key       bool
	}{
		{`{"schema":"x/v1","n":2,"nn":1}`, `unknown field "nn" in the note (accepted: schema, n, tags)`, true},
		{`{"schema":"x/v1","n":2,"n":3}`, `field "n" appears twice in the note (a note holds each field once)`, true},
		{`{"schema":"x/v1","n":0}`, `"n"`, false},
		{`{"schema":"x/v1"}`, `"n"`, false},
		{`{"schema":"x/v1","n":1,"tags":["c"]}`, `"tags[0]"`, false},
	} {
		r := s.Scan([]byte(tt.doc))
		if r.Fits() {
			t.Errorf("%s fits", tt.doc)
			continue
		}
		_, msg, ok := r.KeyProblem()
		if !tt.key {
			_, msg, ok = r.Issue()
		}
		if !ok || !strings.Contains(msg, tt.want) {
			t.Errorf("%s: %q (found %v), want it to say %q", tt.doc, msg, ok, tt.want)
		}
	}
	if r := s.Scan([]byte(`{"schema":`)); !r.Syntax() {
		t.Error("a document cut short is not a syntax error")
	}
	if _, err := schemawalk.Compile([]byte(`{"type":"object","patternProperties":{}}`), "note"); err == nil {
		t.Error("a keyword the walk does not check compiled")
	}
}
