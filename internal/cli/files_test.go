package cli

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAssertNoTempSeesLeftovers: the leftover check knows the temporary
// file names the writer really uses.
func TestAssertNoTempSeesLeftovers(t *testing.T) {
	dir := t.TempDir()
	f, err := os.CreateTemp(dir, ".replaylab-*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := leftoverTemps(t, dir); len(got) != 1 || got[0] != filepath.Base(f.Name()) {
		t.Errorf("leftovers %v, want [%s]", got, filepath.Base(f.Name()))
	}
}

// TestWriteErrorsSayWhatIsInTheWay: a write that cannot happen names the
// file asked for and what stands in the way, exits 2, never mentions the
// temporary file and leaves nothing behind.
func TestWriteErrorsSayWhatIsInTheWay(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"--out in a missing directory", []string{"run", "timeout-then-success", "--out", filepath.Join(dir, "missing", "case.txt")},
			"the directory " + filepath.Join(dir, "missing") + " does not exist"},
		{"--out is a directory", []string{"run", "timeout-then-success", "--out", sub},
			sub + " is a directory; give the path of a file"},
		{"--out is a directory, --force", []string{"run", "timeout-then-success", "--out", sub, "--force"},
			sub + " is a directory; give the path of a file"},
		{"--dir is a file", []string{"export", "timeout-then-success", "--dir", file},
			"--dir " + file + " is a file; expected a directory"},
		{"--dir under a file", []string{"export", "timeout-then-success", "--dir", filepath.Join(file, "cases")},
			"--dir " + filepath.Join(file, "cases") + ": not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := cli(tt.args...)
			if code != exitBadInput || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr %q does not say %q", errOut, tt.want)
			}
			if strings.Contains(errOut, ".replaylab-") || strings.Contains(errOut, ".tmp") || strings.Contains(errOut, "lstat") || strings.Contains(errOut, "rename") {
				t.Errorf("stderr %q names a system call or the temporary file", errOut)
			}
		})
	}
	for _, d := range []string{dir, sub} {
		assertNoTemp(t, d)
	}
	if data, _ := os.ReadFile(file); string(data) != "mine" {
		t.Error("a refused write changed a file")
	}
}

// TestReadOnlyDirectory: a directory the user may not write in is named,
// with the reason, and nothing is left in it.
func TestReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		// Root writes in read-only directories, so the test runs again,
		// in a copy of this test binary, as an ordinary user.
		asUnprivileged(t, "TestReadOnlyDirectory")
		return
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"export", "timeout-then-success", "--dir", dir},
		{"run", "timeout-then-success", "--out", filepath.Join(dir, "case.txt")},
	} {
		code, out, errOut := cli(args...)
		if code != exitBadInput || out != "" || !strings.Contains(errOut, "cannot write in the directory "+dir+": permission denied") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		if strings.Contains(errOut, ".replaylab-") {
			t.Errorf("%v: stderr names the temporary file: %q", args, errOut)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left in the read-only directory: %v", entries)
	}
}

// TestReplayChecksEveryFileFirst: when one of several case files cannot be
// read, replay says which (all of them) and prints no verdict for the
// others: nothing is half-reported on standard output.
func TestReplayChecksEveryFileFirst(t *testing.T) {
	dir := t.TempDir()
	good := writeCase(t, dir, "timeout-then-success")
	bad1 := filepath.Join(dir, "bad1.json")
	bad2 := filepath.Join(dir, "bad2.json")
	if err := os.WriteFile(bad1, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad2, []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli("replay", good, bad1, bad2)
	if code != exitBadInput || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and nothing on stdout", code, out, errOut)
	}
	for _, p := range []string{bad1, bad2} {
		if !strings.Contains(errOut, p) {
			t.Errorf("stderr does not name %s:\n%s", p, errOut)
		}
	}
	if code, out, _ := cli("replay", good, good); code != exitOK || strings.Count(out, ": identical\n") != 2 {
		t.Errorf("two good files: exit %d, stdout %q", code, out)
	}
}

// TestCompareNamesEveryBadFile: compare reports every file it cannot read,
// not only the first.
func TestCompareNamesEveryBadFile(t *testing.T) {
	dir := t.TempDir()
	good := writeCase(t, dir, "timeout-then-success")
	bad1 := filepath.Join(dir, "bad1.json")
	if err := os.WriteFile(bad1, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	code, out, errOut := cli("compare", bad1, good, missing)
	if code != exitBadInput || out != "" || !strings.Contains(errOut, bad1) || !strings.Contains(errOut, missing+": no such file") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestValidateRefusesTakenIDs: validate says a file is fine exactly when
// --missions takes it, by the catalog's one rule: an id is used once, and
// a file that holds a built-in mission unchanged is that mission. Each
// folder goes through both commands, which must agree.
func TestValidateRefusesTakenIDs(t *testing.T) {
	builtIn, err := os.ReadFile(filepath.Join("missions", "catalog", "timeout-then-success.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	edited := []byte(strings.Replace(string(builtIn), "title: Timeout, then success", "title: My timeout", 1))
	taken := `: mission id "timeout-then-success" is already used by catalog/timeout-then-success.yaml; mission ids must be unique: give this one another id`
	for _, tt := range []struct {
		name  string
		files map[string][]byte // written in name order
		code  int
		says  string // after the path of the last file
	}{
		{"an unchanged copy of a built-in mission", map[string][]byte{"copy.yaml": builtIn}, exitOK, ""},
		{"the copy with a comment on top", map[string][]byte{"copy.yaml": append([]byte("# mine\n"), builtIn...)}, exitOK, ""},
		{"an edited copy", map[string][]byte{"edited.yaml": edited}, exitBadInput, taken},
		{"two files, one id", map[string][]byte{"a.yaml": userMission(t, "twin"), "b.yaml": bytes.Replace(userMission(t, "twin"), []byte("My "), []byte("Our "), 1)},
			exitBadInput, `: mission id "twin" is already used by `},
	} {
		dir := t.TempDir()
		var paths []string
		for _, name := range slices.Sorted(maps.Keys(tt.files)) {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, tt.files[name], 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		vcode, vout, verr := cli(append([]string{"validate"}, paths...)...)
		mcode, mout, merr := cli("missions", "--missions", dir)
		if vcode != tt.code || mcode != tt.code {
			t.Errorf("%s: validate exits %d, missions --missions %d; want %d for both\n%s%s\n%s%s", tt.name, vcode, mcode, tt.code, vout, verr, mout, merr)
		}
		if tt.says == "" {
			if n := strings.Count(mout, "\n  timeout-then-success"); n > 1 {
				t.Errorf("%s: the mission is listed %d times:\n%s", tt.name, n, mout)
			}
			continue
		}
		last := filepath.Base(paths[len(paths)-1])
		if !strings.Contains(vout, paths[len(paths)-1]+tt.says) {
			t.Errorf("%s: validate lacks %q:\n%s", tt.name, last+tt.says, vout)
		}
		if !strings.Contains(merr, last+tt.says) {
			t.Errorf("%s: missions --missions lacks %q:\n%s", tt.name, last+tt.says, merr)
		}
	}
}

// TestEndlessAndPipedFiles: a file that never ends is refused at the size
// limit instead of being read until memory runs out, and a pipe (what a
// shell's <(…) gives) is read like a file.
func TestEndlessAndPipedFiles(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Fatal("this test needs /dev/zero, a file that never ends:", err)
	}
	for _, cmd := range []string{"replay", "validate", "compare"} {
		args := []string{cmd, "/dev/zero"}
		if cmd == "compare" {
			args = append(args, "/dev/zero")
		}
		code, out, errOut := cli(args...)
		if code != exitBadInput || out != "" && cmd != "validate" || !strings.Contains(out+errOut, "the file is larger than") {
			t.Errorf("%s /dev/zero: exit %d, stdout %q, stderr %q", cmd, code, out, errOut)
		}
	}
	dir := t.TempDir()
	good := writeCase(t, dir, "timeout-then-success")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal("this test needs a named pipe:", err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(data)
		f.Close()
	}()
	if code, out, errOut := cli("replay", fifo); code != exitOK || out != fifo+": identical\n" {
		t.Errorf("replay of a pipe: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// asUnprivileged runs one test of this binary again as the unprivileged
// user nobody (uid and gid 65534) and fails if it fails there. The binary
// is copied where that user may run it.
func asUnprivileged(t *testing.T, test string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "replaylab-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "replaylab.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+test+"$", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		// The machine does not let root start a process as another user
		// (a user namespace without that uid, say): nothing to run here.
		t.Skipf("cannot start %s as uid 65534 here: %v", test, err)
	}
	if err != nil {
		t.Fatalf("%s as uid 65534: %v\n%s", test, err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("%s as uid 65534 did not pass:\n%s", test, out)
	}
}

// TestWriteCutShortLeavesNothing: a write the system cuts short (here the
// file size limit, as a full disk would) fails, and leaves neither a part
// of the file at its path nor a temporary file beside it, for a new file
// and for one --force would replace. The limit is set in a copy of this
// test binary, so the tests around it write freely.
func TestWriteCutShortLeavesNothing(t *testing.T) {
	if dir := os.Getenv("REPLAYLAB_FSIZE_DIR"); dir != "" {
		writeCutShort(t, dir)
		return
	}
	dir := t.TempDir()
	old := filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestWriteCutShortLeavesNothing$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "REPLAYLAB_FSIZE_DIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("under a file size limit: %v\n%s", err, out)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "old.json" {
		t.Errorf("files left behind: %v", entries)
	}
	if b, _ := os.ReadFile(old); string(b) != "keep me" {
		t.Errorf("the file --force would replace now holds %d bytes", len(b))
	}
}

// writeCutShort runs in the copy: files may grow to 4 KiB at most, and
// the signal that a larger write would raise is ignored, so the write
// fails with an error instead.
func writeCutShort(t *testing.T, dir string) {
	signal.Ignore(syscall.SIGXFSZ)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = 4 << 10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("x"), 64<<10)
	if err := writeFileAtomic(filepath.Join(dir, "new.json"), data, false); err == nil {
		t.Error("a new file past the size limit was written")
	}
	if err := writeFileAtomic(filepath.Join(dir, "old.json"), data, true); err == nil {
		t.Error("a replacement past the size limit was written")
	}
}

// A named pipe nothing writes to does not hang validate, replay, compare
// or check: the wait for a writer is bounded, and the message says why.
func TestLonelyPipeDoesNotHang(t *testing.T) {
	old := pipeWait
	pipeWait = 200 * time.Millisecond
	defer func() { pipeWait = old }()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "lonely.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal("this test needs a named pipe:", err)
	}
	good := writeCase(t, dir, "timeout-then-success")
	for _, args := range [][]string{{"validate", fifo}, {"replay", fifo}, {"compare", fifo, good}, {"check", fifo}} {
		done := make(chan struct{})
		var code int
		var out, errOut string
		go func() {
			code, out, errOut = cli(args...)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%v hangs on a named pipe nothing writes to", args)
		}
		if code != exitBadInput || !strings.Contains(out+errOut, "named pipe that nothing opened to write") {
			t.Errorf("%v: exit %d, %q %q", args, code, out, errOut)
		}
	}
}

// A signal that comes while a file is written does not end the process
// half way: the write finishes whole, then the command stops with the
// shell's code for the signal and says so.
func TestSignalDuringAWriteWaitsForIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "case.json")
	data := bytes.Repeat([]byte("x"), 1<<20)
	err := heldSignals(func() error {
		if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // the signal arrives meanwhile
		return writeFileAtomic(path, data, false)
	})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 128+int(syscall.SIGTERM) || !strings.Contains(err.Error(), "written whole") {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, data) {
		t.Fatalf("the file holds %d bytes, want %d", len(b), len(data))
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("left beside it: %v", entries)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := writeFileAtomic(path, []byte("one"), false); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(path, []byte("two"), false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("overwrite without force: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Fatalf("content %q", b)
	}
	if err := writeFileAtomic(path, []byte("three"), true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "three" {
		t.Fatalf("content %q", b)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", info.Mode())
	}
	if err := writeFileAtomic(filepath.Join(dir, "missing", "f.json"), []byte("x"), false); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
	assertNoTemp(t, dir)
}
