package export_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// catalogRun runs a built-in mission under its default settings.
func catalogRun(t testing.TB, id string) *missions.Case {
	t.Helper()
	c, err := missions.BuiltIn().Run(id, missions.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// goodCase is a catalog export to edit.
func goodCase(t *testing.T) []byte {
	t.Helper()
	c := catalogRun(t, "timeout-then-success")
	data, err := export.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// replacePart swaps one top-level part of a case for raw JSON, or drops it
// when raw is empty.
func replacePart(t *testing.T, data []byte, part, raw string) []byte {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString(`{"schema": "replaylab.case/v3"`)
	for _, k := range []string{"mission", "settings", "events", "ledger", "outcome"} {
		v := string(doc[k])
		if k == part {
			if raw == "" {
				continue
			}
			v = raw
		}
		b.WriteString(`, "` + k + `": ` + v)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// TestUnmarshalSaysWhereAndWhat: every rejection names the file, the place
// where there is one, and what would be accepted, in the file's own words
// (no Go type or field names).
func TestUnmarshalSaysWhereAndWhat(t *testing.T) {
	good := goodCase(t)
	s := string(good)
	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{"array", []byte("[]"), []string{"case.json: the file holds a list", `a JSON object whose first field is "schema"`}},
		{"string", []byte(`"case"`), []string{"case.json: the file holds a string"}},
		{"schema not a string", []byte(`{"schema": 5}`), []string{`"schema" is 5`, `the string "replaylab.case/v3"`}},
		{"negative seed", []byte(strings.Replace(s, `"seed": 1`, `"seed": -1`, 1)), []string{"case.json:", `field "settings.seed" holds the number -1`, "a whole number from 0 to 18446744073709551615"}},
		{"seed as text", []byte(strings.Replace(s, `"seed": 1`, `"seed": "one"`, 1)), []string{`field "settings.seed" holds a string; expected a whole number from 0`}},
		{"huge tick", []byte(strings.Replace(s, `"tick": 0`, `"tick": 1e400`, 1)), []string{`field "events.tick" holds the number 1e400; expected a whole number`}},
		{"payload value not text", []byte(strings.Replace(s, `"amount": "45.00"`, `"amount": 45`, 1)), []string{`field "mission.intents.payload" holds a number; expected a string`}},
		{"stable keys as text", []byte(strings.Replace(s, `"stable_keys": true`, `"stable_keys": "yes"`, 1)), []string{"expected true or false"}},
		{"unknown field in settings", []byte(strings.Replace(s, `"seed": 1,`, `"seed": 1, "colour": "red",`, 1)),
			[]string{`case.json:`, `unknown field "colour" in settings`, "accepted: stable_keys, policy, contract, key_source, seed, max_attempts, deadline"}},
		{"unknown field at the top", []byte(strings.Replace(s, `"schema": "replaylab.case/v3",`, `"schema": "replaylab.case/v3", "bonus": 1,`, 1)),
			[]string{`unknown field "bonus" in the case`, "accepted: schema, mission, settings, provider, events, ledger, outcome"}},
		{"not UTF-8", append([]byte{0xff, 0xfe}, good...), []string{"case.json:1:1:", "not UTF-8", "0xff"}},
		{"not UTF-8 inside a string", []byte(strings.Replace(s, "Timeout, then success", "Timeout\xc3", 1)), []string{"case.json:5:", "not UTF-8"}},
		{"no events", replacePart(t, good, "events", ""), []string{`the case has no "events"`, "schema, mission, settings, events, ledger, outcome"}},
		{"null outcome", replacePart(t, good, "outcome", "null"), []string{`the case has no "outcome"`}},
		{"null mission", replacePart(t, good, "mission", "null"), []string{`the case has no "mission"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := export.Unmarshal("case.json", tt.data)
			if err == nil {
				t.Fatal("accepted")
			}
			if c != nil {
				t.Error("a case came back with the error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			for _, leak := range []string{"Case.", "uint64", "int64", "struct {", "json: unknown", "json: cannot", "map["} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error %q leaks %q", err, leak)
				}
			}
		})
	}
}

// TestUnknownFieldPosition: the line and column point at the key itself.
func TestUnknownFieldPosition(t *testing.T) {
	s := string(goodCase(t))
	data := strings.Replace(s, `    "seed": 1,`, `    "seed": 1,`+"\n"+`    "colour": "red",`, 1)
	line := strings.Count(data[:strings.Index(data, `"colour"`)], "\n") + 1
	_, err := export.Unmarshal("case.json", []byte(data))
	if err == nil {
		t.Fatal("accepted")
	}
	want := "case.json:" + itoa(line) + ":5: unknown field"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want it to start %q", err, want)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestUnmarshalByteOrderMark: a case saved by an editor that adds a UTF-8
// byte-order mark reads as the same case.
func TestUnmarshalByteOrderMark(t *testing.T) {
	good := goodCase(t)
	c, err := export.Unmarshal("case.json", append([]byte{0xEF, 0xBB, 0xBF}, good...))
	if err != nil {
		t.Fatal(err)
	}
	again, err := export.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, good) {
		t.Error("the case read with a byte-order mark writes back differently")
	}
}
