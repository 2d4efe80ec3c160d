package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"pgregory.net/rapid"

	"github.com/replaylab/replaylab/compare"
	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
)

// seedCaseFiles writes the seed lab's three cases into dir and returns
// their paths and the cases.
func seedCaseFiles(t testing.TB, dir string) ([]string, []*missions.Case) {
	t.Helper()
	on, off := true, false
	specs := []struct {
		id string
		o  missions.Overrides
	}{
		{"timeout-then-success", missions.Overrides{StableKeys: &on}},
		{"timeout-then-success", missions.Overrides{StableKeys: &off}},
		{"failure-then-failure", missions.Overrides{}},
	}
	var paths []string
	var cases []*missions.Case
	for i, s := range specs {
		m, err := missions.BuiltIn().Get(s.id)
		if err != nil {
			t.Fatal(err)
		}
		c, err := missions.Run(m, m.Settings(s.o))
		if err != nil {
			t.Fatal(err)
		}
		b, err := export.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, string(rune('a'+i))+".json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		cases = append(cases, c)
	}
	return paths, cases
}

func captureRun(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = executeIO(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCompareCommandFormats(t *testing.T) {
	paths, cases := seedCaseFiles(t, t.TempDir())
	cmp := compare.Compare(cases)
	for i, p := range paths {
		cmp.Cases[i].Source = p
	}
	wantJSON, err := compare.CompareJSON(cmp)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		flags []string
		want  []byte
	}{
		// Not a terminal: the default width.
		{"text", nil, compare.CompareBrief(cmp, render.DefaultTextWidth, "add --all")},
		{"text width", []string{"--width", "64"}, compare.CompareBrief(cmp, 64, "add --all")},
		{"text all", []string{"--all"}, compare.CompareText(cmp, render.DefaultTextWidth)},
		{"markdown", []string{"--format", "markdown"}, compare.CompareMarkdown(cmp)},
		{"json", []string{"--format", "json"}, wantJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := captureRun(append(append([]string{"compare"}, paths...), tc.flags...)...)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			if out != string(tc.want) {
				t.Errorf("output differs from the export renderer:\n%s", out)
			}
		})
	}
	code, out, _ := captureRun(append([]string{"compare", "--width", "64"}, paths...)...)
	for _, line := range strings.Split(out, "\n") {
		if ansi.StringWidth(line) > 64 || code != 0 {
			t.Fatalf("exit %d; line wider than 64: %q", code, line)
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "first diverge at attempt 2") {
		t.Errorf("no divergence sentence in:\n%s", out)
	}
}

// The README's exercise exports six cases; compare's default text tells
// them in at most 50 lines at 80 columns: the conclusion, every case with
// its file, and the pairs that differ most, with --all for the rest.
func TestCompareBriefReadmeCases(t *testing.T) {
	t.Chdir(t.TempDir())
	if code, _, errs := captureRun("export", "timeout-then-success", "failure-then-failure", "--variants", "--dir", "cases"); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	paths, err := filepath.Glob(filepath.Join("cases", "*.json"))
	if err != nil || len(paths) != 6 {
		t.Fatalf("want the six cases, got %v (%v)", paths, err)
	}
	code, out, errs := captureRun(append([]string{"compare", "--width", "80"}, paths...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) > 50 {
		t.Errorf("%d lines, want at most 50:\n%s", len(lines), out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"Same words, different ledgers", "What differs most:", "add --all", "first diverge at attempt 2"} {
		if !strings.Contains(flat, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	for _, p := range paths {
		if !strings.Contains(out, p) {
			t.Errorf("the case file %s is not named in:\n%s", p, out)
		}
	}
	if strings.Count(out, "\n- ") != compare.BriefPairs {
		t.Errorf("want %d pairs listed:\n%s", compare.BriefPairs, out)
	}
	_, all, _ := captureRun(append([]string{"compare", "--width", "80", "--all"}, paths...)...)
	if n := strings.Count(all, "\n- "); n != 15 {
		t.Errorf("--all lists %d pairs, want all 15", n)
	}
}

func TestCompareCommandUsage(t *testing.T) {
	paths, _ := seedCaseFiles(t, t.TempDir())
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"compare", paths[0]}, "requires at least 2 arg(s)"},
		{[]string{"compare", paths[0], paths[1], "--format", "html"}, `--format: unknown format "html" (accepted: text, markdown, json)`},
		{[]string{"compare", paths[0], paths[1], "--width", "10"}, `invalid argument "10" for "--width" flag: accepted: a whole number of columns from 40`},
	}
	for _, tc := range tests {
		code, out, errs := captureRun(tc.args...)
		if code != exitBadInput || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errs, tc.want)
		}
	}
}

// A bad case file anywhere in the list stops compare with exit 2 and a
// message naming the file, before anything reaches standard output.
func TestCompareRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	paths, _ := seedCaseFiles(t, dir)
	good, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	newer := bytes.Replace(good, []byte(export.SchemaID), []byte("replaylab.case/v9"), 1)
	typed := bytes.Replace(good, []byte(`"effects": 1`), []byte(`"effects": "one"`), 1)
	badPolicy := bytes.Replace(good, []byte(`"policy": "naive"`), []byte(`"policy": "reckless"`), 1)
	tests := []struct {
		name string
		path string
		want string // a regular expression the error must match
	}{
		{"truncated", write("truncated.json", good[:len(good)/2]), `truncated\.json(:\d+:\d+)?: .*(truncated|invalid JSON)`},
		{"truncated after the object", write("cut.json", good[:len(good)-3]), `cut\.json(:\d+:\d+)?: .*(truncated|invalid JSON)`},
		{"mutated", write("mutated.json", bytes.Replace(good, []byte(`"events": [`), []byte(`"events": [,`), 1)), `mutated\.json:\d+:\d+: invalid JSON`},
		{"wrong type", write("typed.json", typed), `typed\.json:\d+:\d+: field ".*effects" holds a string; expected a whole number`},
		{"newer version", write("newer.json", newer), `newer\.json: case schema "replaylab.case/v9" is from a version this build does not read`},
		{"bad setting", write("policy.json", badPolicy), `policy\.json:\d+:\d+: field "settings\.policy" holds "reckless" \(accepted: naive, guarded\)`},
		{"empty", write("empty.json", nil), `empty\.json`},
		{"not a case", write("other.json", []byte(`{"hello": 1}`)), `other\.json: not a replaylab case`},
		{"missing", filepath.Join(dir, "nope.json"), `nope\.json: no such file`},
		{"directory", dir, `is a directory`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The bad file comes last, after good ones were read.
			code, out, errs := captureRun("compare", paths[0], paths[1], tc.path)
			if code != exitBadInput {
				t.Errorf("exit %d, want 2", code)
			}
			if out != "" {
				t.Errorf("printed on stdout before failing:\n%s", out)
			}
			if !regexp.MustCompile(tc.want).MatchString(errs) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Errorf("stderr = %q, want one line matching %s", errs, tc.want)
			}
		})
	}
}

// Whatever is cut from or changed in a case file, compare either reads it
// or fails with exit 2, naming the file, and prints nothing on stdout.
func TestCompareTruncatedAndMutatedFiles(t *testing.T) {
	dir := t.TempDir()
	paths, _ := seedCaseFiles(t, dir)
	good, err := os.ReadFile(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	rapid.Check(t, func(rt *rapid.T) {
		data := append([]byte(nil), good...)
		if rapid.Bool().Draw(rt, "truncate") {
			data = data[:rapid.IntRange(0, len(data)-1).Draw(rt, "length")]
		}
		for n := rapid.IntRange(0, 4).Draw(rt, "mutations"); n > 0 && len(data) > 0; n-- {
			i := rapid.IntRange(0, len(data)-1).Draw(rt, "at")
			data[i] = rapid.SampledFrom([]byte("{}[],:\"0a \\\x00\xff")).Draw(rt, "byte")
		}
		if err := os.WriteFile(bad, data, 0o644); err != nil {
			rt.Fatal(err)
		}
		code, out, errs := captureRun("compare", paths[0], bad, "--format", "json")
		switch code {
		case exitOK:
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil || errs != "" {
				rt.Fatalf("exit 0 with unreadable output (%v) or stderr %q", err, errs)
			}
		case exitBadInput:
			if out != "" {
				rt.Fatalf("stdout not empty on failure: %.200s", out)
			}
			if !strings.HasPrefix(errs, "replaylab: "+bad) {
				rt.Fatalf("error does not start with the file name: %q", errs)
			}
		default:
			rt.Fatalf("exit %d; stderr %q", code, errs)
		}
	})
}

// The command a write-up gives reproduces the case byte for byte.
func TestReproduceCommandReproduces(t *testing.T) {
	g := missions.Guarded
	ph := missions.KeyPayloadHash
	_, cases := seedCaseFiles(t, t.TempDir())
	m, err := missions.BuiltIn().Get("timeout-then-success")
	if err != nil {
		t.Fatal(err)
	}
	extra, err := missions.Run(m, m.Settings(missions.Overrides{Policy: &g, KeySource: &ph}))
	if err != nil {
		t.Fatal(err)
	}
	seeded := m.Settings(missions.Overrides{})
	seeded.Seed = 7
	other, err := missions.Run(m, seeded)
	if err != nil {
		t.Fatal(err)
	}
	budget := m.Settings(missions.Overrides{})
	budget.MaxAttempts, budget.Deadline = 1, 3
	budgeted, err := missions.Run(m, budget)
	if err != nil {
		t.Fatal(err)
	}
	if md, _ := render.WriteUp(budgeted); strings.Contains(string(md), "do not set") {
		t.Errorf("the write-up of a budgeted case says the run flags cannot set its budget:\n%s", md)
	}
	for _, c := range append(cases, extra, other, budgeted) {
		cmdline := render.ReproduceCommand(c)
		args := strings.Fields(strings.TrimPrefix(cmdline, "replaylab "))
		code, out, errs := captureRun(append(args, "--json")...)
		want, err := export.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if code != 0 || out != string(want) {
			t.Errorf("%s: exit %d, stderr %q; the case it prints differs from the original", cmdline, code, errs)
		}
	}
}

func TestRunFormats(t *testing.T) {
	m, err := missions.BuiltIn().Get("timeout-then-success")
	if err != nil {
		t.Fatal(err)
	}
	off := false
	c, err := missions.Run(m, m.Settings(missions.Overrides{StableKeys: &off}))
	if err != nil {
		t.Fatal(err)
	}
	writeUp, err := render.WriteUp(c)
	if err != nil {
		t.Fatal(err)
	}
	asJSON, err := export.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"run", "timeout-then-success", "--stable-keys=off"}
	for _, tc := range []struct {
		flags []string
		want  []byte
	}{
		{[]string{"--format", "markdown"}, writeUp},
		{[]string{"--format", "json"}, asJSON},
		{[]string{"--json"}, asJSON},
		{[]string{"--json", "--format", "json"}, asJSON},
	} {
		code, out, errs := captureRun(append(base, tc.flags...)...)
		if code != 0 || out != string(tc.want) {
			t.Errorf("%v: exit %d, stderr %q, output differs:\n%.300s", tc.flags, code, errs, out)
		}
	}
	// Only the documented words: an abbreviation or another case is
	// refused, with the word that was likely meant.
	for _, bad := range []string{"md", "Markdown", "TEXT", "txt"} {
		if code, _, errs := captureRun(append(base, "--format", bad)...); code != exitBadInput || !strings.Contains(errs, "did you mean") {
			t.Errorf("--format %s: exit %d, %q", bad, code, errs)
		}
	}
	for _, bad := range []string{"true", "ON", "False", "yes"} {
		if code, _, errs := captureRun("run", "timeout-then-success", "--stable-keys="+bad); code != exitBadInput || !strings.Contains(errs, "accepted: on, off") {
			t.Errorf("--stable-keys=%s: exit %d, %q", bad, code, errs)
		}
	}
	code, text, _ := captureRun(base...)
	if code != 0 || text == string(writeUp) || strings.HasPrefix(text, "{") {
		t.Errorf("default format is not the text summary:\n%.300s", text)
	}
	if code, out, errs := captureRun(append(base, "--json", "--format", "markdown")...); code != exitBadInput || out != "" || !strings.Contains(errs, "--json and --format markdown do not go together") {
		t.Errorf("conflicting formats: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, _, errs := captureRun(append(base, "--format", "pdf")...); code != exitBadInput || !strings.Contains(errs, "accepted: text, markdown, json") {
		t.Errorf("unknown format: exit %d, stderr %q", code, errs)
	}
}

func TestExportMarkdown(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := captureRun("export", "timeout-then-success", "--variants", "--format", "markdown", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	m, err := missions.BuiltIn().Get("timeout-then-success")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range m.Expect {
		c, err := missions.Run(m, m.Settings(e.When))
		if err != nil {
			t.Fatal(err)
		}
		want, err := render.WriteUp(c)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(export.FileName(m.ID, c.Settings), ".json") + ".md"
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%v (stdout: %s)", err, out)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not the write-up of its case", name)
		}
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(matches) != 0 {
		t.Errorf("markdown export also wrote JSON: %v", matches)
	}
	empty := t.TempDir()
	if code, _, errs := captureRun("export", "timeout-then-success", "--format", "text", "--dir", empty); code != exitBadInput || !strings.Contains(errs, "accepted: json, markdown") {
		t.Errorf("--format text: exit %d, stderr %q", code, errs)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("a refused export wrote %d files", len(entries))
	}
}
