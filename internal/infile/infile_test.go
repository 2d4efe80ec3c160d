package infile_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/replaylab/replaylab/internal/infile"
)

// A file is read whole up to its limit and refused past it, with what
// was expected named; a directory is named as one.
func TestReadHoldsItsLimit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := infile.Read(path, 5, "a note", time.Second); err != nil || string(data) != "12345" {
		t.Errorf("at the limit: %q %v", data, err)
	}
	if _, err := infile.Read(path, 4, "a note", time.Second); err == nil || !strings.Contains(err.Error(), "larger than 4 bytes, the most a note may hold") {
		t.Errorf("past the limit: %v", err)
	}
	if _, err := infile.Read(dir, 4, "a note", time.Second); err == nil || !strings.Contains(err.Error(), "is a directory; expected a note") {
		t.Errorf("a directory: %v", err)
	}
	if data, tooBig, err := infile.ReadAtMost(strings.NewReader("abc"), 2); string(data) != "ab" || !tooBig || err != nil {
		t.Errorf("ReadAtMost: %q %v %v", data, tooBig, err)
	}
}

// A named pipe nothing opens to write is given up after the wait, with
// words that say so, rather than waited on for ever.
func TestANamedPipeNobodyWritesIsGivenUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := infile.Open(path, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "is a named pipe that nothing opened to write") {
		t.Errorf("got %v", err)
	}
	// The open left waiting is let go.
	if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
	}
}
