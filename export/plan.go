package export

import (
	"path/filepath"
	"strings"

	"github.com/replaylab/replaylab/missions"
)

// Job is one case file an export writes: the mission and settings it
// runs, and the file's path.
type Job struct {
	Mission  *missions.Mission
	Settings missions.Settings
	Path     string
}

// Plan lays out an export into dir: a file for each mission and settings
// in runs, named by FileName and ending in ext (".json" for the case,
// ".md" for a write-up), each path once, in the order given.
func Plan(dir, ext string, runs []Job) []Job {
	var jobs []Job
	seen := map[string]bool{}
	for _, j := range runs {
		j.Path = filepath.Join(dir, strings.TrimSuffix(FileName(j.Mission.ID, j.Settings), ".json")+ext)
		if seen[j.Path] {
			continue
		}
		seen[j.Path] = true
		jobs = append(jobs, j)
	}
	return jobs
}
