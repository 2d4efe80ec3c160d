package lab

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// maxSuffix bounds the numbered names tried before an export gives up.
const maxSuffix = 999

// exportedMsg reports how an export went: the files written, in order,
// and the error that stopped it, if any.
type exportedMsg struct {
	paths []string
	err   error
}

// unsafeName matches what may not appear in a file name made from a
// mission id.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// caseFileName names a case's file after its mission and settings, e.g.
// "timeout-then-success_stable-off_naive_v1.json".
func caseFileName(c *missions.Case) string {
	id := strings.Trim(unsafeName.ReplaceAllString(c.Mission.ID, "-"), ".-")
	if id == "" {
		id = "case"
	}
	s := c.Settings
	parts := []string{id, "stable-" + missions.OnOff(s.StableKeys), string(s.Policy), string(s.Contract)}
	if s.KeySource != missions.KeyPerIntent {
		parts = append(parts, string(s.KeySource))
	}
	return unsafeName.ReplaceAllString(strings.Join(parts, "_"), "-") + ".json"
}

// exportCases returns the command that writes each case into dir. Each
// file is written whole to a temporary name and then linked into place,
// which fails rather than replaces when the name is taken; a taken name
// gets a numeric suffix instead. The lab's Update never touches the disk
// itself.
func exportCases(dir string, cases ...*missions.Case) tea.Cmd {
	return func() tea.Msg {
		var msg exportedMsg
		for _, c := range cases {
			data, err := export.Marshal(c)
			if err != nil {
				msg.err = fmt.Errorf("encoding the case of %s: %w", c.Mission.ID, err)
				return msg
			}
			path, err := writeNew(dir, caseFileName(c), data)
			if err != nil {
				msg.err = err
				return msg
			}
			msg.paths = append(msg.paths, path)
		}
		return msg
	}
}

// writeNew writes data to a new file in dir named name, or name with a
// suffix (-2, -3, …) when that is taken, and returns the path. It never
// overwrites a file and leaves no temporary file behind.
func writeNew(dir, name string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating the export directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".replaylab-*.tmp")
	if err != nil {
		return "", fmt.Errorf("writing to %s: %w", dir, err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", fmt.Errorf("writing %s: %w", tmpName, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return "", fmt.Errorf("writing %s: %w", tmpName, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("writing %s: %w", tmpName, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("writing %s: %w", tmpName, err)
	}
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for n := 1; n <= maxSuffix; n++ {
		path := filepath.Join(dir, name)
		if n > 1 {
			path = filepath.Join(dir, fmt.Sprintf("%s-%d%s", base, n, ext))
		}
		err := os.Link(tmpName, path)
		if err == nil {
			return path, nil
		}
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		// No hard links here (some file systems): check, then rename.
		if _, serr := os.Lstat(path); serr == nil {
			continue
		}
		if rerr := os.Rename(tmpName, path); rerr != nil {
			return "", fmt.Errorf("writing %s: %w", path, rerr)
		}
		return path, nil
	}
	return "", fmt.Errorf("%s and %d numbered versions of it already exist in %s; move some away or choose another --dir", name, maxSuffix-1, dir)
}
