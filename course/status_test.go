package course_test

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/replaylab/replaylab/course"
	"github.com/replaylab/replaylab/export"
)

// TestCourseStatusFitsItsSchema: what `learn --status --json` prints, for
// a course untouched, finished in part and left midway, is held to the
// schema that ships beside it; a status the schema refuses is refused.
func TestCourseStatusFitsItsSchema(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(export.CourseStatusSchema))
	if err != nil {
		t.Fatalf("course-status.schema.json is not JSON: %v", err)
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	if err := comp.AddResource("course-status.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := comp.Compile("course-status.schema.json")
	if err != nil {
		t.Fatalf("course-status.schema.json does not compile: %v", err)
	}
	c := course.BuiltIn()
	var fresh, part, midway course.Progress
	part.Finish(c.Lessons[0].ID, 4, 6)
	midway.Finish(c.Lessons[0].ID, 5, 6)
	midway.Resume = &course.Resume{Lesson: c.Lessons[1].ID, Right: 1, Asked: 2}
	for name, p := range map[string]course.Progress{"fresh": fresh, "part": part, "midway": midway} {
		out, err := export.MarshalCourseStatus("/state/replaylab/progress.json", course.Status(c, p))
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("%s: not JSON: %v", name, err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s: the status does not fit its schema: %v\n%s", name, err, out)
		}
	}
	bad, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(`{"schema":"replaylab.course-status/v1","progress_file":"p","lessons":[{"number":0,"id":"x","title":"x","done":true,"right":1,"asked":1,"best":1}]}`)))
	if sch.Validate(bad) == nil {
		t.Error("a lesson numbered 0 fits the schema")
	}
}
