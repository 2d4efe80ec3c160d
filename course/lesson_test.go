package course

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// TestBuiltInCourse: every lesson reads, each question has an answer the
// engine works out, and the course covers the source exercise and the
// rows of the test matrix.
func TestBuiltInCourse(t *testing.T) {
	c := BuiltIn()
	if len(c.Lessons) < 10 {
		t.Fatalf("%d lessons; the course has the source exercise and nine rows of the matrix", len(c.Lessons))
	}
	used := map[string]bool{}
	for _, l := range c.Lessons {
		for _, r := range l.Runs {
			used[r.Mission.ID] = true
			for _, q := range r.Questions {
				choices, answer, err := q.Choices(r)
				if err != nil {
					t.Fatalf("%s run %s: %v", l.ID, r.Name, err)
				}
				if answer < 0 || answer >= len(choices) || len(choices) > 9 {
					t.Fatalf("%s run %s: answer %d of %d choices (digits 1-9 answer)", l.ID, r.Name, answer, len(choices))
				}
				t.Logf("%s %s step %d %s → %s", l.ID, r.Name, q.Step, q.Kind, choices[answer])
			}
		}
	}
	for _, id := range []string{"timeout-then-success", "failure-then-failure", "refund-still-pending", "original-still-running",
		"concurrent-duplicates", "changed-parameters", "retry-after-key-expiry", "two-intended-refunds",
		"no-idempotency-contract", "saved-server-error", "crash-after-send"} {
		if !used[id] {
			t.Errorf("no lesson runs mission %s", id)
		}
	}
}

// TestLessonOneIsTheSourceExercise: lesson 1 runs timeout then success
// with stable keys on and off, then failure before commit twice; the
// ledgers hold 1, 2 and 0 effects, the agent's first words are the same in
// all three, and the closing sentence says so with those numbers.
func TestLessonOneIsTheSourceExercise(t *testing.T) {
	l := BuiltIn().Lessons[0]
	if len(l.Runs) != 3 || !l.Compare {
		t.Fatalf("lesson 1 has %d runs, compare %v", len(l.Runs), l.Compare)
	}
	var effects []string
	var first []string
	for _, r := range l.Runs {
		c, err := missions.Run(r.Mission, r.Settings())
		if err != nil {
			t.Fatal(err)
		}
		effects = append(effects, fmt.Sprint(c.Outcome.Effects))
		for _, ev := range c.Events {
			if ev.Say != "" {
				first = append(first, ev.Say)
				break
			}
		}
	}
	if got := strings.Join(effects, ","); got != "1,2,0" {
		t.Errorf("the ledgers hold %s effects; the source exercise has 1, 2 and 0", got)
	}
	if len(first) != 3 || first[0] != first[1] || first[1] != first[2] {
		t.Errorf("the agent's first words differ: %q", first)
	}
	if !regexp.MustCompile(`\b1, 2 and 0\b`).MatchString(strings.ReplaceAll(l.Closing, "\n", " ")) {
		t.Errorf("the closing sentence does not give the ledgers' 1, 2 and 0: %q", l.Closing)
	}
}

// TestMatrixLessonsContrastTheCallers: each lesson after the first sets a
// naive run beside a guarded one.
func TestMatrixLessonsContrastTheCallers(t *testing.T) {
	for _, l := range BuiltIn().Lessons[1:] {
		var policies []missions.Policy
		for _, r := range l.Runs {
			policies = append(policies, r.Settings().Policy)
		}
		if !slices.Contains(policies, missions.Naive) || !slices.Contains(policies, missions.Guarded) {
			t.Errorf("%s runs %v; a lesson of the matrix contrasts naive and guarded", l.ID, policies)
		}
	}
}

// TestParseLessonSaysWhatIsWrong: each mistake in a lesson file is named.
func TestParseLessonSaysWhatIsWrong(t *testing.T) {
	good := "id: x\ntitle: X\nintro: I.\nclosing: C.\nruns:\n  - name: A\n    mission: timeout-then-success\n    ask:\n      - {question: effects, step: \"1\", why: W.}\n"
	if _, err := ParseLesson("x.yaml", []byte(good), missions.BuiltIn()); err != nil {
		t.Fatalf("the good lesson: %v", err)
	}
	for _, tt := range []struct{ edit, want string }{
		{strings.Replace(good, "effects", "effect", 1), `question "effect" (accepted: effects, observed, verdict, sends, belief)`},
		{strings.Replace(good, `step: "1"`, `step: "9"`, 1), `step "9": a step of the schedule, 1 to 2, or end`},
		{strings.Replace(good, "timeout-then-success", "timeout-then-sucess", 1), `did you mean timeout-then-success`},
		{strings.Replace(good, " why: W.", " why: ''", 1), `needs its reason`},
		{strings.Replace(good, "mission:", "when: {stable_keys: yes}\n    mission:", 1), `did you mean on?`},
		{strings.Replace(good, "title: X", "title: X\ncolour: red", 1), `field colour not found`},
	} {
		_, err := ParseLesson("x.yaml", []byte(tt.edit), missions.BuiltIn())
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "x.yaml") {
			t.Errorf("got %v, want x.yaml: … %s", err, tt.want)
		}
	}
	if _, err := Load(fstest.MapFS{"l/a.yaml": {Data: []byte(good)}, "l/b.yaml": {Data: []byte(good)}}, "l", missions.BuiltIn()); err == nil || !strings.Contains(err.Error(), `lesson id "x" is also the id of l/a.yaml`) {
		t.Errorf("a repeated id: %v", err)
	}
}

// TestNoAnswerSettlesTheNextQuestion: in a run of one intent, a verdict
// asked after the learner has counted two effects or more is no question:
// more effects than intended is a duplicate.
func TestNoAnswerSettlesTheNextQuestion(t *testing.T) {
	for _, l := range BuiltIn().Lessons {
		for _, r := range l.Runs {
			if len(r.Mission.Intents) != 1 {
				continue
			}
			counted := 0
			for _, q := range r.Questions {
				_, answer, err := q.Choices(r)
				if err != nil {
					t.Fatal(err)
				}
				switch q.Kind {
				case AskEffects:
					counted = max(counted, answer)
				case AskVerdict:
					if counted >= 2 {
						t.Errorf("%s run %s asks the verdict after the learner counted %d effects for one intent: that answer settles it", l.ID, r.Name, counted)
					}
				}
			}
		}
	}
}

// TestNoVerdictAfterItsReveal: a verdict is not asked once the answer
// before it has shown the schedule's last step and, with it, the intent's
// final belief and effects: with only the clock left to run, the screen
// one key earlier would hold the verdict's answer.
func TestNoVerdictAfterItsReveal(t *testing.T) {
	for _, l := range BuiltIn().Lessons {
		for _, r := range l.Runs {
			for i, q := range r.Questions {
				if q.Kind != AskVerdict || i == 0 || r.Questions[i-1].Step < len(r.Mission.Schedule) {
					continue
				}
				end, err := missions.Run(r.Mission, r.Settings())
				if err != nil {
					t.Fatal(err)
				}
				// The answer before shows the state after its step.
				shown, err := runTo(r.Mission, r.Settings(), r.Questions[i-1].Step)
				if err != nil {
					t.Fatal(err)
				}
				final, then := verdictOf(end, q.Intent), verdictOf(shown, q.Intent)
				if then.Belief == final.Belief && then.Effects == final.Effects {
					t.Errorf("%s run %s asks the verdict of %s after the answer at step %d showed its end: %s with %d effects", l.ID, r.Name, q.Intent, r.Questions[i-1].Step, final.Belief, final.Effects)
				}
			}
		}
	}
}

func verdictOf(c *missions.Case, intent string) missions.IntentVerdict {
	for _, v := range c.Outcome.Verdicts {
		if v.Intent == intent {
			return v
		}
	}
	return missions.IntentVerdict{}
}

// TestNoCountOfAnIdleClock: a count asked of the step where the clock
// runs out is asked only where something is still running or pending;
// otherwise the ledger on screen already holds the answer.
func TestNoCountOfAnIdleClock(t *testing.T) {
	for _, l := range BuiltIn().Lessons {
		for _, r := range l.Runs {
			for _, q := range r.Questions {
				if q.Kind != AskEffects || q.Step <= len(r.Mission.Schedule) {
					continue
				}
				before, err := runTo(r.Mission, r.Settings(), q.Step-1)
				if err != nil {
					t.Fatal(err)
				}
				busy := len(before.Ledger.InFlight) > 0
				for _, o := range before.Ledger.Objects {
					busy = busy || o.Status == ledger.Pending
				}
				if !busy {
					t.Errorf("%s run %s counts the effects after the clock runs out, with nothing running: the count on screen is the answer", l.ID, r.Name)
				}
			}
		}
	}
}
