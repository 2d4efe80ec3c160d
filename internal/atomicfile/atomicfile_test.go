package atomicfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/replaylab/replaylab/internal/atomicfile"
)

// TestWriteErrorsNameWhatIsInTheWay: the writers' errors name the file or
// directory the caller asked for and the reason, never the temporary file
// or the system call.
func TestWriteErrorsNameWhatIsInTheWay(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error, want string) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not say %q", what, err, want)
		}
		for _, leak := range []string{".replaylab-", ".tmp", "open ", "mkdir ", "rename ", "link "} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%s: %q mentions %q", what, err, leak)
			}
		}
	}
	check("WriteFile in a missing directory", atomicfile.WriteFile(filepath.Join(dir, "missing", "x.json"), nil, false),
		"the directory "+filepath.Join(dir, "missing")+" does not exist")
	check("WriteFile under a file", atomicfile.WriteFile(filepath.Join(file, "x.json"), nil, false),
		"cannot write in the directory "+file+": not a directory")
	check("WriteFile onto a directory", atomicfile.WriteFile(sub, nil, true), sub+" is a directory")
	_, err := atomicfile.WriteAllNew(filepath.Join(file, "cases"), []atomicfile.File{{Path: "x.json"}})
	check("WriteAllNew under a file", err, "cannot create the directory "+filepath.Join(file, "cases")+": not a directory")
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the directory holds %d entries after failed writes, want 2", len(entries))
	}
}

// New files get 0666 less the umask, as the shell's do; a replaced file
// keeps its mode; a read-only file is not replaced. The umask is set for a
// copy of this test binary, which reads it at start.
func TestWriteModes(t *testing.T) {
	if dir := os.Getenv("REPLAYLAB_UMASK_DIR"); dir != "" {
		fresh := filepath.Join(dir, "new.json")
		if err := atomicfile.WriteFile(fresh, []byte("{}"), false); err != nil {
			t.Fatal(err)
		}
		if info, _ := os.Stat(fresh); info.Mode().Perm() != 0o640 {
			t.Errorf("a new file under umask 027 is %04o, want 0640", info.Mode().Perm())
		}
		private := filepath.Join(dir, "private.json")
		if err := atomicfile.WriteFile(private, []byte("{}"), true); err != nil {
			t.Fatal(err)
		}
		if info, _ := os.Stat(private); info.Mode().Perm() != 0o600 {
			t.Errorf("a 0600 file replaced with force is %04o, want 0600", info.Mode().Perm())
		}
		locked := filepath.Join(dir, "locked.json")
		if err := atomicfile.WriteFile(locked, []byte("{}"), true); err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("a read-only file replaced with force: %v", err)
		}
		if b, _ := os.ReadFile(locked); string(b) != "keep" {
			t.Errorf("the read-only file now holds %q", b)
		}
		return
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "private.json"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "locked.json"), []byte("keep"), 0o444); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestWriteModes$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "REPLAYLAB_UMASK_DIR="+dir)
	old := syscall.Umask(0o027)
	out, err := cmd.CombinedOutput()
	syscall.Umask(old)
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("under umask 027: %v\n%s", err, out)
	}
}

// WriteAll writes every file or none of the new ones: a file in the way
// (as a racing export makes) or a write the system cuts short (a full
// disk) leaves the directory as it was.
func TestWriteAllIsAllOrNothing(t *testing.T) {
	if dir := os.Getenv("REPLAYLAB_WRITEALL_DIR"); dir != "" {
		signal.Ignore(syscall.SIGXFSZ)
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatal(err)
		}
		lim.Cur = 4 << 10
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatal(err)
		}
		var files []atomicfile.File
		for i := 0; i < 6; i++ {
			files = append(files, atomicfile.File{Path: filepath.Join(dir, fmt.Sprintf("small-%d.json", i)), Data: []byte("{}")})
		}
		files = append(files, atomicfile.File{Path: filepath.Join(dir, "big.json"), Data: bytes.Repeat([]byte("x"), 64<<10)})
		if err := atomicfile.WriteAll(files, false); err == nil || !strings.Contains(err.Error(), "nothing was written") {
			t.Errorf("past the size limit: %v", err)
		}
		return
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "c.json")
	if err := os.WriteFile(in, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	var files []atomicfile.File
	for _, n := range []string{"a", "b", "c", "d"} {
		files = append(files, atomicfile.File{Path: filepath.Join(dir, n+".json"), Data: []byte(`{"mine":true}`)})
	}
	err := atomicfile.WriteAll(files, false)
	if !errors.Is(err, atomicfile.ErrExists) || !strings.Contains(err.Error(), "c.json") {
		t.Fatalf("a file in the way: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "c.json" {
		t.Fatalf("left behind: %v", entries)
	}
	if b, _ := os.ReadFile(in); string(b) != "theirs" {
		t.Fatalf("the file in the way now holds %q", b)
	}
	// With force every file is written, the one in the way replaced.
	if err := atomicfile.WriteAll(files, true); err != nil {
		t.Fatal(err)
	}
	entries, _ = os.ReadDir(dir)
	if len(entries) != 4 {
		t.Fatalf("with force: %v", entries)
	}
	// A full disk, in a copy of this test binary under a file size limit.
	full := t.TempDir()
	self, _ := os.Executable()
	cmd := exec.Command(self, "-test.run=^TestWriteAllIsAllOrNothing$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "REPLAYLAB_WRITEALL_DIR="+full)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("under a file size limit: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(full); len(entries) != 0 {
		t.Fatalf("a cut-short export left %v", entries)
	}
}

// WriteAllNew places every file under its name or a free numbered one,
// and a write the system cuts short leaves none of them.
func TestWriteAllNew(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.json"), []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths, err := atomicfile.WriteAllNew(dir, []atomicfile.File{{Path: "a.json", Data: []byte("1")}, {Path: "b.json", Data: []byte("2")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || filepath.Base(paths[0]) != "a-2.json" || filepath.Base(paths[1]) != "b.json" {
		t.Fatalf("paths %v", paths)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.json")); string(b) != "theirs" {
		t.Fatal("a file in the way was replaced")
	}
}
