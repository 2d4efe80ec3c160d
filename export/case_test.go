package export_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// catalogCase is one catalog mission run under one setting it contrasts.
type catalogCase struct {
	name string
	c    *missions.Case
}

// catalogCases runs every built-in mission under its default settings and
// under the settings of each of its expectations.
func catalogCases(t testing.TB) []catalogCase {
	t.Helper()
	var out []catalogCase
	for _, m := range missions.BuiltIn().Missions {
		whens := []missions.Overrides{{}}
		for _, e := range m.Expect {
			whens = append(whens, e.When)
		}
		for _, w := range whens {
			c, err := missions.Run(m, m.Settings(w))
			if err != nil {
				t.Fatalf("%s %s: %v", m.ID, w, err)
			}
			out = append(out, catalogCase{name: fmt.Sprintf("%s[%s]", m.ID, w), c: c})
		}
	}
	if len(out) == 0 {
		t.Fatal("the catalog gave no cases")
	}
	return out
}

func compileSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(export.Schema))
	if err != nil {
		t.Fatalf("schema.json is not JSON: %v", err)
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	if err := comp.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := comp.Compile("schema.json")
	if err != nil {
		t.Fatalf("schema.json does not compile: %v", err)
	}
	return sch
}

func validateAgainst(sch *jsonschema.Schema, data []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// TestCatalogExportsMatchSchema validates every catalog export against the
// shipped schema.
func TestCatalogExportsMatchSchema(t *testing.T) {
	sch := compileSchema(t)
	all := catalogCases(t)
	all = append(all, struct {
		name string
		c    *missions.Case
	}{"edited", editedRun(t)})
	for _, cc := range all {
		data, err := export.Marshal(cc.c)
		if err != nil {
			t.Fatalf("%s: %v", cc.name, err)
		}
		if err := validateAgainst(sch, data); err != nil {
			t.Errorf("%s: the export does not match schema.json:\n%v", cc.name, err)
		}
	}
}

// TestSchemaRejects proves the schema is strict: each edit of a valid export
// must be refused.
func TestSchemaRejects(t *testing.T) {
	sch := compileSchema(t)
	c := catalogRun(t, "timeout-then-success")
	data, err := export.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := validateAgainst(sch, data); err != nil {
		t.Fatalf("the unedited export should pass: %v", err)
	}
	edits := map[string]func(doc map[string]any){
		"unknown schema id":      func(d map[string]any) { d["schema"] = "replaylab.case/v9" },
		"no outcome":             func(d map[string]any) { delete(d, "outcome") },
		"extra top-level field":  func(d map[string]any) { d["wall_clock"] = "2024-01-01T00:00:00Z" },
		"unknown verdict":        func(d map[string]any) { verdict0(d)["verdict"] = "probably_fine" },
		"verdict without belief": func(d map[string]any) { delete(verdict0(d), "belief") },
		"unknown fixture":        func(d map[string]any) { event(d, "attempt")["fixture"] = "network_gremlin" },
		"unknown observation":    func(d map[string]any) { event(d, "attempt")["observed"] = "maybe" },
		"unknown class":          func(d map[string]any) { event(d, "attempt")["class"] = "probably_ok" },
		"attempt without fixture": func(d map[string]any) {
			delete(event(d, "attempt"), "fixture")
		},
		"negative effects": func(d map[string]any) { d["outcome"].(map[string]any)["effects"] = -1 },
		"effects as text":  func(d map[string]any) { d["outcome"].(map[string]any)["effects"] = "2" },
		"unknown policy":   func(d map[string]any) { d["settings"].(map[string]any)["policy"] = "hopeful" },
		"unknown contract": func(d map[string]any) { d["settings"].(map[string]any)["contract"] = "V3!" },
		"settings no seed": func(d map[string]any) { delete(d["settings"].(map[string]any), "seed") },
		"bad object id": func(d map[string]any) {
			d["ledger"].(map[string]any)["objects"].([]any)[0].(map[string]any)["id"] = "refund-1"
		},
		"step does nothing": func(d map[string]any) { d["mission"].(map[string]any)["schedule"].([]any)[0] = map[string]any{} },
		"unknown event kind": func(d map[string]any) {
			d["events"].([]any)[0].(map[string]any)["kind"] = "teleport"
		},
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			edit(doc)
			b, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			if err := validateAgainst(sch, b); err == nil {
				t.Errorf("the schema accepts the export after %q", name)
			}
		})
	}
}

func verdict0(d map[string]any) map[string]any {
	return d["outcome"].(map[string]any)["verdicts"].([]any)[0].(map[string]any)
}

func event(d map[string]any, kind string) map[string]any {
	for _, e := range d["events"].([]any) {
		if ev := e.(map[string]any); ev["kind"] == kind {
			return ev
		}
	}
	panic("no event of kind " + kind)
}

// TestMarshalIsDeterministic runs every catalog case twice and compares the
// bytes; the schema id comes first.
func TestMarshalIsDeterministic(t *testing.T) {
	for _, m := range missions.BuiltIn().Missions {
		for _, e := range m.Expect {
			a, err := missions.Run(m, m.Settings(e.When))
			if err != nil {
				t.Fatal(err)
			}
			b, err := missions.Run(m, m.Settings(e.When))
			if err != nil {
				t.Fatal(err)
			}
			ab, _ := export.Marshal(a)
			bb, _ := export.Marshal(b)
			if !bytes.Equal(ab, bb) {
				t.Errorf("%s %s: two runs give different bytes", m.ID, e.When)
			}
			if !bytes.HasPrefix(ab, []byte("{\n  \"schema\": \""+export.SchemaFor(a)+"\",\n")) {
				t.Errorf("%s: the export does not start with the schema id:\n%.80s", m.ID, ab)
			}
		}
	}
}

// TestMarshalOfARunnersCase: a case that reads its events from a runner's
// records (what the lab holds) is written with every event, as a whole
// case is, never with its events left out.
func TestMarshalOfARunnersCase(t *testing.T) {
	for _, m := range missions.BuiltIn().Missions {
		r, err := missions.NewRunner(m, m.Settings(missions.Overrides{}))
		if err != nil {
			t.Fatal(err)
		}
		r.Seek(r.Steps())
		want, _ := export.Marshal(r.Case())
		for name, c := range map[string]*missions.Case{"Logged": r.Logged(), "View": r.View()} {
			if got, _ := export.Marshal(c); !bytes.Equal(got, want) {
				t.Errorf("%s: %s is written otherwise than Case:\n%.300s", m.ID, name, got)
			}
		}
	}
}

// TestRoundTrip reads every export back and writes it again, byte for byte.
func TestRoundTrip(t *testing.T) {
	for _, cc := range catalogCases(t) {
		data, err := export.Marshal(cc.c)
		if err != nil {
			t.Fatal(err)
		}
		back, err := export.Unmarshal(cc.name, data)
		if err != nil {
			t.Fatalf("%s: reading the export back: %v", cc.name, err)
		}
		again, err := export.Marshal(back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, again) {
			t.Errorf("%s: the export changes on a round trip", cc.name)
		}
		rerun, err := missions.Run(&back.Mission, back.Settings)
		if err != nil {
			t.Fatalf("%s: re-running the read case: %v", cc.name, err)
		}
		if b, _ := export.Marshal(rerun); !bytes.Equal(data, b) {
			t.Errorf("%s: re-running the read case gives different bytes", cc.name)
		}
	}
}

func TestUnmarshalErrors(t *testing.T) {
	c := catalogRun(t, "timeout-then-success")
	good, err := export.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	s := string(good)
	tests := []struct {
		name string
		data string
		want []string // substrings of the error
	}{
		{"empty", "", []string{"case.json", "empty"}},
		{"truncated", s[:len(s)/2], []string{"case.json", "truncated"}},
		{"not json", "refund: 45.00\n", []string{"case.json:1:", "invalid JSON"}},
		{"syntax error on line 3", "{\n  \"schema\": \"replaylab.case/v3\",\n  \"mission\": ]\n}", []string{"case.json:3:"}},
		{"no schema", `{"mission": {}}`, []string{"no \"schema\" field", "replaylab.case/v3"}},
		{"future version", strings.Replace(s, "replaylab.case/v3", "replaylab.case/v7", 1), []string{"replaylab.case/v7", "version", "reads \"replaylab.case/v6\", \"replaylab.case/v5\", \"replaylab.case/v4\", \"replaylab.case/v3\", \"replaylab.case/v2\" and \"replaylab.case/v1\""}},
		{"other schema", strings.Replace(s, "replaylab.case/v3", "something/else", 1), []string{"not a replaylab case", "something/else"}},
		{"unknown field", strings.Replace(s, `"outcome": {`, `"outcome": {"bonus": 1, `, 1), []string{"unknown field", "bonus"}},
		{"wrong type", strings.Replace(s, `"seed": 1`, `"seed": "one"`, 1), []string{"case.json:", "seed"}},
		{"trailing data", s + "{}", []string{"after the case"}},
		{"bad policy", strings.Replace(s, `"policy": "naive"`, `"policy": "lucky"`, 1), []string{"policy", "lucky", "accepted: naive, guarded"}},
		{"bad fixture in schedule", strings.Replace(s, `"fixture": "success"`, `"fixture": "lucky"`, 1), []string{"fixture", "lucky"}},
		{"bad object id", strings.Replace(s, `"re_0001"`, `"refund-1"`, 1), []string{"expected re_ followed by digits"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := export.Unmarshal("case.json", []byte(tt.data))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}
