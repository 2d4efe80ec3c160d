package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
)

// TestRunSummaryLedgerAfterAFailedObject: the "ledger after" column names
// the objects that stand. Once re_0001 has ended failed, the retry's row
// shows re_0002, not the failed re_0001.
func TestRunSummaryLedgerAfterAFailedObject(t *testing.T) {
	out := mustCLI(t, "run", "refund-pending-then-failed", "--stable-keys=off")
	var row []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "t3 ") {
			row = append(row, line)
			continue
		}
		if len(row) > 0 && strings.HasPrefix(line, "     ") {
			row = append(row, line)
			continue
		}
		if len(row) > 0 {
			break
		}
	}
	// Nothing else in the retry's row names re_0001: the ledger column
	// alone could.
	text := strings.Join(row, "\n")
	if len(row) == 0 || strings.Contains(text, "re_0001") || !strings.Contains(text, "re_0002\n") {
		t.Errorf("the retry's row should show re_0002 standing, not the failed re_0001:\n%s", text)
	}
}

// manyAttempts is a mission whose n attempts all commit and time out.
func manyAttempts(n int) string {
	var b strings.Builder
	b.WriteString("id: many\ntitle: Many\ngoal: Many.\nintents:\n  - id: a\n    op: refund\n    principal: p\n    payload: {o: \"1\"}\nschedule:\n")
	for range n {
		b.WriteString("  - attempt: a\n    fixture: timeout_after_commit\n")
	}
	b.WriteString("expect:\n  - effects: 1\n")
	return b.String()
}

// TestRunSummaryWorkGrowsWithTheRun: each row of the summary looks at the
// few objects it names, not at every object so far. Counted in
// allocations, not time: 2,000 attempts once took about 4 million.
func TestRunSummaryWorkGrowsWithTheRun(t *testing.T) {
	m, err := missions.Parse("many.yaml", []byte(manyAttempts(2000)))
	if err != nil {
		t.Fatal(err)
	}
	off := false
	c, err := missions.Run(m, m.Settings(missions.Overrides{StableKeys: &off}))
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1, func() { render.WriteSummary(io.Discard, c, render.DefaultTextWidth) })
	if limit := 100 * float64(len(c.Events)); allocs > limit {
		t.Errorf("the summary of %d events made %.0f allocations; want at most %.0f", len(c.Events), allocs, limit)
	}
}

// TestOutRefusesWhatIsNotAFile: --out moves a whole file into place, which
// replaces whatever is at the path. Given a link, --force replaced the
// link and left its target as it was (--out /dev/stdout turned the link
// into a file and printed nothing); given a device or a pipe, it replaced
// that (for root, /dev/full itself). Both are refused, with or without
// --force, and nothing is written.
func TestOutRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.json")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("target.json", link); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(dir, "pipe.json")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{link, link + " is a symbolic link (to target.json); a file written here would replace the link"},
		{pipe, pipe + " is a named pipe, not a file"},
	} {
		for _, force := range []bool{false, true} {
			args := []string{"run", "timeout-then-success", "--json", "--out", tt.path}
			if force {
				args = append(args, "--force")
			}
			code, out, errOut := cli(args...)
			if code != exitBadInput || out != "" || !strings.Contains(errOut, tt.want) {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(args, " "), code, out, errOut, tt.want)
			}
		}
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", info.Mode(), err)
	}
	if info, err := os.Lstat(pipe); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v %v", info.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target changed: %q", b)
	}
	assertNoTemp(t, dir)
	// The writer itself refuses too, whoever calls it.
	if err := atomicfile.WriteFile(pipe, []byte("x"), true); err == nil {
		t.Error("atomicfile.WriteFile replaced a named pipe")
	}
}

// TestEmptyNames: an empty mission id drew three unrelated suggestions,
// and an empty file name ": no such file".
func TestEmptyNames(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", ""}, "replaylab: the mission id is empty; give one (list them with: replaylab missions)\n"},
		{[]string{"replay", ""}, "replaylab: the file name is empty; give the path of a file\n"},
		{[]string{"validate", ""}, "replaylab: the file has problems\n"},
	}
	for _, tt := range tests {
		code, out, errOut := cli(tt.args...)
		if code != exitBadInput || errOut != tt.want {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
		if tt.args[0] == "validate" && out != "the file name is empty; give the path of a file\n" {
			t.Errorf("validate '': stdout %q", out)
		}
	}
}

// TestFileNamesArePrintedClean: errors were cleaned of escape sequences,
// but the lines that name a file that is fine were not, so a file name
// picked up by a glob could drive the terminal.
func TestFileNamesArePrintedClean(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(writeCase(t, dir, "timeout-then-success"))
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "\x1b]0;pwned\a\x1b[31mcase.json")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "\x1b[2Jout")
	for _, args := range [][]string{
		{"validate", name},
		{"replay", name},
		{"run", "timeout-then-success", "--out", filepath.Join(dir, "\x1b[31mrun.json")},
		{"export", "timeout-then-success", "--dir", outDir},
	} {
		code, out, errOut := cli(args...)
		if code != exitOK {
			t.Errorf("%q: exit %d\n%s%s", args, code, out, errOut)
		}
		if strings.ContainsAny(out+errOut, "\x1b\a") {
			t.Errorf("%q printed control characters: %q %q", args, out, errOut)
		}
	}
}
