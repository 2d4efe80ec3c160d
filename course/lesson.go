package course

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// A lesson is a short course over missions: it runs them under settings
// it names and, before each reveal it cares about, asks the learner to
// predict what happens. Lessons are data, embedded like the catalog; the
// answers are never written in them but worked out by running the
// missions, so a lesson cannot teach what the engine does not do.

//go:embed lessons/*.yaml
var lessonsFS embed.FS

// Lesson is one lesson of the course.
type Lesson struct {
	ID    string
	Title string
	// Intro says what the lesson is about, before its first run.
	Intro string
	Runs  []LessonRun
	// Compare shows the runs' cases side by side once they are all done.
	Compare bool
	// Closing is the sentence the lesson ends on.
	Closing string
}

// LessonRun is one mission run under one set of settings.
type LessonRun struct {
	// Name letters the run: its case is named by it in the comparison.
	Name    string
	Mission *missions.Mission
	Over    missions.Overrides
	// About says, in a few words, what is different in this run.
	About     string
	Questions []Question
}

// Settings are the run's settings.
func (r LessonRun) Settings() missions.Settings { return r.Mission.Settings(r.Over) }

// QuestionKind is what a question asks.
type QuestionKind string

// The questions a lesson can ask.
const (
	// AskEffects: how many effects the ledger holds after the step.
	AskEffects QuestionKind = "effects"
	// AskObserved: what the caller observes from the step's attempt.
	AskObserved QuestionKind = "observed"
	// AskVerdict: the intent's verdict once the run ends.
	AskVerdict QuestionKind = "verdict"
	// AskSends: whether the guarded caller sends a request at the step.
	AskSends QuestionKind = "sends"
	// AskBelief: what the caller believes of the intent after the step.
	AskBelief QuestionKind = "belief"
)

var questionKinds = []QuestionKind{AskEffects, AskObserved, AskVerdict, AskSends, AskBelief}

// Question is asked before the step it is about is shown.
type Question struct {
	Kind QuestionKind
	// Step is the 1-based schedule step the question is about; one past
	// the last step is the end of the run, where a verdict is asked.
	Step int
	// Intent is the intent a verdict question is about.
	Intent string
	// Why is the reason, in a plain sentence or two, shown after the
	// answer whether it was right or wrong.
	Why string
}

// Prompt is the question in words.
func (q Question) Prompt(m *missions.Mission) string {
	switch q.Kind {
	case AskEffects:
		return fmt.Sprintf("After step %d, how many effects will the ledger hold?", q.Step)
	case AskObserved:
		return fmt.Sprintf("At step %d, what will the caller observe?", q.Step)
	case AskVerdict:
		return fmt.Sprintf("When the run ends, which verdict will %s get?", intentLabel(m, q.Intent))
	case AskSends:
		return fmt.Sprintf("At step %d, will the guarded caller send a request to the provider?", q.Step)
	case AskBelief:
		return fmt.Sprintf("After step %d, what will the caller believe of %s?", q.Step, intentLabel(m, q.Intent))
	}
	return string(q.Kind)
}

// intentLabel is an intent's label, or its id.
func intentLabel(m *missions.Mission, intent string) string {
	for _, in := range m.Intents {
		if in.ID == intent && in.Label != "" {
			return "the " + in.Label
		}
	}
	return intent
}

// Choices are a question's numbered answers and the index of the right
// one, worked out by running the mission.
func (q Question) Choices(r LessonRun) (choices []string, answer int, err error) {
	switch q.Kind {
	case AskEffects:
		c, err := runTo(r.Mission, r.Settings(), q.Step)
		if err != nil {
			return nil, 0, err
		}
		n := c.Outcome.Effects
		// The same choices at every step of the run, so that their
		// range says nothing of this step's answer.
		end, err := runTo(r.Mission, r.Settings(), len(r.Mission.Schedule)+1)
		if err != nil {
			return nil, 0, err
		}
		top := max(3, len(end.Ledger.Objects)+1)
		for i := 0; i <= top; i++ {
			choices = append(choices, strconv.Itoa(i))
		}
		return choices, n, nil
	case AskObserved:
		c, err := runTo(r.Mission, r.Settings(), q.Step)
		if err != nil {
			return nil, 0, err
		}
		got := missions.Observation("")
		for _, ev := range c.Events {
			if ev.Step == q.Step && ev.Kind == missions.EventAttempt {
				got = ev.Observed
				break
			}
		}
		if got == "" {
			return nil, 0, fmt.Errorf("step %d sends no attempt to observe", q.Step)
		}
		for i, o := range askedObservations {
			if o == got {
				answer = i
			}
			choices = append(choices, missions.ObservationWords(o))
		}
		if !slices.Contains(askedObservations, got) {
			return nil, 0, fmt.Errorf("step %d observes %s, which the question does not offer", q.Step, got)
		}
		return choices, answer, nil
	case AskVerdict:
		c, err := runTo(r.Mission, r.Settings(), len(r.Mission.Schedule)+1)
		if err != nil {
			return nil, 0, err
		}
		for _, v := range c.Outcome.Verdicts {
			if v.Intent != q.Intent {
				continue
			}
			for i, w := range missions.Verdicts {
				if w == v.Verdict {
					answer = i
				}
				choices = append(choices, string(w)+": "+missions.VerdictMeaning(w))
			}
			return choices, answer, nil
		}
		return nil, 0, fmt.Errorf("the run has no verdict for intent %q", q.Intent)
	case AskSends:
		g := missions.Guarded
		over := r.Over
		over.Policy = &g
		c, err := runTo(r.Mission, r.Mission.Settings(over), q.Step)
		if err != nil {
			return nil, 0, err
		}
		sends := slices.ContainsFunc(c.Events, func(ev missions.Event) bool { return ev.Step == q.Step && ev.Kind == missions.EventAttempt })
		if sends {
			return []string{"yes, it sends", "no, it holds back"}, 0, nil
		}
		return []string{"yes, it sends", "no, it holds back"}, 1, nil
	case AskBelief:
		c, err := runTo(r.Mission, r.Settings(), q.Step)
		if err != nil {
			return nil, 0, err
		}
		got := missions.Belief("")
		for _, ev := range c.Events {
			if ev.Intent == q.Intent && ev.Belief != "" {
				got = ev.Belief
			}
		}
		if got == "" {
			return nil, 0, fmt.Errorf("the caller holds no belief of %s by step %d", q.Intent, q.Step)
		}
		for i, b := range askedBeliefs {
			if b == got {
				answer = i
			}
			choices = append(choices, missions.BeliefWords(b))
		}
		return choices, answer, nil
	}
	return nil, 0, fmt.Errorf("question %q is not one the course asks", q.Kind)
}

// askedBeliefs are the answers a "belief" question offers.
var askedBeliefs = []missions.Belief{missions.BelievesDone, missions.BelievesFailed, missions.BelievesPending, missions.BelievesUnknown, missions.BelievesEscalated}

// askedObservations are the answers an "observed" question offers.
var askedObservations = []missions.Observation{missions.ObservedSuccess, missions.ObservedError, missions.ObservedTimeout, missions.ObservedConflict, missions.ObservedMismatch, missions.ObservedPending}

// runTo runs a mission to position pos.
func runTo(m *missions.Mission, s missions.Settings, pos int) (*missions.Case, error) {
	r, err := missions.NewRunner(m, s)
	if err != nil {
		return nil, err
	}
	r.Seek(pos)
	return r.Case(), nil
}

// Course is the lessons in order.
type Course struct {
	Lessons []*Lesson
}

// Get finds a lesson by id.
func (c *Course) Get(id string) (*Lesson, bool) {
	for _, l := range c.Lessons {
		if l.ID == id {
			return l, true
		}
	}
	return nil, false
}

// BuiltIn returns the embedded course, its missions from the
// built-in catalog. A broken lesson is a bug in the binary.
func BuiltIn() *Course {
	c, err := Load(lessonsFS, "lessons", missions.BuiltIn())
	if err != nil {
		panic(fmt.Sprintf("built-in course: %v", err))
	}
	return c
}

// Load reads every lesson file in dir, in file-name order, and
// checks that each question can be answered by running its mission.
func Load(fsys fs.FS, dir string, cat *missions.Catalog) (*Course, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	c := &Course{}
	var errs []error
	seen := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || !missions.IsMissionFile(e.Name()) {
			continue
		}
		name := dir + "/" + e.Name()
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		l, err := ParseLesson(name, data, cat)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if other, ok := seen[l.ID]; ok {
			errs = append(errs, fmt.Errorf("%s: lesson id %q is also the id of %s", name, l.ID, other))
			continue
		}
		seen[l.ID] = name
		c.Lessons = append(c.Lessons, l)
	}
	if len(c.Lessons) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no lesson files", dir))
	}
	return c, errors.Join(errs...)
}

// lessonFile is a lesson as written.
type lessonFile struct {
	ID      string    `yaml:"id"`
	Title   string    `yaml:"title"`
	Intro   string    `yaml:"intro"`
	Runs    []runFile `yaml:"runs"`
	Compare bool      `yaml:"compare"`
	Closing string    `yaml:"closing"`
}

type runFile struct {
	Name      string            `yaml:"name"`
	Mission   string            `yaml:"mission"`
	When      map[string]string `yaml:"when"`
	About     string            `yaml:"about"`
	Questions []questionFile    `yaml:"ask"`
}

type questionFile struct {
	Kind   string `yaml:"question"`
	Step   string `yaml:"step"`
	Intent string `yaml:"intent"`
	Why    string `yaml:"why"`
}

// ParseLesson reads a lesson file against the catalog its missions come
// from. Every problem names the file and, where it has one, the run and
// the question.
func ParseLesson(name string, data []byte, cat *missions.Catalog) (*Lesson, error) {
	var f lessonFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	fail := func(format string, a ...any) error { return fmt.Errorf("%s: "+format, append([]any{name}, a...)...) }
	if !missions.ValidID(f.ID) {
		return nil, fail("lesson id %q: lowercase letters, digits and dashes, at most 64", f.ID)
	}
	if strings.TrimSpace(f.Title) == "" || strings.TrimSpace(f.Intro) == "" || strings.TrimSpace(f.Closing) == "" {
		return nil, fail("a lesson needs a title, an intro and a closing sentence")
	}
	if len(f.Runs) == 0 {
		return nil, fail("a lesson needs at least one run")
	}
	l := &Lesson{ID: f.ID, Title: f.Title, Intro: strings.TrimSpace(f.Intro), Compare: f.Compare, Closing: strings.TrimSpace(f.Closing)}
	names := map[string]bool{}
	for i, rf := range f.Runs {
		where := fmt.Sprintf("run %d", i+1)
		m, err := cat.Get(rf.Mission)
		if err != nil {
			return nil, fail("%s: %v", where, err)
		}
		over, err := parseWhen(rf.When)
		if err != nil {
			return nil, fail("%s: when: %v", where, err)
		}
		if rf.Name == "" || names[rf.Name] {
			return nil, fail("%s: each run needs a name of its own (A, B, …)", where)
		}
		names[rf.Name] = true
		run := LessonRun{Name: rf.Name, Mission: m, Over: over, About: strings.TrimSpace(rf.About)}
		end := len(m.Schedule) + 1
		last := 0
		for j, qf := range rf.Questions {
			qwhere := fmt.Sprintf("%s, question %d", where, j+1)
			kind := QuestionKind(qf.Kind)
			if !slices.Contains(questionKinds, kind) {
				return nil, fail("%s: question %q (accepted: %s)", qwhere, qf.Kind, termtext.JoinWords(questionKinds))
			}
			step := end
			if qf.Step != "end" {
				n, err := strconv.Atoi(qf.Step)
				if err != nil || n < 1 || n > len(m.Schedule) {
					return nil, fail("%s: step %q: a step of the schedule, 1 to %d, or end", qwhere, qf.Step, len(m.Schedule))
				}
				step = n
			}
			if step < last {
				return nil, fail("%s: questions go in the order of their steps", qwhere)
			}
			last = step
			q := Question{Kind: kind, Step: step, Intent: qf.Intent, Why: strings.TrimSpace(qf.Why)}
			if q.Why == "" {
				return nil, fail("%s: a question needs its reason (why)", qwhere)
			}
			if kind == AskVerdict || kind == AskBelief {
				if q.Intent == "" && len(m.Intents) == 1 {
					q.Intent = m.Intents[0].ID
				}
				if !slices.ContainsFunc(m.Intents, func(in missions.Intent) bool { return in.ID == q.Intent }) {
					return nil, fail("%s: intent %q is not one of mission %s's", qwhere, q.Intent, m.ID)
				}
			}
			if _, _, err := q.Choices(run); err != nil {
				return nil, fail("%s: %v", qwhere, err)
			}
			run.Questions = append(run.Questions, q)
		}
		l.Runs = append(l.Runs, run)
	}
	return l, nil
}

// parseWhen reads a run's settings as a mission's expectations write them.
func parseWhen(w map[string]string) (missions.Overrides, error) {
	var o missions.Overrides
	for k, v := range w {
		switch k {
		case "stable_keys":
			b, err := missions.ParseOnOff(v)
			if err != nil {
				return o, err
			}
			o.StableKeys = &b
		case "policy":
			p, err := missions.ParsePolicy(v)
			if err != nil {
				return o, err
			}
			o.Policy = &p
		case "contract", "provider":
			c, err := missions.ProviderName(v)
			if err != nil {
				return o, err
			}
			o.Contract = &c
		case "key_source":
			ks, err := missions.ParseKeySource(v)
			if err != nil {
				return o, err
			}
			o.KeySource = &ks
		default:
			return o, fmt.Errorf("setting %q (accepted: stable_keys, policy, provider, contract, key_source)", k)
		}
	}
	return o, nil
}
