package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/missions/missionstest"
)

// TestEditedCaseIsVersion5: a case of a mission edited in the lab (its
// fixtures replaced with f) is written as replaylab.case/v5 with the edit,
// reads back to the same bytes and under a file name of its own; labelled
// an earlier version it is refused, as is a v5 case with no edit; a case
// with reads and an edit is v5 too.
func TestEditedCaseIsVersion5(t *testing.T) {
	c := missionstest.Edited(t, "timeout-then-success", map[int]missions.Fixture{1: missions.FailureBeforeCommit, 2: missions.FailureBeforeCommit})
	m := &c.Mission
	base, err := missions.BuiltIn().Get("timeout-then-success")
	if err != nil {
		t.Fatal(err)
	}
	data, err := Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"schema": "replaylab.case/v5"`)) || !bytes.Contains(data, []byte(`"edited": {`)) {
		t.Fatalf("an edited case is not v5 with its edit:\n%.300s", data)
	}
	back, err := Unmarshal("c.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := Marshal(back); !bytes.Equal(data, again) {
		t.Fatal("a v5 case does not read back to the same bytes")
	}
	if name := CaseFileName(c); name != "timeout-then-success-edited.s1-failure-before-commit.s2-failure-before-commit.stable-keys-on.naive.v1.json" {
		t.Errorf("file name %q", name)
	}
	for _, v := range []string{"v4", "v3"} {
		old := bytes.Replace(data, []byte("replaylab.case/v5"), []byte("replaylab.case/"+v), 1)
		if _, err := Unmarshal("c.json", old); err == nil || !strings.Contains(err.Error(), `write the schema as "replaylab.case/v5"`) {
			t.Errorf("an edited case labelled %s: %v", v, err)
		}
	}
	plain, _ := missions.Run(base, base.Settings(missions.Overrides{}))
	plainData, _ := Marshal(plain)
	v5 := bytes.Replace(plainData, []byte("replaylab.case/v3"), []byte("replaylab.case/v5"), 1)
	if _, err := Unmarshal("c.json", v5); err == nil || !strings.Contains(err.Error(), `no "edited"`) {
		t.Errorf("a v5 case with no edit: %v", err)
	}
	bad := bytes.Replace(data, []byte(`"to": "failure_before_commit"`), []byte(`"to": "success"`), 1)
	if _, err := Unmarshal("c.json", bad); err == nil || !strings.Contains(err.Error(), "as the edit says") {
		t.Errorf("an edit that names another fixture than the step meets: %v", err)
	}
	withReads := *m
	withReads.Reads = []missions.ReadStep{{Fault: missions.ReadTimeout}}
	rc, err := missions.Run(&withReads, withReads.Settings(missions.Overrides{}))
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := Marshal(rc); !bytes.Contains(d, []byte(`"schema": "replaylab.case/v5"`)) {
		t.Error("an edited case with reads is not v5")
	} else if _, err := Unmarshal("c.json", d); err != nil {
		t.Errorf("an edited case with reads: %v", err)
	}
}
