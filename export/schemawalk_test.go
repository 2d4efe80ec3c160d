package export_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/missions/missionstest"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/replaylab/replaylab/export"
)

// span is one token of a JSON file: where it lies and whether it is an
// object key.
type span struct {
	start, end int
	key        bool
}

// tokenSpans lists the scalar tokens of a valid JSON file, keys marked.
func tokenSpans(t *testing.T, data []byte) []span {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []span
	type frame struct {
		object bool
		next   bool // the next token in this object is a key
	}
	var stack []frame
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		isKey := len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].next
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].next = !stack[len(stack)-1].next
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, next: true})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].next = true
			}
			continue
		}
		end := int(dec.InputOffset())
		start := int(before)
		for start < end && bytes.IndexByte([]byte(" \t\r\n,:"), data[start]) >= 0 {
			start++
		}
		out = append(out, span{start, end, isKey})
	}
}

// TestSchemaWalkAgreesWithAValidator holds the case reader's schema walk
// to a full JSON Schema validator: every scalar of catalog exports is
// replaced, in turn, by values of every kind, and every key is renamed,
// and the two must agree on whether the file fits the schema.
func TestSchemaWalkAgreesWithAValidator(t *testing.T) {
	sch := compileSchema(t)
	replacements := []string{`null`, `true`, `"x"`, `"ik_00"`, `"re_0001"`, `"attempt"`,
		`-1`, `0`, `-0`, `1.5`, `2e0`, `200`, `18446744073709551616`, `{}`, `["a","b"]`}
	// Between them, these two have a together step, a read, a late
	// commit, saved records and events of most kinds.
	// An edited case (v5) holds the mission's edit too.
	cases := map[string]*missions.Case{
		"concurrent-duplicates":  catalogRun(t, "concurrent-duplicates"),
		"original-still-running": catalogRun(t, "original-still-running"),
		"edited":                 editedRun(t),
	}
	checked := 0
	for _, id := range slices.Sorted(maps.Keys(cases)) {
		data, err := export.Marshal(cases[id])
		if err != nil {
			t.Fatal(err)
		}
		agree := func(what string, edited []byte) {
			t.Helper()
			checked++
			fits, syntax, err := export.ScanCaseForTest(edited)
			if err != nil {
				t.Fatal(err)
			}
			if syntax {
				t.Fatalf("%s %s: the walk calls valid JSON invalid", id, what)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(edited))
			if err != nil {
				t.Fatalf("%s %s: %v", id, what, err)
			}
			// The walk also refuses a key an object holds twice, which
			// JSON Schema cannot see; renames that make one are skipped.
			if want := sch.Validate(inst) == nil; fits != want {
				t.Errorf("%s %s: the walk says fits=%v, the validator %v", id, what, fits, want)
			}
		}
		agree("as written", data)
		for _, sp := range tokenSpans(t, data) {
			edit := func(with string) []byte {
				out := append([]byte{}, data[:sp.start]...)
				out = append(out, with...)
				return append(out, data[sp.end:]...)
			}
			if sp.key {
				renamed := edit(`"zz_renamed"`)
				agree("key "+string(data[sp.start:sp.end])+" renamed", renamed)
				continue
			}
			for _, r := range replacements {
				agree(string(data[sp.start:sp.end])+" → "+r, edit(r))
			}
		}
	}
	if checked < 3000 {
		t.Fatalf("only %d edits checked", checked)
	}
	t.Logf("%d edited files checked", checked)
}

// TestSchemaWalkRefusesWhatJSONRefuses: the walk is the first reader of a
// case file, so its idea of JSON syntax must be the standard's.
func TestSchemaWalkRefusesWhatJSONRefuses(t *testing.T) {
	for _, s := range []string{``, ` `, `{`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`,
		`{"a":1e}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\t\"}", `{"a":tru}`, `{"a":nul}`, `{} {}`, `{"a":1}x`, `{,}`, `[,1]`,
		`{"a":[1 2]}`, `{"a":{"b":1 "c":2}}`, `"unterminated`, `{"a":1}`, `[]`, `{"a":"\ud800"}`, `{"a":1E+2}`, `{"a":-0.0e-0}`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		`{"x":` + strings.Repeat("[", 200000)} {
		_, syntax, err := export.ScanCaseForTest([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if want := !json.Valid([]byte(s)); syntax != want {
			t.Errorf("%q: the walk says syntax error=%v, encoding/json %v", s, syntax, want)
		}
	}
}

// TestSchemaWalkNumbersByValue: a number is judged by its value, however
// it is spelled and however large: 2e0 is a whole 2, -0 is 0, and a
// huge exponent is a number out of range, not a long wait.
func TestSchemaWalkNumbersByValue(t *testing.T) {
	data, err := export.Marshal(catalogRun(t, "timeout-then-success"))
	if err != nil {
		t.Fatal(err)
	}
	good := string(data)
	for _, tt := range []struct {
		from, to string
		fits     bool
	}{
		{`"tick": 0,`, `"tick": 0e5,`, true},
		{`"tick": 0,`, `"tick": -0,`, true},
		{`"code": 200`, `"code": 2e2`, true},
		{`"code": 200`, `"code": 200.0`, true},
		{`"code": 200`, `"code": 2.00001e2`, false},
		{`"tick": 0,`, `"tick": 1e999999999,`, true},
		{`"tick": 0,`, `"tick": -1e999999999,`, false},
		{`"tick": 0,`, `"tick": 1e-999999999,`, false},
		{`"seed": 1,`, `"seed": 18446744073709551615,`, true},
		{`"seed": 1,`, `"seed": 18446744073709551616,`, false},
		{`"seed": 1,`, `"seed": 1` + strings.Repeat("0", 100000) + `,`, false},
	} {
		edited := strings.Replace(good, tt.from, tt.to, 1)
		if edited == good {
			t.Fatalf("%s: the edit did not apply", tt.to)
		}
		fits, _, err := export.ScanCaseForTest([]byte(edited))
		if err != nil || fits != tt.fits {
			t.Errorf("%.60s: fits %v (%v), want %v", tt.to, fits, err, tt.fits)
		}
	}
}

// editedRun is a case of a mission edited in the lab: original-still-
// running with its first attempt a pending refund and its last refused.
func editedRun(t *testing.T) *missions.Case {
	t.Helper()
	return missionstest.Edited(t, "original-still-running", map[int]missions.Fixture{1: missions.PendingFixture, 3: missions.FailureBeforeCommit})
}
