package export

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/replaylab/replaylab/missions"
)

// unsafeName matches what may not appear in a file name.
var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// CaseFileName is FileName for a case: an edited mission's file names
// each step it changed, "…-edited.s1-failure-before-commit.…", so that two
// edits of one mission keep files of their own.
func CaseFileName(c *missions.Case) string {
	id := c.Mission.ID
	if e := c.Mission.Edited; e != nil {
		if len(e.Steps) <= maxNamedEdits {
			for _, st := range e.Steps {
				id += fmt.Sprintf(".s%d-%s", st.Step, strings.ReplaceAll(string(st.To), "_", "-"))
			}
		} else {
			// Past a few steps the names would outgrow a file name: the
			// edit's digest tells one edit from another.
			b, _ := json.Marshal(e)
			sum := sha256.Sum256(b)
			id += ".edit-" + hex.EncodeToString(sum[:4])
		}
	}
	return FileName(id, c.Settings)
}

// DefaultCaseDir is the folder case files go into when none is given:
// export's --dir and the lab's.
const DefaultCaseDir = "replaylab-cases"

// maxNamedEdits is how many edited steps a case's file name spells out.
const maxNamedEdits = 3

// FileName names a case file after its mission and settings, e.g.
// "timeout-then-success.stable-keys-off.naive.v1.json". Settings at their
// defaults are left out; the name is safe on any file system.
func FileName(missionID string, s missions.Settings) string {
	id := strings.Trim(unsafeName().ReplaceAllString(missionID, "-"), ".-")
	if id == "" {
		id = "case"
	}
	parts := []string{id, "stable-keys-" + missions.OnOff(s.StableKeys), string(s.Policy), string(s.Contract)}
	if s.KeySource != missions.KeyPerIntent {
		parts = append(parts, "key-"+strings.ReplaceAll(string(s.KeySource), "_", "-"))
	}
	if s.Seed != missions.DefaultSeed {
		parts = append(parts, fmt.Sprintf("seed-%d", s.Seed))
	}
	if s.MaxAttempts != 0 {
		parts = append(parts, fmt.Sprintf("attempts-%d", s.MaxAttempts))
	}
	if s.Deadline != 0 {
		parts = append(parts, fmt.Sprintf("deadline-%d", s.Deadline))
	}
	return unsafeName().ReplaceAllString(strings.Join(parts, "."), "-") + ".json"
}
