package reproduce

import (
	"strings"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/serve"
)

// Session replays a session recorded by serve or conform, re-submitting
// each request at its tick with the fault it met to a fresh provider, and
// returns the first difference between the recording and the replay, in
// words, or "" when they are the same.
func Session(s *export.Session) (string, error) {
	want, got, err := serve.Rerecord(s)
	if err != nil {
		return "", err
	}
	return difference(want, got, "session", func(path []string) string { return strings.Join(path, ".") }), nil
}

// Document replays a case or a session, whichever the file held.
func Document(d export.Document) (string, error) {
	if d.Session != nil {
		return Session(d.Session)
	}
	return Case(d.Case)
}
