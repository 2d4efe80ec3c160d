package serve

import (
	"bytes"
	"fmt"

	"github.com/replaylab/replaylab/export"
)

// replayDiff replays s and says where the replay's session first differs
// from s, by line, or "" when the two are the same bytes: the check that
// reproduce.Session makes, in words, for the commands.
func replayDiff(s *export.Session) (string, error) {
	want, got, err := Rerecord(s)
	if err != nil || bytes.Equal(want, got) {
		return "", err
	}
	w, g := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := range min(len(w), len(g)) {
		if !bytes.Equal(w[i], g[i]) {
			return fmt.Sprintf("line %d: the session says %s; the replay gives %s", i+1, bytes.TrimSpace(w[i]), bytes.TrimSpace(g[i])), nil
		}
	}
	return fmt.Sprintf("the session has %d lines, the replay %d", len(w), len(g)), nil
}
