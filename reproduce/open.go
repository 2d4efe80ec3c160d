package reproduce

// Opening files: what a file is (a mission, a case, a session), read
// within its bounds, and a session held to its replay before anyone is
// shown it.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/infile"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// ReadDocument reads a case or session file of at most
// export.MaxCaseBytes: a pipe works, a device that never ends does not
// exhaust memory, and a named pipe nothing writes to is given up after
// wait.
func ReadDocument(path string, wait time.Duration) (export.Document, error) {
	data, err := infile.Read(path, export.MaxCaseBytes, "a case .json file", wait)
	if err != nil {
		return export.Document{}, err
	}
	return export.ReadDocument(path, data)
}

// OpenSession reads a session for the lab, holds it to what its replay
// gives (a tampered ledger or verdict is refused) and tells it step by
// step. A mission file, a missing file or a case is refused saying what
// the lab opens instead.
func OpenSession(path string, wait time.Duration) (*SessionRun, error) {
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".yaml" || ext == ".yml" {
		return nil, fmt.Errorf("%s is a mission file: open it with replaylab lab --missions %s MISSION-ID (the lab takes a mission by id, or a session file)", path, termtext.ShellWord(filepath.Dir(path)))
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file; the lab opens a mission by its id (replaylab missions lists them) or a session file that serve --record or conform --record wrote", path)
	}
	data, err := infile.Read(path, export.MaxCaseBytes, "a session .json file", wait)
	if err != nil {
		return nil, infile.Error(path, err)
	}
	d, err := export.ReadDocument(path, data)
	if err != nil {
		var head map[string]json.RawMessage
		if json.Unmarshal(data, &head) == nil && head["schema"] == nil {
			// JSON, but no document of ours: say what the lab wants, not
			// what a case reader expected.
			return nil, fmt.Errorf("%s: not a replaylab session: no \"schema\" field (expected %q); the lab opens a mission by its id (replaylab missions lists them) or a session file that serve --record or conform --record wrote", path, export.SessionSchemaID)
		}
		return nil, infile.Error(path, err)
	}
	if d.Session == nil {
		return nil, fmt.Errorf("%s is a case, not a session: the lab opens a mission (replaylab lab MISSION) or a session that serve --record or conform --record wrote; replaylab replay or compare read a case", path)
	}
	if p := Problems(path, d); len(p) > 0 {
		return nil, errors.New(strings.Join(p, "\n"))
	}
	run, err := Run(d.Session)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return run, nil
}

// CheckFile checks one file, whatever it holds, and returns what it
// holds, or its problems, one line each: a mission file is validated
// (run, each setting its expectations name, with run); a case or a
// session, under any name, is held to its replay.
func CheckFile(path string, ids *missions.Catalog, run func(*missions.Mission, missions.Settings) (*missions.Case, error), wait time.Duration) (string, []string) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return "", []string{path + " is a directory; expected a mission .yaml file or a case .json file"}
	}
	if strings.EqualFold(filepath.Ext(path), ".json") {
		d, err := ReadDocument(path, wait)
		if err != nil {
			return "", termtext.ErrorLines(infile.Error(path, err))
		}
		return Holds(path, d)
	}
	data, err := infile.Read(path, missions.MaxFileBytes, "a mission .yaml file", wait)
	if err != nil {
		return "", termtext.ErrorLines(infile.Error(path, err))
	}
	switch kind, _ := export.Sniff(data); kind {
	case export.KindCase, export.KindSession, export.KindOther, export.KindTraces:
		// A case under another name than .json is still a case.
		d, err := export.ReadDocument(path, data)
		if err != nil {
			return "", termtext.ErrorLines(err)
		}
		return Holds(path, d)
	}
	return missions.ValidateFile(path, data, ids, run)
}
