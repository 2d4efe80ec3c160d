package lab

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"pgregory.net/rapid"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// newCourseLab opens the lab on the built-in course with no progress.
func newCourseLab(t testing.TB, dir, progress string, w, h int) Model {
	t.Helper()
	return newLab(t, Options{Course: missions.BuiltInCourse(), Progress: export.Progress{}, ProgressPath: progress, Dir: dir}, w, h)
}

// answerKey is the digit that answers the open question right, or, with
// wrong, one that answers it wrong.
func answerKey(t testing.TB, m Model, wrong bool) string {
	t.Helper()
	if !m.course.open {
		t.Fatal("no question is open")
	}
	i := m.course.answer
	if wrong {
		i = (i + 1) % len(m.course.choices)
	}
	return fmt.Sprint(i + 1)
}

// lessonOneKeys plays lesson 1 on m to its end, answering the first
// question wrong and the rest right, and returns the keys it pressed.
func lessonOneKeys(t testing.TB, m Model) (Model, []string) {
	t.Helper()
	var keys []string
	for range 200 {
		if m.course.phase == phaseClosing {
			return m, keys
		}
		k := "n"
		if m.course.open {
			k = answerKey(t, m, len(keys) == 1)
		}
		keys = append(keys, k)
		m = press(t, m, k)
	}
	t.Fatal("lesson 1 did not end within 200 keys")
	return m, nil
}

// TestLessonOneEndToEnd plays lesson 1 in a running program at 80×24, with
// predictions, one key at a time: the three cases are exported and the
// progress file says the lesson is done with its score.
func TestLessonOneEndToEnd(t *testing.T) {
	tmp := t.TempDir()
	t.Chdir(tmp)
	progress := filepath.Join(tmp, "state", "replaylab", "progress.json")
	// The keys come from a model stepped beside the program's: the same
	// keys, so the same questions.
	_, keys := lessonOneKeys(t, newCourseLab(t, "cases", progress, 80, 24))
	m := newCourseLab(t, "cases", progress, 80, 24)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	for _, k := range keys {
		tm.Send(keyMsg(k))
	}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("You answered"))
	}, teatest.WithDuration(60*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	// The writes are commands: wait for the progress file before quitting.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(progress); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	tm.Send(keyMsg("q"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(60*time.Second)).(Model)
	view := final.View()
	asked := strings.Count(strings.Join(keys, ""), "n")
	t.Logf("lesson 1 took %d keys (%d of them n)", len(keys), asked)
	// One answer wrong, on purpose: the score says so.
	questions := 0
	for _, r := range missions.BuiltInCourse().Lessons[0].Runs {
		questions += len(r.Questions)
	}
	for _, want := range []string{"1, 2 and 0", fmt.Sprintf("You answered %d of %d right.", questions-1, questions)} {
		if !strings.Contains(strings.Join(strings.Fields(view), " "), want) {
			t.Errorf("the lesson's end does not say %q:\n%s", want, view)
		}
	}
	p, note, err := export.ReadProgress(progress)
	if err != nil || note != "" {
		t.Fatalf("progress: %v %s", err, note)
	}
	if lp := p.Lessons["a-timeout-is-not-a-failure"]; !lp.Done || lp.Right != questions-1 || lp.Asked != questions {
		t.Errorf("progress holds %+v", lp)
	}
	for name, effects := range map[string]int{
		"timeout-then-success.stable-keys-on.naive.v1.json":  1,
		"timeout-then-success.stable-keys-off.naive.v1.json": 2,
		"failure-then-failure.stable-keys-on.naive.v1.json":  0,
	} {
		path := filepath.Join(tmp, "cases", name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("the course did not export %s: %v", name, err)
		}
		c, err := export.Unmarshal(path, data)
		if err != nil {
			t.Fatal(err)
		}
		if c.Outcome.Effects != effects {
			t.Errorf("%s: %d effects, want %d", name, c.Outcome.Effects, effects)
		}
	}
}

// TestGoldenCourse draws a question, the answer's reveal and the lesson's
// end, at both sizes.
func TestGoldenCourse(t *testing.T) {
	for _, s := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", s[0], s[1]), func(t *testing.T) {
			m := newCourseLab(t, t.TempDir(), "", s[0], s[1])
			m = press(t, m, "n")
			m = press(t, m, answerKey(t, m, false), "n")
			t.Run("question", func(t *testing.T) { golden.RequireEqual(t, m.View()) })
			m = press(t, m, answerKey(t, m, true))
			t.Run("reveal", func(t *testing.T) { golden.RequireEqual(t, m.View()) })
			m, _ = lessonOneKeys(t, m)
			t.Run("end", func(t *testing.T) { golden.RequireEqual(t, m.View()) })
		})
	}
}

// spoilers are the things on screen that would give away the answer of
// the question open in m: the object ids the asked step makes, words the
// agent says only at that step, the reason shown after the answer, and
// the marks of a right or wrong answer.
func spoilers(t *testing.T, m Model) []string {
	t.Helper()
	cs := m.course
	r := cs.runNow()
	q := r.Questions[cs.next]
	runner, err := missions.NewRunner(r.Mission, r.Settings())
	if err != nil {
		t.Fatal(err)
	}
	runner.Seek(q.Step - 1)
	before := runner.View()
	runner.Seek(q.Step)
	after := runner.View()
	var out []string
	for _, o := range after.Ledger.Objects {
		if !slices.ContainsFunc(before.Ledger.Objects, func(b ledger.Object) bool { return b.ID == o.ID }) {
			out = append(out, o.ID.String())
		}
	}
	for _, ev := range after.Events[len(before.Events):] {
		if ev.Say == "" {
			continue
		}
		// The fewest first words of the sentence that nothing said before
		// begins with: enough to tell it apart, few enough to be on
		// screen when a long sentence is cut.
		words := strings.Fields(ev.Say)
		for n := 1; n <= len(words); n++ {
			prefix := strings.Join(words[:n], " ")
			if !slices.ContainsFunc(before.Events, func(b missions.Event) bool {
				return strings.HasPrefix(strings.Join(strings.Fields(b.Say), " "), prefix)
			}) {
				out = append(out, prefix)
				break
			}
		}
	}
	if after.Outcome.Effects != before.Outcome.Effects {
		// The ledger's count after the step, as its panel words it.
		out = append(out, "objects: "+export.Plural(after.Outcome.Effects, "effect"))
	}
	out = append(out, strings.Join(strings.Fields(q.Why)[:5], " "), "✓ Right", "Not quite", "is over")
	return out
}

// TestCourseShowsNoAnswerBeforeItIsGiven: over generated key sequences and
// terminal sizes, no screen shows anything of an open question's answer.
func TestCourseShowsNoAnswerBeforeItIsGiven(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := rapid.IntRange(MinWidth, 140).Draw(rt, "width")
		h := rapid.IntRange(MinHeight, 50).Draw(rt, "height")
		m := newCourseLab(t, t.TempDir(), "", w, h)
		// Any lesson, not only the first ones a run of keys reaches.
		m.course.startLesson(rapid.IntRange(0, len(m.course.c.Lessons)-1).Draw(rt, "lesson"))
		keys := rapid.SliceOfN(rapid.SampledFrom([]string{"n", "n", "n", "1", "2", "3", "4", "esc", "enter", "down", "up", "?", "w"}), 1, 80).Draw(rt, "keys")
		for i, k := range keys {
			m = press(t, m, k)
			if m.screen != screenCourse || m.course.phase != phaseRun || !m.course.open || m.fullHelp {
				continue
			}
			view := strings.Join(strings.Fields(m.View()), " ")
			for _, s := range spoilers(t, m) {
				if strings.Contains(view, s) {
					rt.Fatalf("after keys %q the open question's answer shows: %q on\n%s", keys[:i+1], s, m.View())
				}
			}
		}
	})
}

// TestCourseQuestionAlwaysWhole: at the smallest terminal the lab draws
// in, every question of every lesson shows its prompt and all its choices.
func TestCourseQuestionAlwaysWhole(t *testing.T) {
	m := newCourseLab(t, t.TempDir(), "", MinWidth, MinHeight)
	seen := 0
	for lesson := range m.course.c.Lessons {
		m.course.startLesson(lesson)
		for range 100 {
			if m.course.phase == phaseClosing {
				break
			}
			if m.course.open {
				seen++
				view := m.View()
				for i, c := range m.course.choices {
					// Where the choices go in two columns, a verdict
					// keeps its word and leaves its meaning to w.
					word, _, _ := strings.Cut(c, ": ")
					if !strings.Contains(view, fmt.Sprintf("%d  %s", i+1, c)) && !strings.Contains(view, fmt.Sprintf("%d  %s ", i+1, word)) {
						t.Fatalf("lesson %d: choice %d (%s) is not on screen:\n%s", lesson+1, i+1, c, view)
					}
				}
				m = press(t, m, answerKey(t, m, false))
				continue
			}
			m = press(t, m, "n")
		}
	}
	if seen < 30 {
		t.Fatalf("only %d questions seen", seen)
	}
}
