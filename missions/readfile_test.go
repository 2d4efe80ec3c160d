package missions

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file that is not UTF-8 is refused at the line of the first bad byte.
func TestParseNotUTF8(t *testing.T) {
	_, err := Parse("m.yaml", []byte("id: x\ntitle: caf\xe9\n"))
	var fe *FileError
	if !errors.As(err, &fe) || fe.Line != 2 || !strings.Contains(err.Error(), "not UTF-8") {
		t.Fatalf("got %v; want m.yaml:2 and the words not UTF-8", err)
	}
}

// ReadFS reads through the size limit: a device without end is refused,
// a directory is named as one.
func TestReadFileLimits(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFS(os.DirFS(dir), "sub.yaml", "sub.yaml"); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	link := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFS(os.DirFS(dir), "zero.yaml", link); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("an endless device: %v", err)
	}
}

// Validate bounds what a case file's mission may ask of the runner.
func TestValidateBounds(t *testing.T) {
	m := *BuiltIn().Missions[0]
	step := m.Schedule[0]
	many := make([]Step, MaxWorkers+1)
	for i := range many {
		many[i] = step
	}
	m.Schedule = []Step{{Together: many}}
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "together must list from 2 to 8 attempts") {
		t.Errorf("a together of %d: %v", len(many), err)
	}
}

// The digest binds every part of a request unambiguously: a field value
// that looks like two fields is not two fields.
func TestDigestIsUnambiguous(t *testing.T) {
	a := Digest("refund", "agent", map[string]string{"amount": "45.00 order=1042"})
	b := Digest("refund", "agent", map[string]string{"amount": "45.00", "order": "1042"})
	if a == b {
		t.Fatal("two different payloads share a digest")
	}
	if Digest("refund", "agent", map[string]string{"x": "1"}) == Digest("refund\x00agent", "", map[string]string{"x": "1"}) {
		t.Fatal("op and principal run together")
	}
}
