package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplayIdentical(t *testing.T) {
	dir := t.TempDir()
	mustCLI(t, "export", "timeout-then-success", "timeout-before-commit", "--variants", "--dir", dir)
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(paths) < 4 {
		t.Fatalf("only %d case files", len(paths))
	}
	out := mustCLI(t, append([]string{"replay"}, paths...)...)
	if n := strings.Count(out, ": identical"); n != len(paths) {
		t.Errorf("%d of %d identical:\n%s", n, len(paths), out)
	}
	// A case with another seed replays identically too, and validates.
	seeded := writeCase(t, t.TempDir(), "timeout-then-success", "--seed", "42", "--stable-keys=off")
	if out := mustCLI(t, "replay", seeded); !strings.Contains(out, "identical") {
		t.Errorf("seeded replay: %s", out)
	}
	if out := mustCLI(t, "validate", seeded); !strings.Contains(out, "ok (case of mission timeout-then-success") || !strings.Contains(out, "--seed=42") {
		t.Errorf("validate of a case: %s", out)
	}
}

// TestReplayDifference edits a case file and expects exit 1 with the first
// difference in words.
func TestReplayDifference(t *testing.T) {
	tests := []struct {
		name string
		edit func(doc map[string]any)
		want []string
	}{
		{"outcome effects", func(d map[string]any) { d["outcome"].(map[string]any)["effects"] = 3 },
			[]string{`the outcome, field "effects": the case file says 3; the replay gives 2`}},
		{"a verdict", func(d map[string]any) {
			d["outcome"].(map[string]any)["verdicts"].([]any)[0].(map[string]any)["verdict"] = "exactly_once"
		}, []string{`the outcome for intent refund-1042, field "verdict": the case file says "exactly_once"; the replay gives "duplicate"`}},
		{"an event's effect count", func(d map[string]any) {
			for _, e := range d["events"].([]any) {
				ev := e.(map[string]any)
				if ev["kind"] == "attempt" && ev["attempt"] == float64(2) {
					ev["effects"] = 1
				}
			}
		}, []string{"event", "attempt 2 for refund-1042", `field "effects": the case file says 1; the replay gives 2`}},
		{"a missing event", func(d map[string]any) {
			evs := d["events"].([]any)
			d["events"] = evs[:len(evs)-1]
		}, []string{"the number of events"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeCase(t, t.TempDir(), "timeout-then-success", "--stable-keys=off")
			data, _ := os.ReadFile(path)
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			tt.edit(doc)
			// Keep "schema" first, as the format requires.
			b, _ := json.Marshal(doc)
			b = append([]byte(`{"schema":"replaylab.case/v3",`), bytes.TrimPrefix(b, []byte(`{`))...)
			b = bytes.Replace(b, []byte(`,"schema":"replaylab.case/v3"`), nil, 1)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := cli("replay", path)
			if code != exitVerdict {
				t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
			}
			if !strings.Contains(out, "differs from its replay") {
				t.Errorf("stdout %q", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	path := writeCase(t, dir, "timeout-then-success")
	data, _ := os.ReadFile(path)
	files := map[string]struct {
		data []byte
		want string
	}{
		"truncated.json": {data[:len(data)/3], "truncated"},
		"future.json":    {bytes.Replace(data, []byte("replaylab.case/v3"), []byte("replaylab.case/v7"), 1), "from a version this build does not read"},
		"mission.yaml":   {userMission(t, "x"), "is a mission file (mission x), not a case"},
		"bad-step.json":  {bytes.Replace(data, []byte(`"attempt": "refund-1042"`), []byte(`"attempt": "refund-9"`), 1), "refund-9"},
	}
	for name, f := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := cli("replay", p)
		if code != exitBadInput || !strings.Contains(errOut, name) || !strings.Contains(errOut, f.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 mentioning %q", name, code, errOut, f.want)
		}
	}
	code, _, errOut := cli("replay", filepath.Join(dir, "absent.json"))
	if code != exitBadInput || !strings.Contains(errOut, "absent.json: no such file") {
		t.Errorf("absent: exit %d, %q", code, errOut)
	}
}

// TestReplayNullPart: a case file whose events, ledger or outcome were
// replaced by null is reported, never a crash.
func TestReplayNullPart(t *testing.T) {
	for _, part := range []string{"events", "ledger", "outcome"} {
		t.Run(part, func(t *testing.T) {
			path := writeCase(t, t.TempDir(), "timeout-then-success")
			data, _ := os.ReadFile(path)
			var doc map[string]json.RawMessage
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			start := bytes.Index(data, []byte(`"`+part+`": `))
			end := start + len(part) + 4 + len(doc[part])
			edited := append(append(append([]byte{}, data[:start]...), []byte(`"`+part+`": null`)...), data[end:]...)
			if err := os.WriteFile(path, edited, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := cli("replay", path)
			if code != exitVerdict && code != exitBadInput {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			if !strings.Contains(out+errOut, part) {
				t.Errorf("the message does not name %s:\n%s%s", part, out, errOut)
			}
		})
	}
}

// TestReplayNamesTheFirstDifferenceInReadingOrder: the first difference is
// the first a reader of the file meets, fields in the order the file has
// them: an edited fixture is named as the fixture, not as the effect count
// that changed with it (which sorts first by name).
func TestReplayNamesTheFirstDifferenceInReadingOrder(t *testing.T) {
	path := writeCase(t, t.TempDir(), "timeout-then-success")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The second scheduled attempt's fixture, in the mission part.
	edited := strings.Replace(string(data), `"fixture": "success"`, `"fixture": "failure_before_commit"`, 1)
	if edited == string(data) {
		t.Fatal("the case has no success fixture to edit")
	}
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := cli("replay", path)
	want := `first difference: event 6 (tick 1, attempt 2 for refund-1042), field "fixture": the case file says "success"; the replay gives "failure_before_commit"`
	if code != exitVerdict || !strings.Contains(out, want) {
		t.Errorf("exit %d, stdout %q; want %q", code, out, want)
	}
}
