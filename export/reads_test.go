package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// TestCaseWithReadsIsVersion4: a case whose mission lists read faults is
// written as replaylab.case/v4 and reads back to the same bytes; the same
// file labelled v3 is refused with what would be accepted; a case without
// reads stays v3.
func TestCaseWithReadsIsVersion4(t *testing.T) {
	m, err := missions.BuiltIn().Get("original-still-running")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := missions.Run(m, m.Settings(missions.Overrides{}))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := Marshal(plain)
	if !bytes.Contains(data, []byte(`"schema": "replaylab.case/v3"`)) {
		t.Fatalf("a case without reads is not v3:\n%.200s", data)
	}
	withReads := *m
	withReads.Reads = []missions.ReadStep{{Fault: missions.ReadLagging, Lag: 3}, {Fault: missions.ReadTimeout}}
	c, err := missions.Run(&withReads, withReads.Settings(missions.Overrides{}))
	if err != nil {
		t.Fatal(err)
	}
	data, err = Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"schema": "replaylab.case/v4"`)) || !bytes.Contains(data, []byte(`"fault": "read_lagging"`)) {
		t.Fatalf("a case with reads is not v4 with its reads:\n%.400s", data)
	}
	back, err := Unmarshal("c.json", data)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Marshal(back)
	if !bytes.Equal(data, again) {
		t.Fatal("a v4 case does not read back to the same bytes")
	}
	v3 := bytes.Replace(data, []byte("replaylab.case/v4"), []byte("replaylab.case/v3"), 1)
	if _, err := Unmarshal("c.json", v3); err == nil || !strings.Contains(err.Error(), `write the schema as "replaylab.case/v4"`) {
		t.Fatalf("a v3 case with reads: %v", err)
	}
	plainData, _ := Marshal(plain)
	v4 := bytes.Replace(plainData, []byte("replaylab.case/v3"), []byte("replaylab.case/v4"), 1)
	if _, err := Unmarshal("c.json", v4); err == nil || !strings.Contains(err.Error(), "has none") {
		t.Fatalf("a v4 case without reads: %v", err)
	}
	// The one rule of a read fault holds in a case as in a mission file.
	for _, bad := range []struct{ from, to, want string }{
		{`"lag": 3`, `"lag": 0`, "at least 1"},
		{`"fault": "read_lagging",
        "lag": 3`, `"fault": "read_lagging"`, "lag"},
		{`"fault": "read_timeout"`, `"fault": "read_timeout", "lag": 2`, "lag"},
	} {
		changed := bytes.Replace(data, []byte(bad.from), []byte(bad.to), 1)
		if bytes.Equal(changed, data) {
			t.Fatalf("%q is not in the case", bad.from)
		}
		if _, err := Unmarshal("c.json", changed); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s → %s: %v, want an error naming %q", bad.from, bad.to, err, bad.want)
		}
	}
}
