package missions_test

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// TestOneValidator: a mission that cannot run is refused with the same
// words whether it comes from a mission file (the parser, with lines) or
// from anywhere else (Validate, as for the mission a case file carries),
// and every problem is reported, not only the first.
func TestOneValidator(t *testing.T) {
	edits := []struct {
		name     string
		from, to string
		edit     func(m *missions.Mission)
		want     []string
	}{
		{"late_commit without delay", "fixture: success", "fixture: late_commit",
			func(m *missions.Mission) { m.Schedule[3].Fixture = missions.LateCommit },
			[]string{"late_commit needs delay"}},
		{"delay on success", "    fixture: success", "    fixture: success\n    delay: 2",
			func(m *missions.Mission) { m.Schedule[3].Delay = 2 },
			[]string{"delay and resolve belong to late_commit and pending only, not success"}},
		{"payload field not in the intent", "    fixture: success", "    fixture: success\n    payload: {currency: EUR}",
			func(m *missions.Mission) { m.Schedule[3].Payload = map[string]string{"currency": "EUR"} },
			[]string{`payload field "currency" is not in intent refund-1's payload (fields: amount, order)`}},
		{"attempt of an undeclared intent", "  - attempt: refund-1\n    fixture: success", "  - attempt: refund-2\n    fixture: success",
			func(m *missions.Mission) { m.Schedule[3].Attempt = "refund-2" },
			[]string{`attempt names intent "refund-2", which the mission does not declare (declared: refund-1)`}},
		{"read of an undeclared intent", "  - read: refund-1", "  - read: refund-9",
			func(m *missions.Mission) { m.Schedule[2].Read = "refund-9" },
			[]string{`read names intent "refund-9", which the mission does not declare (declared: refund-1)`}},
		{"an intent never attempted", "schedule:", "  - id: refund-2\n    op: refund\n    principal: agent\n    payload: {order: \"2\"}\nschedule:",
			func(m *missions.Mission) {
				m.Intents = append(m.Intents, missions.Intent{ID: "refund-2", Op: "refund", Principal: "agent", Payload: map[string]string{"order": "2"}})
			},
			[]string{"intent refund-2 is never attempted"}},
		{"two problems at once", "  - wait: 3\n  - read: refund-1", "  - wait: 3\n  - read: refund-9\n  - attempt: refund-1\n    fixture: pending\n    delay: 2",
			func(m *missions.Mission) {
				m.Schedule[2].Read = "refund-9"
				m.Schedule = append(m.Schedule[:3], append([]missions.Step{{Attempt: "refund-1", Fixture: missions.PendingFixture, Delay: 2}}, m.Schedule[3:]...)...)
			},
			[]string{`read names intent "refund-9"`, "pending needs delay (ticks until the object is terminal) and resolve (succeeded or failed)"}},
	}
	for _, tt := range edits {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Replace(validMission, tt.from, tt.to, 1)
			if text == validMission {
				t.Fatal("the edit changed nothing")
			}
			_, perr := missions.Parse("m.yaml", []byte(text))
			if perr == nil {
				t.Fatal("the parser accepted it")
			}
			m, err := missions.Parse("m.yaml", []byte(validMission))
			if err != nil {
				t.Fatal(err)
			}
			for i := range m.Schedule {
				m.Schedule[i].Line = 0 // as a case file's mission has none
			}
			for i := range m.Intents {
				m.Intents[i].Line = 0
			}
			tt.edit(m)
			verr := m.Validate()
			if verr == nil {
				t.Fatal("Validate accepted it")
			}
			var fromFile []string
			for _, e := range unjoin(perr) {
				var fe *missions.FileError
				if !errors.As(e, &fe) || fe.Line == 0 {
					t.Errorf("the parser's %q has no line", e)
					continue
				}
				fromFile = append(fromFile, fe.Msg)
			}
			var fromValidate []string
			for _, p := range m.Problems() {
				fromValidate = append(fromValidate, p.Msg)
			}
			sort.Strings(fromFile)
			sort.Strings(fromValidate)
			if strings.Join(fromFile, "\n") != strings.Join(fromValidate, "\n") {
				t.Errorf("the parser says\n  %s\nValidate says\n  %s", strings.Join(fromFile, "\n  "), strings.Join(fromValidate, "\n  "))
			}
			for _, w := range tt.want {
				if !strings.Contains(perr.Error(), w) || !strings.Contains(verr.Error(), w) {
					t.Errorf("want %q from both:\n%v\n%v", w, perr, verr)
				}
			}
		})
	}
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TestValidateNamesThePlace: without lines, Validate names the step.
func TestValidateNamesThePlace(t *testing.T) {
	m, _ := missions.BuiltIn().Get("timeout-then-success")
	c := *m
	c.Schedule = append([]missions.Step{}, m.Schedule...)
	c.Schedule[1].Fixture = missions.PendingFixture
	c.Schedule[1].Resolve = ledger.Succeeded
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "schedule step 2") || !strings.Contains(err.Error(), "pending needs delay") {
		t.Errorf("Validate: %v", err)
	}
}

// TestParserAndValidatorBothReport: a file with a mistake the parser finds
// and an unrelated one the validator finds is told both, each at its line.
func TestParserAndValidatorBothReport(t *testing.T) {
	for file, want := range map[string][]string{
		// a bad fixture, and an attempt of an intent nobody declared
		"a": {`a.yaml:14: unknown fixture "bogus"`, `a.yaml:13: attempt names intent "ghost"`},
		// an unknown key in an intent, and the intent's id
		"b": {`b.yaml:13: unknown key "colour"`, `b.yaml:10: intent id "Bad_ID"`},
		// a delay out of range, and a payload field the intent lacks
		"c": {`c.yaml:15:`, `c.yaml:13: payload field "currency"`},
		// a bad when, and a schedule without an attempt (at its line)
		"d": {`d.yaml:13: stable_keys: unknown switch value`, `d.yaml:11: the schedule has no attempt`},
		"e": {`e.yaml:11: the schedule has no attempt`},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "twoproblems", file+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = missions.Parse(file+".yaml", data)
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s.yaml: %q not reported; got:\n%v", file, w, err)
			}
		}
	}
}

// TestNoFollowOnProblems: what the parser could not read is told once,
// not again as what the validator makes of the empty field; and a field
// the parser faulted does not hide a separate mistake beside it.
func TestNoFollowOnProblems(t *testing.T) {
	for file, want := range map[string][]string{
		"t11":    {`t11.yaml:11: wait is "x"`},                   // a wait that is no number: not also "no kind"
		"noid":   {`noid.yaml:10: the intent has no "id"`},       // not also a bad id, nor "never attempted"
		"t3":     {`t3.yaml:12: together must list from 2 to 8`}, // not also "the schedule has no attempt"
		"late":   {`late.yaml:11: resolve belongs to the pending fixture only`, `late.yaml:13: delay is "soon"`},
		"succ":   {`succ.yaml:11: delay and resolve belong to late_commit and pending only`, `succ.yaml:13: delay is "0"`},
		"badfix": {`badfix.yaml:11: payload field "currency"`, `badfix.yaml:12: unknown fixture "bogus"`},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "twoproblems", file+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = missions.Parse(file+".yaml", data)
		if err == nil {
			t.Errorf("%s.yaml accepted", file)
			continue
		}
		got := unjoin(err)
		if len(got) != len(want) {
			t.Errorf("%s.yaml: %d problems, want %d:\n%v", file, len(got), len(want), err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s.yaml: %q not reported; got:\n%v", file, w, err)
			}
		}
	}
}
