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

	"github.com/replaylab/replaylab/course"
	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// newCourseLab opens the lab on the built-in course with no progress.
func newCourseLab(t testing.TB, dir, progress string, w, h int) Model {
	t.Helper()
	return newLab(t, Options{Course: course.BuiltIn(), Progress: course.Progress{}, ProgressPath: progress, Dir: dir}, w, h)
}

// answerKey is the key that answers the open question right, or, with
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
	return m.course.labels[i]
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
	for _, r := range course.BuiltIn().Lessons[0].Runs {
		questions += len(r.Questions)
	}
	for _, want := range []string{"1, 2 and 0", fmt.Sprintf("You answered %d of %d right.", questions-1, questions)} {
		if !strings.Contains(strings.Join(strings.Fields(view), " "), want) {
			t.Errorf("the lesson's end does not say %q:\n%s", want, view)
		}
	}
	p, note, err := course.ReadProgress(progress)
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
			// A fixed place for the cases, as the screen names it; press
			// drops the commands, so nothing is written there.
			m := newCourseLab(t, "cases", "", s[0], s[1])
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
	before := runner.View().Whole()
	runner.Seek(q.Step)
	after := runner.View().Whole()
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
		out = append(out, "objects: "+termtext.Plural(after.Outcome.Effects, "effect"))
	}
	if q.Kind == course.AskVerdict {
		// A verdict is the ledger's count against the caller's belief:
		// the count at the end, and the caller's last words, give it.
		runner.Seek(runner.Steps())
		end := runner.View().Whole()
		out = append(out, "objects: "+termtext.Plural(end.Outcome.Effects, "effect"))
		for _, ev := range slices.Backward(end.Events) {
			if ev.Say != "" {
				out = append(out, strings.Join(strings.Fields(ev.Say)[:min(4, len(strings.Fields(ev.Say)))], " "))
				break
			}
		}
	}
	if q.Kind == course.AskSends {
		// Whether the guarded caller sends is in what it said it would
		// do, and in what the step before did: a read-back, a
		// hand-over to a person.
		first := func(s string) string { f := strings.Fields(s); return strings.Join(f[:min(4, len(f))], " ") }
		for _, ev := range slices.Backward(before.Events) {
			if ev.Say != "" {
				out = append(out, first(ev.Say))
				break
			}
		}
		for _, ev := range before.Events {
			if ev.Step == q.Step-1 && ev.Kind != missions.EventCheckpoint && ev.Note != "" {
				out = append(out, "what happened: "+first(termtext.CleanLine(ev.Note)))
			}
		}
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
		keys := rapid.SliceOfN(rapid.SampledFrom([]string{"n", "n", "n", "0", "1", "2", "3", "a", "b", "c", "d", "esc", "enter", "down", "up", "?", "w"}), 1, 80).Draw(rt, "keys")
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
				q := m.course.runNow().Questions[m.course.next]
				for i, c := range m.course.choices {
					// Where the choices go in two columns, a verdict
					// keeps its word and leaves its meaning to w.
					c = choiceText(q, c)
					word, _, _ := strings.Cut(c, ": ")
					label := m.course.labels[i]
					if !strings.Contains(view, fmt.Sprintf("%s  %s", label, c)) && !strings.Contains(view, fmt.Sprintf("%s  %s ", label, word)) {
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

// A count is answered by its own digit, every other answer by a letter:
// no key can look like another answer than the one it gives.
func TestCourseKeysAreTheAnswers(t *testing.T) {
	m := newCourseLab(t, t.TempDir(), "", 100, 30)
	m = press(t, m, "n") // run A opens on its first question
	for range 50 {
		if !m.course.open {
			m = press(t, m, "n")
			continue
		}
		q := m.course.runNow().Questions[m.course.next]
		for i, c := range m.course.choices {
			label := m.course.labels[i]
			if q.Kind == course.AskEffects {
				if label != c {
					t.Fatalf("the count %s is answered by %q", c, label)
				}
			} else if label < "a" || label > "i" {
				t.Fatalf("the %s answer %q is answered by %q", q.Kind, c, label)
			}
		}
		if q.Kind == course.AskEffects {
			// Press the digit of the right count: marked right.
			want := m.course.choices[m.course.answer]
			m = press(t, m, want)
			if m.course.last == nil || !m.course.last.right() {
				t.Fatalf("pressing %s for %s effects was not taken as that answer", want, want)
			}
			return
		}
		m = press(t, m, answerKey(t, m, false))
	}
	t.Fatal("lesson 1 asked no count")
}

// toSecondQuestion begins lesson 1, answers its first question wrong,
// and goes on to the next question.
func toSecondQuestion(t *testing.T, m Model) Model {
	t.Helper()
	m = press(t, m, "n")
	m = press(t, m, answerKey(t, m, true)) // run A, question 1: wrong
	for !m.course.open {
		m = press(t, m, "n")
	}
	return m
}

// q in the middle of a lesson asks first; q again leaves, keeping the
// place, and the course reopens at the question the learner was on, with
// the score so far.
func TestCourseLeavesAndComesBack(t *testing.T) {
	dir := t.TempDir()
	progress := filepath.Join(dir, "state", "progress.json")
	m := newCourseLab(t, dir, progress, 100, 30)
	m = toSecondQuestion(t, m)
	run, next := m.course.run, m.course.next
	m = press(t, m, "q")
	if !m.leaveAsked || !strings.Contains(m.View(), "q again leaves") {
		t.Fatalf("q in a lesson did not ask first:\n%s", m.View())
	}
	m = press(t, m, "n") // any other key stays
	if m.leaveAsked || !m.course.open {
		t.Fatal("a key after q did not keep the lesson")
	}
	m = press(t, m, "q", "esc") // esc, too, stays where q asked
	if m.leaveAsked || !m.course.open || m.course.phase != phaseRun {
		t.Fatal("esc after q did not stay in the lesson")
	}
	m = press(t, m, "q")
	next2, cmd := m.Update(keyMsg("q"))
	m = runCmd(t, next2.(Model), cmd)
	p, note, err := course.ReadProgress(progress)
	if err != nil || note != "" || p.Resume == nil {
		t.Fatalf("the progress kept no place: %+v %s %v", p, note, err)
	}
	back := newLab(t, Options{Course: course.BuiltIn(), Progress: p, ProgressPath: progress, Dir: dir}, 100, 30)
	cs := back.course
	if cs.phase != phaseRun || cs.run != run || cs.next != next || !cs.open || cs.asked != 1 || cs.right != 0 {
		t.Fatalf("reopened at run %d question %d (open %v, %d of %d right), want run %d question %d with 0 of 1", cs.run, cs.next, cs.open, cs.right, cs.asked, run, next)
	}
	if !strings.Contains(back.View(), "back in lesson 1") {
		t.Errorf("the reopened course does not say where it is:\n%s", back.View())
	}
	// Finishing the lesson forgets the place.
	cs.prog.Finish(cs.lessonNow().ID, 1, 2)
	if cs.prog.Resume != nil {
		t.Error("a finished lesson kept its place to resume")
	}
}

// From the review: q from the glossary opened mid-lesson asks too; a
// place kept after a run's last answer does not write its case again;
// the full key list names the open question's keys.
func TestCourseLeavingEdges(t *testing.T) {
	m := newCourseLab(t, t.TempDir(), "", 100, 30)
	m = press(t, m, "n", "w", "q")
	if !m.leaveAsked {
		t.Fatal("q from the glossary opened mid-lesson did not ask first")
	}
	m = press(t, m, "esc", "esc", "?") // the first esc stays, the second leaves the glossary
	if view := m.View(); !strings.Contains(view, m.course.labels[0]+"-") {
		t.Errorf("the full key list does not name the answers' keys %v:\n%s", m.course.labels, view)
	}
	// Run A's last question answered: the place is the run's end.
	cs := m.course
	end := course.Resume{Lesson: cs.lessonNow().ID, Run: 0, Question: len(cs.lessonNow().Runs[0].Questions), Right: 2, Asked: 2}
	back := newLab(t, Options{Course: course.BuiltIn(), Progress: course.Progress{Resume: &end}, Dir: t.TempDir()}, 100, 30)
	if got := len(back.course.cases); got != 1 {
		t.Fatalf("resumed at run A's end with %d cases kept, want 1", got)
	}
	back = press(t, back, "n")
	if len(back.course.exports) != 0 || back.course.run != 1 {
		t.Fatalf("going on from run A's end wrote %d cases again (run %d)", len(back.course.exports), back.course.run)
	}
}

// esc in the middle of a lesson goes to the list and keeps the place:
// the lesson is marked in progress, and opening it again goes back to
// the same question with the score so far.
func TestCourseEscKeepsThePlace(t *testing.T) {
	m := newCourseLab(t, t.TempDir(), "", 100, 30)
	m = toSecondQuestion(t, m)
	run, next := m.course.run, m.course.next
	m = press(t, m, "esc")
	if m.course.phase != phaseMenu || !strings.Contains(m.View(), "in progress: enter goes back") {
		t.Fatalf("esc did not go to the list, or the list does not say the lesson is in progress:\n%s", m.View())
	}
	if r := m.course.leaving(); r == nil || r.Run != run || r.Question != next {
		t.Fatalf("the place kept for a quit from the list: %+v", r)
	}
	m = press(t, m, "enter")
	cs := m.course
	if cs.phase != phaseRun || cs.run != run || cs.next != next || !cs.open || cs.asked != 1 || cs.right != 0 {
		t.Fatalf("back at run %d question %d (open %v, %d of %d right), want run %d question %d with 0 of 1", cs.run, cs.next, cs.open, cs.right, cs.asked, run, next)
	}
	// Another lesson opened from the list (asked twice) starts afresh,
	// and the place is let go.
	m = press(t, m, "esc", "down", "enter", "enter")
	if m.course.phase != phaseIntro || m.course.lesson != 1 || m.course.paused {
		t.Fatalf("another lesson from the list: phase %v lesson %d paused %v", m.course.phase, m.course.lesson, m.course.paused)
	}
}

// A place kept on a step before its question's reopens on that step, so
// that the steps between are seen; one kept without a position (an older
// file) reopens just before the question's step.
func TestCourseResumesAtTheStepLeft(t *testing.T) {
	m := newCourseLab(t, t.TempDir(), "", 100, 30)
	cs := m.course
	last := cs.c.Lessons[len(cs.c.Lessons)-1]
	run := len(last.Runs) - 1 // one verdict question, at the end
	one := 1
	if !cs.resume(course.Resume{Lesson: last.ID, Run: run, Question: 0, Position: &one}) {
		t.Fatal("the place was refused")
	}
	if cs.runner.Position() != 1 || cs.open {
		t.Fatalf("reopened at step %d (question open %v), want step 1 with no question yet", cs.runner.Position(), cs.open)
	}
	if r := cs.leaving(); r == nil || r.Position == nil || *r.Position != 1 {
		t.Fatalf("the place kept again: %+v", r)
	}
	if !cs.resume(course.Resume{Lesson: last.ID, Run: run, Question: 0}) {
		t.Fatal("the place without a position was refused")
	}
	if want := last.Runs[run].Questions[0].Step - 1; cs.runner.Position() != want || !cs.open {
		t.Fatalf("without a position: step %d, question open %v; want step %d with the question", cs.runner.Position(), cs.open, want)
	}
}

// The course's line of settings is never cut at the narrowest terminal:
// where the whole does not fit, the key's gloss goes first.
func TestCourseSettingsLineFits(t *testing.T) {
	for _, l := range course.BuiltIn().Lessons {
		for _, r := range l.Runs {
			s := r.Settings()
			got := settingsLine(s, MinWidth)
			if cells(got) > MinWidth || strings.HasSuffix(got, "…") || !strings.Contains(got, "contract "+string(s.Contract)) || !strings.Contains(got, string(s.Policy)) {
				t.Errorf("%s run %s at %d cells: %q", l.ID, r.Name, MinWidth, got)
			}
		}
	}
}

// A wrong answer is told the right one first, by name, at the narrowest
// screen: "it is duplicate" was cut off after the learner's own choice.
func TestWrongAnswerNamesTheRightOne(t *testing.T) {
	for li := range course.BuiltIn().Lessons {
		m := newCourseLab(t, t.TempDir(), "", MinWidth, MinHeight)
		m.course.startLesson(li)
		for range 300 {
			if m.course.phase == phaseClosing {
				break
			}
			if !m.course.open {
				m = press(t, m, "n")
				continue
			}
			q := m.course.runNow().Questions[m.course.next]
			right := choiceName(q, m.course.choices[m.course.answer])
			m = press(t, m, answerKey(t, m, true))
			view := strings.Join(strings.Fields(m.View()), " ")
			if !strings.Contains(view, "Not quite: it is "+right+";") {
				t.Fatalf("lesson %d: a wrong answer to %q does not name %q:\n%s", li+1, q.Kind, right, m.View())
			}
		}
	}
}

// At the end of a run of several intents each verdict says whose it is.
func TestRunEndNamesEachIntent(t *testing.T) {
	checked := 0
	for li, l := range course.BuiltIn().Lessons {
		m := newCourseLab(t, t.TempDir(), "", 100, 30)
		m.course.startLesson(li)
		playLesson(t, m, press1, func(m Model) {
			cs := m.course
			if cs.phase == phaseRun && !cs.open && cs.last == nil && cs.runner.Done() {
				if r := cs.runNow(); len(r.Mission.Intents) > 1 {
					view := m.View()
					for _, in := range r.Mission.Intents {
						if !strings.Contains(view, in.ID+": ") {
							t.Errorf("%s run %s: the end names no verdict of %s:\n%s", l.ID, r.Name, in.ID, view)
						}
					}
					checked++
				}
			}
		})
	}
	if checked == 0 {
		t.Fatal("no lesson ran a mission of several intents to its end")
	}
}

// The course's compare at 80x24 shows the first row whole, its ledger
// line with it: the agent's words give way first.
func TestCourseCompareRowWhole(t *testing.T) {
	m := toCourseCompare(t, newCourseLab(t, t.TempDir(), "", 80, 24))
	view := m.View()
	if m.course.phase != phaseCompare || !strings.Contains(view, "ledger: 1 effect") || !strings.Contains(view, "ledger: 0 effects") || !strings.Contains(view, "◆ marks where two cases first hold different ledgers") {
		t.Fatalf("the first row's ledger line is not on screen:\n%s", view)
	}
}

// Retaking a lesson writes no numbered copies of its cases: the same run
// makes the same bytes, and the file already there stands for it.
func TestRetakeMakesNoCopies(t *testing.T) {
	dir := t.TempDir()
	m := newCourseLab(t, dir, "", 100, 30)
	play := func(m Model) Model { return playLesson(t, m, pressRun, func(Model) {}) }
	m = play(m)
	first, _ := os.ReadDir(dir)
	// A file edited by hand under a case's name: the retake's copy of
	// that case goes beside it once, and stands for it after that.
	edited := filepath.Join(dir, first[0].Name())
	if err := os.WriteFile(edited, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.course.startLesson(0)
	m = play(m)
	first, _ = os.ReadDir(dir)
	m.course.startLesson(0)
	m = play(m)
	again, _ := os.ReadDir(dir)
	if len(first) == 0 || len(again) != len(first) {
		t.Fatalf("%d files after the lesson, %d after it again: %v", len(first), len(again), again)
	}
	if v := m.View(); strings.Contains(v, "was taken") {
		t.Errorf("the retake says a name was taken:\n%s", v)
	}
}

// Opening another lesson while one is paused asks first: the first enter
// says what would be let go, the second opens the other lesson.
func TestOpeningAnotherLessonAsksFirst(t *testing.T) {
	m := newCourseLab(t, t.TempDir(), "", 100, 30)
	m = toSecondQuestion(t, m)
	m = press(t, m, "esc", "down", "enter")
	if m.course.phase != phaseMenu || !strings.Contains(m.View(), "lesson 1 is in progress (0 of 1 right): enter again opens lesson 2, letting it go") {
		t.Fatalf("enter on lesson 2 with lesson 1 paused:\n%s", m.View())
	}
	m = press(t, m, "enter")
	if m.course.phase == phaseMenu || m.course.lesson != 1 {
		t.Fatalf("a second enter did not open lesson 2 (lesson %d, phase %d)", m.course.lesson+1, m.course.phase)
	}

	// A place kept on disk and let go this way is let go on disk too:
	// the next learn does not reopen it.
	dir := t.TempDir()
	progress := filepath.Join(dir, "progress.json")
	kept := course.Resume{Lesson: course.BuiltIn().Lessons[0].ID, Run: 0, Question: 1, Right: 0, Asked: 1}
	if err := course.WriteProgress(progress, course.Progress{Resume: &kept}); err != nil {
		t.Fatal(err)
	}
	m = newLab(t, Options{Course: course.BuiltIn(), Progress: course.Progress{Resume: &kept}, ProgressPath: progress, Dir: dir}, 100, 30)
	m = press(t, m, "esc", "down", "enter")
	m = pressRun(t, m, "enter")
	p, _, err := course.ReadProgress(progress)
	if err != nil || p.Resume != nil {
		t.Fatalf("the place let go is still on disk: %+v %v", p.Resume, err)
	}
}

// A step the guarded caller let go by is said to be held in the course's
// schedule, as in the lab's, not ticked off as a send.
func TestCourseScheduleSaysHeld(t *testing.T) {
	seen := 0
	for li := range course.BuiltIn().Lessons {
		m := newCourseLab(t, t.TempDir(), "", 100, 30)
		m.course.startLesson(li)
		playLesson(t, m, press1, func(m Model) {
			cs := m.course
			if cs.phase == phaseRun && cs.view != nil {
				pos := cs.runner.Position()
				for step := 1; step <= pos && step <= len(cs.runNow().Mission.Schedule); step++ {
					if heldIn(cs.view, send{step, 0}) && cs.runNow().Mission.Schedule[step-1].Kind() == missions.StepAttempt {
						if !strings.Contains(m.View(), fmt.Sprintf("✓ %d held, not sent", step)) {
							t.Fatalf("lesson %d: step %d was held, but the schedule says:\n%s", li+1, step, m.View())
						}
						seen++
					}
				}
			}
		})
	}
	if seen == 0 {
		t.Fatal("no lesson holds a step back")
	}
}

// playLesson plays the lesson open in m to its closing, answering right,
// each key sent by send, and hands every screen to look before its key.
func playLesson(t *testing.T, m Model, send func(testing.TB, Model, string) Model, look func(Model)) Model {
	t.Helper()
	for range 300 {
		if m.course.phase == phaseClosing {
			return m
		}
		look(m)
		k := "n"
		if m.course.open {
			k = answerKey(t, m, false)
		}
		m = send(t, m, k)
	}
	t.Fatal("the lesson did not end in 300 keys")
	return m
}

// press1 is press for one key, in playLesson's shape.
func press1(t testing.TB, m Model, k string) Model { return press(t, m, k) }

// A step run while the question after it hid its words (a verdict, a
// send) is said once the question is answered: nothing the reason
// refers to stays unseen.
func TestHiddenStepIsSaidAfterTheAnswer(t *testing.T) {
	seen := 0
	for li := range course.BuiltIn().Lessons {
		m := newCourseLab(t, t.TempDir(), "", 100, 40)
		m.course.startLesson(li)
		playLesson(t, m, press1, func(m Model) {
			cs := m.course
			a := cs.last
			if a == nil || cs.phase != phaseRun || (a.question.Kind != course.AskVerdict && a.question.Kind != course.AskSends) {
				return
			}
			if _, more := cs.questionAt(a.question.Step); more {
				return
			}
			pos := cs.runner.Position()
			if pos < 2 || len(cs.happenedAs(pos-1, "")) == 0 {
				return
			}
			if view := strings.Join(strings.Fields(m.View()), " "); !strings.Contains(view, fmt.Sprintf("step %d: ", pos-1)) {
				t.Errorf("lesson %d: after a %s answer, step %d is not said:\n%s", li+1, a.question.Kind, pos-1, m.View())
			}
			seen++
		})
	}
	if seen == 0 {
		t.Fatal("no answer followed a hidden step")
	}
}

// Every run's header line, its mission's title and what the run is
// about, is whole at 80 columns.
func TestRunHeadersWholeAt80(t *testing.T) {
	for _, l := range course.BuiltIn().Lessons {
		for _, r := range l.Runs {
			if n := cells(fmt.Sprintf("Run %s of %d · ", r.Name, len(l.Runs)) + termtext.CleanLine(r.Mission.Title) + ": " + r.About); n > 80 {
				t.Errorf("%s run %s: the header's %d cells are cut at 80 columns", l.ID, r.Name, n)
			}
		}
	}
}

// The course's keys, as a first-timer met them: the answer keys are
// offered only while a question is open (the lesson's end listed
// "a-f answer"); any letter that is no answer says so, as a wrong digit
// does (j to z were ignored in silence); the run's end says n writes its
// case, which it does only then ("is written" came before the folder
// did); and the last lesson's end names the lessons not done yet.
func TestCourseKeysSayWhatTheyDo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cases")
	m := newCourseLab(t, dir, "", 100, 30)
	fullHelp := func(m Model) string { return press(t, m, "?").View() }
	for i := 0; i < 200 && !m.course.open; i++ {
		m = press(t, m, "n")
	}
	if !m.course.open || !strings.Contains(fullHelp(m), "answer") {
		t.Fatalf("a question is open, and its keys are not listed:\n%s", fullHelp(m))
	}
	for _, k := range []string{"z", "x", "7"} {
		if slices.Contains(m.course.labels, k) {
			continue
		}
		if got := press(t, m, k); !strings.Contains(got.course.note, k+" is not one of the answers") {
			t.Errorf("%s on a question: note %q", k, got.course.note)
		}
	}
	checked := false
	for i := 0; i < 200 && m.course.phase == phaseRun; i++ {
		k := "n"
		if m.course.open {
			k = answerKey(t, m, false)
		}
		if flat := strings.Join(strings.Fields(m.View()), " "); !checked && strings.Contains(flat, "n writes the run's case") {
			checked = true
			if _, err := os.Stat(dir); err == nil {
				t.Fatalf("the folder is there before n writes the case")
			}
			m = pressRun(t, m, "n")
			if _, err := os.Stat(dir); err != nil {
				t.Fatalf("after n the case is not written: %v", err)
			}
			continue
		}
		m = pressRun(t, m, k)
	}
	if !checked {
		t.Fatal("no run's end said that n writes its case")
	}
	for i := 0; i < 200 && m.course.phase != phaseClosing; i++ {
		k := "n"
		if m.course.open {
			k = answerKey(t, m, false)
		}
		m = pressRun(t, m, k)
	}
	if m.course.phase != phaseClosing || strings.Contains(fullHelp(m), "answer") {
		t.Fatalf("the lesson's end offers answer keys:\n%s", fullHelp(m))
	}
}

// After the last lesson, the closing screen names the lessons not done
// ("That was the last lesson. n shows them all." came with 4 to 10 undone).
func TestCourseLastLessonNamesTheUndone(t *testing.T) {
	c := course.BuiltIn()
	last := len(c.Lessons) - 1
	prog := course.Progress{}
	prog.Finish(c.Lessons[0].ID, 5, 5)
	m := newLab(t, Options{Course: c, Progress: prog, Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "esc")
	for range last {
		m = press(t, m, "down")
	}
	m = press(t, m, "enter")
	for i := 0; i < 300 && m.course.phase != phaseClosing; i++ {
		k := "n"
		if m.course.open {
			k = answerKey(t, m, false)
		}
		m = pressRun(t, m, k)
	}
	flat := strings.Join(strings.Fields(m.View()), " ")
	want := fmt.Sprintf("lessons 2–%d are not done yet", last)
	if m.course.lesson != last || !strings.Contains(flat, want) {
		t.Fatalf("lesson %d's end does not say %q:\n%s", m.course.lesson+1, want, m.View())
	}
	if spans([]int{2, 4, 5, 6, 9}) != "2, 4–6 and 9" {
		t.Errorf("spans: %q", spans([]int{2, 4, 5, 6, 9}))
	}
}

// Where the foot gives way so the first attempt row fits whole (the
// course's compare at 72x20), it says the findings are below, and ↓
// brings the first of them, the story of the cases, then the others; ↑
// goes back.
func TestCompareFootGivesWayAndComesBack(t *testing.T) {
	m := toCourseCompare(t, newCourseLab(t, t.TempDir(), "", 72, 20))
	flat := func(m Model) string { return strings.Join(strings.Fields(m.View()), " ") }
	if !strings.Contains(flat(m), "findings below the rows: ↓ shows them") || strings.Contains(flat(m), "Same words, different ledgers") {
		t.Fatalf("the foot does not give way to the rows:\n%s", m.View())
	}
	for range len(m.course.compare.cmp.Rows) {
		m = press(t, m, "down")
		if strings.Contains(flat(m), "Same words, different ledgers") {
			break
		}
	}
	if !strings.Contains(flat(m), "Same words, different ledgers") {
		t.Fatalf("↓ never brings the first finding:\n%s", m.View())
	}
	m = press(t, m, "down")
	if !strings.Contains(flat(m), "Case ") {
		t.Fatalf("↓ does not go on to the pairs:\n%s", m.View())
	}
	for range 10 {
		m = press(t, m, "up")
	}
	if !strings.Contains(flat(m), "findings below the rows") {
		t.Fatalf("↑ does not go back to the rows:\n%s", m.View())
	}
}

// toCourseCompare plays lesson 1 on m, answering right, to its compare.
func toCourseCompare(t *testing.T, m Model) Model {
	t.Helper()
	for range 200 {
		if m.course.phase == phaseCompare {
			break
		}
		k := "n"
		if m.course.open {
			k = answerKey(t, m, false)
		}
		m = press(t, m, k)
	}
	return m
}
