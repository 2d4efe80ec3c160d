package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/export"
)

func TestExploreCommand(t *testing.T) {
	var out, errb bytes.Buffer
	code := executeIO([]string{"explore", "timeout-then-success", "--stable-keys", "off", "--policy", "naive", "--contract", "v1", "--depth", "3"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{
		"explore timeout-then-success: 4 fixtures, up to 3 attempts per intent, 1 setting",
		"stable keys off, policy naive, contract v1",
		"84 schedules",
		"duplicate       2 attempts: timeout_after_commit, success (refund-1042)",
		"hidden_effect   1 attempt: timeout_after_commit (refund-1042)",
		"phantom         no schedule up to depth 3 reaches it",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	code = executeIO([]string{"explore", "timeout-then-success", "--stable-keys", "on,off", "--policy", "naive", "--contract", "v1"}, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "duplicate under stable keys off, policy naive, contract v1\n    stable keys on: removes it (no schedule up to depth 3 reaches it)") {
		t.Errorf("exit %d; the cheapest fix for the duplicate is stable keys on:\n%s", code, out.String())
	}
}

func TestExploreJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := executeIO([]string{"explore", "timeout-then-success", "--json", "--depth", "2"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc struct {
		Schema   string
		Depth    int
		Settings []struct {
			Schedules int64
			Verdicts  []struct {
				Verdict  string
				Found    bool
				Schedule []struct{ Intent, Fixture string }
				Fixes    []string
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "replaylab.exploration/v1" || doc.Depth != 2 || len(doc.Settings) != 12 {
		t.Fatalf("schema %q depth %d settings %d", doc.Schema, doc.Depth, len(doc.Settings))
	}
	found := 0
	for _, s := range doc.Settings {
		if s.Schedules != 4+16 {
			t.Errorf("%d schedules, want 20", s.Schedules)
		}
		for _, v := range s.Verdicts {
			if v.Found {
				found++
				if len(v.Schedule) == 0 || len(v.Fixes) == 0 {
					t.Errorf("%s found with schedule %v and fixes %v", v.Verdict, v.Schedule, v.Fixes)
				}
			}
		}
	}
	if found == 0 {
		t.Error("no bad verdict found under any setting")
	}
}

// TestExploreOutIsAMission: what --out writes validates, runs and keeps
// its promise; a second run refuses to overwrite without --force.
func TestExploreOutIsAMission(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "found")
	var out, errb bytes.Buffer
	args := []string{"explore", "timeout-then-success", "--stable-keys", "off", "--policy", "naive", "--contract", "v1", "--out", dir}
	if code := executeIO(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	path := filepath.Join(dir, "timeout-then-success-duplicate-keys-off-naive-v1.yaml")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "open it: replaylab lab timeout-then-success-duplicate-keys-off-naive-v1 --missions "+dir+" --stable-keys=off --policy=naive") {
		t.Errorf("no command to open it:\n%s", out.String())
	}
	out.Reset()
	if code := executeIO([]string{"validate", path}, &out, &errb); code != 0 {
		t.Errorf("validate: exit %d: %s", code, errb.String())
	}
	out.Reset()
	code := executeIO([]string{"run", "timeout-then-success-duplicate-keys-off-naive-v1", "--missions", dir, "--stable-keys=off", "--fail-on", "duplicate"}, &out, &errb)
	if code != 1 {
		t.Errorf("run --fail-on duplicate: exit %d, want 1 (the duplicate is reproduced)\n%s", code, out.String())
	}
	errb.Reset()
	if code := executeIO(args, &out, &errb); code != 2 || !strings.Contains(errb.String(), "exists") {
		t.Errorf("a second --out: exit %d, %s; want 2 and a refusal to overwrite", code, errb.String())
	}
	if code := executeIO(append(args, "--force"), &out, &errb); code != 0 {
		t.Errorf("--force: exit %d", code)
	}
}

func TestExploreBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "m.yaml"), []byte("id: broken\ntitle: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"explore", "timeout-then-success", "--faults", "sucess"}, "did you mean success?"},
		{[]string{"explore", "timeout-then-success", "--faults", "nope"}, "accepted: failure_before_commit"},
		{[]string{"explore", "timeout-then-success", "--depth", "13"}, `invalid argument "13" for "--depth" flag: accepted: a whole number from 1 to 12`},
		{[]string{"explore", "timeout-then-success", "--depth", "0"}, `"0" for "--depth"`},
		{[]string{"explore", "timeout-then-success", "--depth", "0x3"}, `"0x3" for "--depth"`},
		{[]string{"explore", "timeout-then-success", "--out", "   "}, "--out is empty"},
		{[]string{"explore", "timeout-then-success", "--policy", "carefull"}, "--policy: unknown policy"},
		{[]string{"explore", "timeout-then-success", "--stable-keys", "maybe"}, "accepted: on, off"},
		{[]string{"explore", "timeout-then-success", "--contract", "v3"}, "accepted: v1, v2, none"},
		{[]string{"explore", "timeout-then-success", "--max-schedules", "0"}, `"0" for "--max-schedules" flag: accepted: a whole number from 1`},
		{[]string{"explore", "no-such-mission"}, "no-such-mission"},
		{[]string{"explore", "broken", "--missions", bad}, "m.yaml"},
		{[]string{"explore"}, "usage: replaylab explore MISSION"},
	} {
		var out, errb bytes.Buffer
		code := executeIO(tt.args, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
}

// TestExploreInterrupted: an exploration stopped as Ctrl-C stops it
// prints what it found so far and exits 130.
func TestExploreInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := executeContext(ctx, []string{"explore", "timeout-then-success", "--depth", "9", "--max-schedules", "100000000"}, &out, &errb)
	if code != 130 {
		t.Fatalf("exit %d, want 130: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "interrupted: the report holds what was found so far") || !strings.Contains(out.String(), "hidden_effect   1 attempt") {
		t.Errorf("no partial report:\n%s", out.String())
	}
}

// TestExploreOutWithJSON: with --json, standard output is the report
// alone, whatever --out writes; the files and how to open them are said on
// standard error.
func TestExploreOutWithJSON(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "found")
	var out, errb bytes.Buffer
	code := executeIO([]string{"explore", "timeout-then-success", "--stable-keys", "off", "--policy", "naive", "--contract", "v1", "--json", "--out", dir}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("standard output is not JSON: %v\n%s", err, out.String())
	}
	if !strings.Contains(errb.String(), "wrote "+dir) {
		t.Errorf("standard error does not say what was written: %q", errb.String())
	}
}

// TestExploreOutRefusedBeforeRunning: a directory that cannot be written
// is refused before the exploration, with nothing on standard output.
func TestExploreOutRefusedBeforeRunning(t *testing.T) {
	file := filepath.Join(t.TempDir(), "afile")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := executeIO([]string{"explore", "timeout-then-success", "--out", filepath.Join(file, "sub")}, &out, &errb)
	if code != 2 || out.Len() != 0 || !strings.Contains(errb.String(), "not a directory") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, and why", code, out.String(), errb.String())
	}
}

// TestV1CaseFilesStillWork: a case written in the first format is
// validated, replayed (identical) and compared by the command line.
func TestV1CaseFilesStillWork(t *testing.T) {
	dir := t.TempDir()
	mustCLI(t, "export", "timeout-then-success", "--variants", "--dir", dir)
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) < 2 {
		t.Fatalf("exported %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// As version 1 wrote it: its schema id, and none of what
		// version 2 added.
		c, err := export.Unmarshal(f, data)
		if err != nil {
			t.Fatal(err)
		}
		if data, err = export.Marshal(export.AsVersion(c, 1)); err != nil {
			t.Fatal(err)
		}
		data = bytes.Replace(data, []byte(`"schema": "`+export.SchemaID+`"`), []byte(`"schema": "`+export.SchemaV1+`"`), 1)
		if bytes.Contains(data, []byte(`"belief": "failed",\n      "effects"`)) {
			t.Fatal("the file still has events' beliefs")
		}
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	if code := executeIO(append([]string{"replay"}, files...), &out, &errb); code != 0 || strings.Count(out.String(), ": identical") != len(files) {
		t.Errorf("replay of v1 files: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := executeIO(append([]string{"compare"}, files...), &out, &errb); code != 0 || !strings.Contains(out.String(), "stable keys on") {
		t.Errorf("compare of v1 files: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := executeIO(append([]string{"validate"}, files...), &out, &errb); code != 0 {
		t.Errorf("validate of v1 files: exit %d\n%s%s", code, out.String(), errb.String())
	}
}
