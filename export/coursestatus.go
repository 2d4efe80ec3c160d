package export

import (
	_ "embed"
	"encoding/json"

	"github.com/replaylab/replaylab/internal/termtext"
)

// CourseStatusSchemaID names the JSON that `replaylab learn --status
// --json` prints: the lessons in order, each done or not, with its score.
const CourseStatusSchemaID = "replaylab.course-status/v1"

// CourseStatusSchema is the JSON Schema (draft 2020-12) of the course
// status.
//
//go:embed course-status.schema.json
var CourseStatusSchema []byte

// CourseStatus is the document: where the progress is kept, and each
// lesson's standing.
type CourseStatus struct {
	Schema   string         `json:"schema"`
	Progress string         `json:"progress_file"`
	Lessons  []LessonStatus `json:"lessons"`
}

// LessonStatus is one line of `learn --status`.
type LessonStatus struct {
	Number int    `json:"number"`
	ID     string `json:"id"`
	Title  string `json:"title"`
	Done   bool   `json:"done"`
	// InProgress: the learner left this lesson midway; learn reopens it
	// at the question they were on.
	InProgress bool `json:"in_progress,omitempty"`
	// SoFar is, for the lesson in progress, the score of the answers
	// given in it so far; Right, Asked and Best stay the last finished
	// attempt's.
	SoFar *Score `json:"so_far,omitempty"`
	Right int    `json:"right"`
	Asked int    `json:"asked"`
	Best  int    `json:"best"`
}

// Score is how many of the questions asked were answered right.
type Score struct {
	Right int `json:"right"`
	Asked int `json:"asked"`
}

// MarshalCourseStatus writes the course status as indented JSON, with
// hidden characters escaped so that a terminal shows it as it is.
func MarshalCourseStatus(progressFile string, lessons []LessonStatus) ([]byte, error) {
	out, err := json.MarshalIndent(CourseStatus{CourseStatusSchemaID, progressFile, lessons}, "", "  ")
	if err != nil {
		return nil, err
	}
	return termtext.EscapeHidden(out), nil
}
