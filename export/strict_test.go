package export_test

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/export"
)

// TestUnmarshalHoldsTheFileToTheFormat: the JSON decoder takes a field
// twice (keeping the last), a field in other letter case, a null or a
// missing field (as a zero), and any string where the format has a word.
// Each such file once read as a case, and validate called it ok; each is
// now refused with its line and column, what is wrong and what would do.
func TestUnmarshalHoldsTheFileToTheFormat(t *testing.T) {
	good, err := export.Marshal(catalogRun(t, "timeout-then-success"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(good)
	tests := []struct {
		name, data, want string
	}{
		{"a field twice", strings.Replace(s, `"seed": 1,`, `"seed": 1, "seed": 5,`, 1),
			`case.json:68:16: field "seed" appears twice in settings (a case holds each field once)`},
		{"the schema twice", strings.Replace(s, `"schema": "replaylab.case/v3",`, `"schema": "replaylab.case/v3", "schema": "replaylab.case/v3",`, 1),
			`case.json:2:34: field "schema" appears twice in the case`},
		{"a field in capitals", strings.Replace(s, `"seed": 1`, `"Seed": 1`, 1),
			`case.json:68:5: unknown field "Seed" in settings (accepted: stable_keys, policy, contract, key_source, seed, max_attempts, deadline)`},
		{"a null number", strings.Replace(s, `"seq": 2,`, `"seq": null,`, 1),
			`case.json:85:7: field "events[1].seq" holds null; expected a whole number`},
		{"a null title", strings.Replace(s, `"title": "Timeout, then success"`, `"title": null`, 1),
			`case.json:5:5: field "mission.title" holds null; expected a string`},
		{"a missing field", strings.Replace(s, `"seq": 2,`, ``, 1),
			`case.json:84:5: field "events[1]" has no "seq" (a case writes every field out)`},
		{"a word the format lacks", strings.Replace(s, `"kind": "attempt"`, `"kind": "atempt"`, 1),
			`field "events[2].kind" holds "atempt"; did you mean attempt? (accepted: attempt, hold, read, wait, restart, commit, resolve, prune, checkpoint, escalate)`},
		{"a verdict the format lacks", strings.Replace(s, `"verdict": "exactly_once"`, `"verdict": "great"`, 1),
			`field "outcome.verdicts[0].verdict" holds "great" (accepted: exactly_once, failed_cleanly, duplicate, hidden_effect, phantom, escalated)`},
		{"a negative tick", strings.Replace(s, `"tick": 0,`, `"tick": -3,`, 1),
			`field "events[0].tick" holds -3; expected at least 0`},
		{"nothing intended", strings.Replace(s, `"intended": 1,`, `"intended": 0,`, 1),
			`field "outcome.intended" holds 0; expected at least 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.data == s {
				t.Fatal("the test's edit did not apply")
			}
			_, err := export.Unmarshal("case.json", []byte(tt.data))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n%s\nwant it to contain\n%s", err, tt.want)
			}
		})
	}
}

// TestUnmarshalNamesAMissionFile: a mission file given where a case goes
// got the JSON reader's words for its first letter ("invalid character
// 'i' looking for beginning of value"); it is named as a mission file,
// with the command that makes a case of it.
func TestUnmarshalNamesAMissionFile(t *testing.T) {
	yaml := "id: mine\ntitle: Mine\ngoal: Mine.\nintents:\n  - {id: a, op: refund, principal: p, payload: {o: \"1\"}}\nschedule:\n  - {attempt: a, fixture: success}\nexpect:\n  - effects: 1\n"
	_, err := export.Unmarshal("my missions/mine.yaml", []byte(yaml))
	want := "my missions/mine.yaml is a mission file (mission mine), not a case; make a case of it with: replaylab run mine --missions 'my missions' --json --out CASE.json"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want\n%s", err, want)
	}
	// A built-in mission needs no --missions; written as JSON, a mission
	// has no "schema" and is named all the same.
	flow := `{"id": "timeout-then-success", "title": "T", "goal": "G.", "intents": [{"id": "a", "op": "r", "principal": "p", "payload": {}}], "schedule": [{"attempt": "a", "fixture": "success"}], "expect": [{"effects": 1}]}`
	_, err = export.Unmarshal("t.json", []byte(flow))
	want = "t.json is a mission file (mission timeout-then-success), not a case; make a case of it with: replaylab run timeout-then-success --json --out CASE.json"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want\n%s", err, want)
	}
}
