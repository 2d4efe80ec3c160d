package missions_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// validMission is a small mission file every error case below breaks in
// one place.
const validMission = `id: small
title: Small
goal: A timeout after commit, then a success.
intents:
  - id: refund-1
    op: refund
    principal: agent
    label: refund of 10.00
    payload:
      order: "1"
      amount: "10.00"
schedule:
  - attempt: refund-1
    fixture: timeout_after_commit
  - wait: 3
  - read: refund-1
  - attempt: refund-1
    fixture: success
expect:
  - when: {stable_keys: on}
    effects: 1
    verdicts: {refund-1: exactly_once}
`

func TestParseValid(t *testing.T) {
	m, err := missions.Parse("small.yaml", []byte(validMission))
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != "small" || len(m.Intents) != 1 || len(m.Schedule) != 4 || len(m.Expect) != 1 {
		t.Fatalf("parsed %+v", m)
	}
	// Defaults are written out so a case states what it ran under.
	if m.Contract != ledger.V1 || m.Retention != ledger.DefaultRetention || m.KeySource != missions.KeyPerIntent {
		t.Errorf("defaults: contract %q retention %d key source %q", m.Contract, m.Retention, m.KeySource)
	}
	if got := m.Schedule[1].Kind(); got != missions.StepWait {
		t.Errorf("step 2 is %s, want wait", got)
	}
	if m.Intents[0].Line != 5 || m.Schedule[3].Line != 17 || m.Expect[0].Line != 20 {
		t.Errorf("lines: intent %d, step 4 %d, expectation %d", m.Intents[0].Line, m.Schedule[3].Line, m.Expect[0].Line)
	}
	if err := m.Validate(); err != nil {
		t.Errorf("a parsed mission fails Validate: %v", err)
	}
}

// TestParseErrors breaks the valid mission in one place per row and checks
// the error names the file, the line and what would be accepted.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		from string // text in validMission to replace
		to   string
		line int
		want []string
	}{
		{name: "not yaml", from: "title: Small", to: "title: Small: x", line: 2, want: []string{"not valid YAML"}},
		{name: "unknown top-level key", from: "title: Small", to: "titel: Small", line: 2, want: []string{`unknown key "titel"`, "accepted: id, title, goal"}},
		{name: "missing title", from: "title: Small\n", to: "", line: 1, want: []string{`no "title"`, "required keys"}},
		{name: "repeated key", from: "title: Small", to: "title: Small\ntitle: Again", line: 3, want: []string{`"title" appears twice`}},
		{name: "bad id", from: "id: small", to: "id: Small_One", line: 1, want: []string{`id "Small_One"`, "lowercase letters, digits and dashes"}},
		{name: "bad contract", from: "goal: A", to: "contract: v3\ngoal: A", line: 3, want: []string{`unknown contract "v3"`, "accepted: v1, v2, none"}},
		{name: "bad retention", from: "goal: A", to: "retention: soon\ngoal: A", line: 3, want: []string{"retention", "whole number from 1"}},
		{name: "retention with a leading zero", from: "goal: A", to: "retention: 010\ngoal: A", line: 3, want: []string{`retention is "010"`, "leading zero", "retention: 10"}},
		{name: "a verdict given twice", from: "verdicts: {refund-1: exactly_once}", to: "verdicts: {refund-1: exactly_once, refund-1: duplicate}", line: 22, want: []string{`intent "refund-1" appears twice in verdicts`}},
		{name: "bad key source", from: "goal: A", to: "key_source: uuid\ngoal: A", line: 3, want: []string{`unknown key source "uuid"`, "accepted: intent, payload_hash"}},
		{name: "intents not a list", from: "intents:\n  - id: refund-1\n    op: refund\n    principal: agent\n    label: refund of 10.00\n    payload:\n      order: \"1\"\n      amount: \"10.00\"", to: "intents: refund-1", line: 4, want: []string{"intents must be a list"}},
		{name: "intent without op", from: "    op: refund\n", to: "", line: 5, want: []string{`no "op"`, "required: id, op, principal, payload"}},
		{name: "unknown intent key", from: "    op: refund", to: "    op: refund\n    amount: 5", line: 7, want: []string{`unknown key "amount" in an intent`, "accepted: id, op, principal, label, payload"}},
		{name: "payload not a mapping", from: "    payload:\n      order: \"1\"\n      amount: \"10.00\"", to: "    payload: 10.00", line: 9, want: []string{"payload must be a mapping"}},
		{name: "unknown fixture", from: "fixture: success", to: "fixture: sucess", line: 18, want: []string{`unknown fixture "sucess"`, "accepted: failure_before_commit, timeout_after_commit, success"}},
		{name: "attempt without fixture", from: "    fixture: success\n", to: "", line: 17, want: []string{"has no fixture", "accepted: failure_before_commit"}},
		{name: "attempt on undeclared intent", from: "  - attempt: refund-1\n    fixture: success", to: "  - attempt: refund-2\n    fixture: success", line: 17, want: []string{`intent "refund-2"`, "declared: refund-1"}},
		{name: "step does two things", from: "  - wait: 3", to: "  - wait: 3\n    read: refund-1", line: 15, want: []string{"exactly one thing", "wait and read", "accepted: attempt, wait, read, restart, together"}},
		{name: "step does nothing", from: "  - wait: 3", to: "  - {}", line: 15, want: []string{"exactly one thing", "none"}},
		{name: "wait out of range", from: "wait: 3", to: "wait: 0", line: 15, want: []string{"wait", "whole number from 1"}},
		{name: "unknown step key", from: "  - wait: 3", to: "  - sleep: 3", line: 15, want: []string{`unknown key "sleep" in a step`, "accepted: attempt, fixture"}},
		{name: "delay on success", from: "    fixture: success", to: "    fixture: success\n    delay: 2", line: 17, want: []string{"delay and resolve belong to late_commit and pending only"}},
		{name: "late commit without delay", from: "fixture: success", to: "fixture: late_commit", line: 17, want: []string{"late_commit needs delay"}},
		{name: "pending without resolve", from: "fixture: success", to: "fixture: pending\n    delay: 2", line: 17, want: []string{"pending needs delay", "resolve (succeeded or failed)"}},
		{name: "resolve not terminal", from: "fixture: success", to: "fixture: pending\n    delay: 2\n    resolve: pending", line: 20, want: []string{`resolve "pending" is not a terminal status`, "accepted: succeeded, failed"}},
		{name: "payload field not in intent", from: "    fixture: success", to: "    fixture: success\n    payload: {currency: EUR}", line: 17, want: []string{`payload field "currency"`, "fields: amount, order"}},
		{name: "together with one attempt", from: "  - wait: 3", to: "  - together:\n      - attempt: refund-1\n        fixture: success", line: 16, want: []string{"together must list from 2 to 8 attempts"}},
		{name: "together holding a wait", from: "  - wait: 3", to: "  - together:\n      - attempt: refund-1\n        fixture: success\n      - wait: 1", line: 18, want: []string{"together step holds attempts only"}},
		{name: "together with too many workers", from: "  - wait: 3", to: "  - together:\n" + strings.Repeat("      - attempt: refund-1\n        fixture: success\n", 9), line: 16, want: []string{"from 2 to 8 attempts"}},
		{name: "restart false", from: "  - wait: 3", to: "  - restart: false", line: 15, want: []string{"restart must be true"}},
		{name: "expectation without effects", from: "    effects: 1\n", to: "", line: 20, want: []string{`no "effects"`}},
		{name: "bad stable_keys", from: "stable_keys: on", to: "stable_keys: maybe", line: 20, want: []string{`"maybe"`, "accepted: on, off"}},
		{name: "bad policy", from: "{stable_keys: on}", to: "{policy: careful}", line: 20, want: []string{`unknown policy "careful"`, "accepted: naive, guarded"}},
		{name: "unknown when key", from: "{stable_keys: on}", to: "{retries: 3}", line: 20, want: []string{`unknown key "retries" in when`, "accepted: stable_keys, policy, provider, contract, key_source"}},
		{name: "bad verdict", from: "exactly_once", to: "fine", line: 22, want: []string{`unknown verdict "fine"`, "accepted: exactly_once, failed_cleanly, duplicate, hidden_effect, phantom, escalated"}},
		{name: "verdict for undeclared intent", from: "{refund-1: exactly_once}", to: "{refund-9: exactly_once}", line: 22, want: []string{`intent "refund-9"`, "declared: refund-1"}},
		{name: "effects negative", from: "effects: 1", to: "effects: -1", line: 21, want: []string{"effects", "whole number from 0"}},
		// Values the YAML library would hand over as text that was never
		// written: nothing, null, ~, or a tagged value.
		{name: "null op", from: "    op: refund", to: "    op: null", line: 6, want: []string{"op is empty", `"null" is YAML's null`, "write text"}},
		{name: "tilde goal", from: "goal: A timeout after commit, then a success.", to: "goal: ~", line: 3, want: []string{"goal is empty", `"~" is YAML's null`}},
		{name: "empty title", from: "title: Small", to: "title:", line: 2, want: []string{"title is empty", "nothing after the colon"}},
		{name: "binary label", from: "    label: refund of 10.00", to: "    label: !!binary aGVsbG8=", line: 8, want: []string{"label carries the YAML tag !!binary", "without a tag"}},
		{name: "tagged wait", from: "wait: 3", to: "wait: !!str 3", line: 15, want: []string{"carries the YAML tag !!str"}},
		{name: "null payload value", from: "      order: \"1\"", to: "      order: null", line: 10, want: []string{`payload field "order" is empty`}},
		{name: "empty payload name", from: "      order: \"1\"", to: "      \"\": \"1\"", line: 10, want: []string{"a field without a name"}},
		{name: "non-scalar payload name", from: "      order: \"1\"", to: "      ? [a, b]\n      : \"1\"", line: 10, want: []string{"a field without a name"}},
		// Every field is read as its YAML type: a boolean or a number is
		// never taken as text, nor quoted text as a number.
		{name: "boolean id", from: "id: small", to: "id: true", line: 1, want: []string{"id is true, which YAML reads as a boolean, not text", `write it in quotes, "true"`}},
		{name: "number op", from: "    op: refund", to: "    op: 12", line: 6, want: []string{"op is 12, which YAML reads as a number"}},
		{name: "number payload value", from: "      amount: \"10.00\"", to: "      amount: 10.00", line: 11, want: []string{`payload field "amount" is 10.00, which YAML reads as a number`, `"10.00"`}},
		{name: "quoted wait", from: "wait: 3", to: "wait: \"3\"", line: 15, want: []string{`wait is "3", text in quotes`, "wait: 3"}},
		{name: "quoted effects", from: "effects: 1", to: "effects: '1'", line: 21, want: []string{`effects is "1", text in quotes`}},
		{name: "date label", from: "    label: refund of 10.00", to: "    label: 2026-12-01", line: 8, want: []string{"label is 2026-12-01, which YAML reads as a date"}},
		{name: "quoted restart", from: "  - wait: 3", to: "  - restart: \"true\"", line: 15, want: []string{`restart is "true", text in quotes`}},
		{name: "stable_keys true", from: "stable_keys: on", to: "stable_keys: true", line: 20, want: []string{`"true"; did you mean on?`, "accepted: on, off"}},
		{name: "second document", from: "expect:", to: "---\nid: other\nexpect:", line: 20, want: []string{"a second YAML document", "one mission"}},
		{name: "duplicate intent id", from: "schedule:", to: "  - id: refund-1\n    op: refund\n    principal: agent\n    payload: {order: \"2\"}\nschedule:", line: 12, want: []string{`intent id "refund-1" is already used on line 5`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(validMission, tt.from) {
				t.Fatalf("the valid mission has no %q", tt.from)
			}
			src := strings.Replace(validMission, tt.from, tt.to, 1)
			_, err := missions.Parse("m.yaml", []byte(src))
			if err == nil {
				t.Fatalf("accepted:\n%s", src)
			}
			var fe *missions.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a *FileError: %v", err, err)
			}
			msg := err.Error()
			prefix := "m.yaml:" + strconv.Itoa(tt.line) + ": "
			if !strings.Contains(msg, prefix) {
				t.Errorf("error does not point at %s:\n%s", prefix, msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error does not mention %q:\n%s", w, msg)
				}
			}
		})
	}
}

func TestParseWholeFileErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string
	}{
		{"empty", "", "the file is empty"},
		{"only a comment", "# nothing here\n", "the file is empty"},
		{"a list, not a mapping", "- id: x\n", "must be a mapping"},
		{"too big", "id: x\n" + strings.Repeat("#", missions.MaxFileBytes), "may be at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := missions.Parse("m.yaml", []byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "m.yaml") {
				t.Errorf("got %v, want an error about %q naming m.yaml", err, tt.want)
			}
		})
	}
}

// TestParseReportsEveryProblem: a file with several mistakes gets one line
// for each, not just the first.
func TestParseReportsEveryProblem(t *testing.T) {
	src := strings.Replace(validMission, "fixture: success", "fixture: sucess", 1)
	src = strings.Replace(src, "exactly_once", "fine", 1)
	_, err := missions.Parse("m.yaml", []byte(src))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, w := range []string{"m.yaml:18:", "m.yaml:22:"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s missing from:\n%v", w, err)
		}
	}
}

// TestCatalogFilesParse parses every file of the built-in catalog from disk,
// the way a user's file would be read, and checks each has expectations.
func TestCatalogFilesParse(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("catalog", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 3 {
		t.Fatalf("only %d catalog files", len(paths))
	}
	ids := map[string]bool{}
	for _, p := range paths {
		m, err := missions.ReadFS(os.DirFS(filepath.Dir(p)), filepath.Base(p), p)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if want := strings.TrimSuffix(filepath.Base(p), ".yaml"); m.ID != want {
			t.Errorf("%s: id %q does not match the file name", p, m.ID)
		}
		if len(m.Expect) == 0 {
			t.Errorf("%s: no expectations", p)
		}
		ids[m.ID] = true
	}
	for _, m := range missions.BuiltIn().Missions {
		if !ids[m.ID] {
			t.Errorf("built-in mission %s has no file in catalog/", m.ID)
		}
	}
	for _, id := range []string{"timeout-then-success", "failure-then-failure", "timeout-before-commit"} {
		if !ids[id] {
			t.Errorf("the catalog lacks %s", id)
		}
	}
}

func TestAddFS(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("small.yaml", validMission)
	write("notes.txt", "not a mission")
	cat := missions.BuiltIn()
	if err := cat.AddFS(os.DirFS(dir), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Get("small"); err != nil {
		t.Fatal(err)
	}
	// An extension in capitals is a mission file all the same.
	upper := t.TempDir()
	if err := os.WriteFile(filepath.Join(upper, "SHOUT.YAML"), []byte(strings.Replace(validMission, "id: small", "id: shout", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(upper, "Other.Yml"), []byte(strings.Replace(validMission, "id: small", "id: other", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	up := missions.BuiltIn()
	if err := up.AddFS(os.DirFS(upper), upper); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"shout", "other"} {
		if _, err := up.Get(id); err != nil {
			t.Errorf(".YAML / .Yml file not loaded: %v", err)
		}
	}
	// A clash with a built-in id and a broken file are both reported.
	write("clash.yaml", strings.Replace(validMission, "id: small", "id: timeout-then-success", 1))
	write("broken.yml", "id: [")
	err := missions.BuiltIn().AddFS(os.DirFS(dir), dir)
	if err == nil {
		t.Fatal("accepted a clashing id and a broken file")
	}
	for _, w := range []string{"clash.yaml", "already used", "broken.yml:1:"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not mention %q:\n%v", w, err)
		}
	}
	if err := missions.BuiltIn().AddFS(os.DirFS(filepath.Join(dir, "missing")), filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: got %v", err)
	}
}

func TestGetSuggestsClosest(t *testing.T) {
	_, err := missions.BuiltIn().Get("timeout-then-sucess")
	var ue *missions.UnknownMissionError
	if !errors.As(err, &ue) {
		t.Fatalf("got %v", err)
	}
	if len(ue.Closest) == 0 || ue.Closest[0] != "timeout-then-success" {
		t.Errorf("closest %v", ue.Closest)
	}
}

func TestClosestWord(t *testing.T) {
	words := []string{"stable_keys", "policy", "contract", "key_source"}
	for s, want := range map[string]string{
		"policy": "policy", "polcy": "policy", "contrcat": "contract", "key-source": "key_source",
		"stablekeys": "stable_keys", "seed": "", "": "",
	} {
		if got := termtext.Closest(s, words); got != want {
			t.Errorf("termtext.Closest(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestYAMLErrorsNameTheRightLine: the YAML library numbers its parser's
// problems from 0 and puts a problem at the end of the file after the last
// line; the errors name the line a person would look at. A control
// character is named with its line and column.
func TestYAMLErrorsNameTheRightLine(t *testing.T) {
	tests := []struct{ data, want string }{
		{"id: x\ntitle: t\ngoal: g\nintents:\n  - id: r1\n    op: [unclosed\n    principal: p\n", "m.yaml:6: not valid YAML: did not find expected ',' or ']'"},
		{"id: x\ntitle: {a: b\ngoal: g\n", "m.yaml:2: not valid YAML: did not find expected ',' or '}'"},
		{"id: x\ntitle: t\ngoal: g\n- a\n", "m.yaml:4: not valid YAML: did not find expected key"},
		{"id: [", "m.yaml:1: not valid YAML: did not find expected node content"},
		{"id: [\n", "m.yaml:1: not valid YAML: did not find expected node content"},
		{"id: x\ntitle: t\n  goal: g\n", "m.yaml:3: not valid YAML: mapping values are not allowed in this context"},
		{"id: x\ntitle: \"a\x1bb\"\n", "m.yaml:2: column 10: a control character (U+001B) is not allowed in a YAML file"},
		{"id: x\n\x7f\n", "m.yaml:2: column 1: a control character (U+007F)"},
	}
	for _, tt := range tests {
		_, err := missions.Parse("m.yaml", []byte(tt.data))
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Parse(%q): %v\nwant: %s…", tt.data, err, tt.want)
		}
	}
	// Tab, line feed, carriage return and next line are not control
	// characters to YAML.
	if _, err := missions.Parse("m.yaml", []byte("id: x\r\ntitle: \"a\tb\u0085\"\r\n")); err != nil && strings.Contains(err.Error(), "control character") {
		t.Errorf("an allowed character was refused: %v", err)
	}
}

// A value refused for its YAML type is said once: not again as an empty
// id or an unknown status.
func TestATypeErrorIsSaidOnce(t *testing.T) {
	src := strings.Replace(validMission, "id: small", "id: true", 1)
	src = strings.Replace(src, "fixture: success", "fixture: pending\n    delay: 2\n    resolve: true", 1)
	_, err := missions.Parse("m.yaml", []byte(src))
	if err == nil {
		t.Fatal("accepted")
	}
	msg := err.Error()
	for _, unwanted := range []string{"id is empty", "is not a terminal status"} {
		if strings.Contains(msg, unwanted) {
			t.Errorf("a follow-on error %q:\n%s", unwanted, msg)
		}
	}
	if strings.Count(msg, "which YAML reads as a boolean") != 2 {
		t.Errorf("want the two type errors:\n%s", msg)
	}
	// A word from a fixed set is told the words, not to quote it.
	if !strings.Contains(msg, "resolve is true, which YAML reads as a boolean; give one of the words accepted: succeeded, failed") {
		t.Errorf("the resolve's words:\n%s", msg)
	}
}
