package lab

// The course screen: the lessons' menu, a lesson's runs step by step with
// a question before each reveal it cares about, the answer and its reason,
// and the closing comparison. Its keys and views only: the lessons and the
// learner's progress are package course's.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/course"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// The course screen: a lesson runs its missions a step at a time and,
// before each step it asks about, shows the state before the step and a
// question with its answers, each under the key that gives it: a count
// under its own digit, any other answer under a letter, so that no key
// can look like another answer than the one it gives. Nothing of the
// step, its effects, its words or its ledger rows, is drawn until the
// question is answered, nor, for a verdict, the ledger and the agent's
// last words, which would give it away; then the screen says whether the
// answer was right, why, and what happened.

// coursePhase is where the learner is in a lesson.
type coursePhase int

const (
	phaseMenu    coursePhase = iota // the list of lessons
	phaseIntro                      // a lesson's first screen
	phaseRun                        // stepping a run; a question may be open
	phaseCompare                    // the lesson's runs side by side
	phaseClosing                    // the closing sentence and the score
)

// courseKeys are the course screen's own keys.
type courseKeys struct {
	Next    key.Binding
	Answer  key.Binding
	Lessons key.Binding
	Up      key.Binding
	Down    key.Binding
	Open    key.Binding
}

func newCourseKeys() courseKeys {
	return courseKeys{
		Next:    key.NewBinding(key.WithKeys("n", "enter", " "), key.WithHelp("n/enter", "go on")),
		Answer:  key.NewBinding(key.WithKeys(answerKeys...), key.WithHelp("a-f", "answer")),
		Lessons: key.NewBinding(key.WithKeys("esc", "l"), key.WithHelp("esc/l", "lessons")),
		Up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/↓", "pick")),
		Down:    key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓", "down")),
		Open:    key.NewBinding(key.WithKeys("enter", "n"), key.WithHelp("enter", "open lesson")),
	}
}

// answerKeys are every key that can give an answer: the digits, for
// counts, and the letters a to i, for the rest (n, the key that goes on,
// is not among them).
var answerKeys = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f", "g", "h", "i"}

// choiceLabels are the keys of a question's choices: a count is answered
// by its own digit (0 for 0 effects), any other answer by a letter.
func choiceLabels(q course.Question, choices []string) []string {
	labels := make([]string, len(choices))
	digits := q.Kind == course.AskEffects && len(choices) <= 10
	for i, c := range choices {
		if digits && len(c) == 1 && c[0] >= '0' && c[0] <= '9' {
			labels[i] = c
			continue
		}
		labels[i] = string(rune('a' + i))
	}
	return labels
}

// choiceText is how a choice reads beside its key: a count as so many
// effects.
func choiceText(q course.Question, c string) string {
	if q.Kind == course.AskEffects {
		if n, err := strconv.Atoi(c); err == nil {
			return termtext.Plural(n, "effect")
		}
	}
	return c
}

// choiceName is a choice by its name alone: a verdict without its
// meaning.
func choiceName(q course.Question, c string) string {
	if q.Kind == course.AskVerdict {
		if name, _, ok := strings.Cut(c, ":"); ok {
			return name
		}
	}
	return choiceText(q, c)
}

// answered is the last answer given, shown until the learner goes on.
type answered struct {
	question course.Question
	choices  []string
	picked   int
	answer   int
}

func (a answered) right() bool { return a.picked == a.answer }

// course is the course screen.
type courseView struct {
	st   *Styles
	keys courseKeys
	c    *course.Course
	prog course.Progress

	w, h int

	phase  coursePhase
	cursor int // the lesson picked in the menu
	lesson int
	// paused: esc left the lesson midway for the list; its place is kept
	// in the course as it was, and opening it again goes back there.
	paused bool
	// leaveFor is the lesson an enter asked to open while another is
	// paused, which a second enter opens; -1 when none was asked.
	leaveFor int
	run      int
	runner   *missions.Runner
	view     *missions.Case
	// next is the index of the run's next question; open says the
	// question at next is on screen, waiting for its answer.
	next int
	open bool
	last *answered
	// choices and answer are the open question's, worked out once, and
	// labels the key of each choice.
	choices []string
	labels  []string
	answer  int

	right, asked int
	cases        []*missions.Case
	// exported counts the runs of the lesson whose case has been handed
	// over to be written: each run's once, when n leaves its end.
	exported int

	holds   ledgerPanel
	compare compareView

	// Requests for the root, which does the I/O: cases to export, the
	// progress to save.
	exports      []*missions.Case
	dir          string // where the root writes them
	saveProgress bool
	note         string // what the course has to say on the status line
}

func newCourse(st *Styles, c *course.Course, p course.Progress) courseView {
	cs := courseView{st: st, keys: newCourseKeys(), c: c, prog: p, holds: newLedgerPanel(st), compare: newCompareView(st), leaveFor: -1}
	cs.cursor = cs.firstUndone()
	cs.startLesson(cs.cursor)
	if p.Resume != nil && cs.resume(*p.Resume) {
		cs.note = fmt.Sprintf("back in lesson %d where you left it, with your answers so far (%d of %d right)", cs.lesson+1, cs.right, cs.asked)
	}
	return cs
}

// resume reopens a lesson left midway, at the question the learner was
// on: the runs before it are played again for the comparison (their cases
// were written when they ended), and the run is moved to just before the
// step the question asks about. It reports false, changing nothing, for a
// place the course does not have (a lesson since changed).
func (cs *courseView) resume(r course.Resume) bool {
	li := slices.IndexFunc(cs.c.Lessons, func(l *course.Lesson) bool { return l.ID == r.Lesson })
	if li < 0 || r.Run >= len(cs.c.Lessons[li].Runs) || r.Question > len(cs.c.Lessons[li].Runs[r.Run].Questions) {
		return false
	}
	cs.startLesson(li)
	cs.cursor = li
	for i := range r.Run {
		run := cs.lessonNow().Runs[i]
		runner, err := missions.NewRunner(run.Mission, run.Settings())
		if err != nil {
			return false
		}
		runner.Seek(runner.Steps())
		cs.cases = append(cs.cases, runner.Case())
	}
	// The runs before were written when n left them.
	cs.exported = len(cs.cases)
	if err := cs.startRun(r.Run); err != nil {
		return false
	}
	qs := cs.runNow().Questions
	to := cs.runner.Steps()
	if r.Question < len(qs) {
		to = qs[r.Question].Step - 1
	}
	if r.Position != nil && *r.Position >= 0 && *r.Position < to {
		// Left on a step before the question's: back there, so that the
		// steps between are seen.
		to = *r.Position
	}
	cs.runner.Seek(to)
	cs.view = cs.runner.View()
	if to == cs.runner.Steps() {
		// Left after the run's last answer: its case is kept for the
		// comparison, and written when n leaves the run's end.
		cs.cases = append(cs.cases, cs.runner.Case())
	}
	cs.next, cs.right, cs.asked = r.Question, r.Right, r.Asked
	cs.ask()
	return true
}

// leaving is the place to resume the lesson at, when the learner is in
// the middle of one (or left one midway for the list).
func (cs *courseView) leaving() *course.Resume {
	if cs.phase != phaseRun && !(cs.phase == phaseMenu && cs.paused) {
		return nil
	}
	at := cs.runner.Position()
	return &course.Resume{Lesson: cs.lessonNow().ID, Run: cs.run, Question: cs.next, Right: cs.right, Asked: cs.asked, Position: &at}
}

// firstUndone is the first lesson not yet finished, or the first.
func (cs *courseView) firstUndone() int {
	for i, l := range cs.c.Lessons {
		if !cs.prog.Lessons[l.ID].Done {
			return i
		}
	}
	return 0
}

func (cs *courseView) SetSize(w, h int) {
	cs.w, cs.h = w, h
	cs.compare.SetSize(w, max(0, h-4))
}

func (cs *courseView) lessonNow() *course.Lesson { return cs.c.Lessons[cs.lesson] }
func (cs *courseView) runNow() course.LessonRun  { return cs.lessonNow().Runs[cs.run] }

func (cs *courseView) startLesson(i int) {
	cs.lesson, cs.phase = i, phaseIntro
	cs.right, cs.asked, cs.cases, cs.last, cs.open, cs.exported = 0, 0, nil, nil, false, 0
}

func (cs *courseView) startRun(i int) error {
	r := cs.lessonNow().Runs[i]
	runner, err := missions.NewRunner(r.Mission, r.Settings())
	if err != nil {
		return err
	}
	cs.run, cs.runner, cs.next, cs.open, cs.last = i, runner, 0, false, nil
	cs.phase = phaseRun
	cs.view = runner.View()
	return nil
}

// questionAt is the run's next question if it is about step pos.
func (cs *courseView) questionAt(pos int) (course.Question, bool) {
	qs := cs.runNow().Questions
	if cs.next < len(qs) && qs[cs.next].Step == pos {
		return qs[cs.next], true
	}
	return course.Question{}, false
}

// goOn moves the lesson on by one beat: the next step, or the question
// before it, or the next run, the comparison, the closing.
func (cs *courseView) goOn() {
	switch cs.phase {
	case phaseIntro:
		if err := cs.startRun(0); err != nil {
			cs.note = err.Error()
			return
		}
		cs.ask()
	case phaseRun:
		if cs.open {
			return
		}
		if cs.runner.Done() {
			cs.endRun()
			return
		}
		cs.last = nil
		if cs.ask() {
			return
		}
		cs.runner.Step()
		cs.view = cs.runner.View()
		// The step after this one may be asked about straight away, so
		// a question comes with the key that leads to it.
		if !cs.runner.Done() {
			cs.ask()
		}
	case phaseCompare:
		cs.phase = phaseClosing
	case phaseClosing:
		if cs.lesson+1 < len(cs.c.Lessons) {
			cs.startLesson(cs.lesson + 1)
		} else {
			cs.phase, cs.cursor = phaseMenu, cs.lesson
		}
	}
}

// ask opens the question about the next step, if there is one.
func (cs *courseView) ask() bool {
	q, ok := cs.questionAt(cs.runner.Position() + 1)
	if !ok {
		return false
	}
	choices, answer, err := q.Choices(cs.runNow())
	if err != nil {
		cs.note = err.Error()
		cs.next++
		return false
	}
	cs.open, cs.choices, cs.answer = true, choices, answer
	cs.labels = choiceLabels(q, choices)
	return true
}

// keyRange says which keys answer the open question: "0 to 3", "a to f".
func (cs *courseView) keyRange() string {
	if len(cs.labels) == 0 {
		return ""
	}
	return cs.labels[0] + " to " + cs.labels[len(cs.labels)-1]
}

// give answers the open question with choice i (0-based). The step is
// revealed once its last question is answered.
func (cs *courseView) give(i int) {
	if !cs.open || i < 0 || i >= len(cs.choices) {
		return
	}
	q := cs.runNow().Questions[cs.next]
	cs.last = &answered{question: q, choices: cs.choices, picked: i, answer: cs.answer}
	cs.asked++
	if i == cs.answer {
		cs.right++
	}
	cs.open = false
	cs.next++
	if _, more := cs.questionAt(q.Step); more {
		return
	}
	cs.runner.Step()
	cs.view = cs.runner.View()
	if q.Step == cs.runner.Steps() {
		// The last step's question answered: the run is over.
		cs.finishRun()
	}
}

// finishRun keeps the run's case for the comparison.
func (cs *courseView) finishRun() {
	if len(cs.cases) == cs.run {
		cs.cases = append(cs.cases, cs.runner.Case())
	}
}

// endRun leaves a finished run for the next one, or for what ends the
// lesson, and writes its case: the run's end screen says n does.
func (cs *courseView) endRun() {
	cs.finishRun()
	if cs.exported < len(cs.cases) {
		// Once per run, however often n is pressed at its end.
		cs.exports = append(cs.exports, cs.cases[cs.run])
		cs.exported = len(cs.cases)
	}
	l := cs.lessonNow()
	if cs.run+1 < len(l.Runs) {
		if err := cs.startRun(cs.run + 1); err != nil {
			cs.note = err.Error()
			return
		}
		cs.ask()
		return
	}
	cs.prog.Finish(l.ID, cs.right, cs.asked)
	cs.saveProgress = true
	if l.Compare && len(cs.cases) > 1 {
		cs.compare.SetCases(cs.cases)
		cs.phase = phaseCompare
		return
	}
	cs.phase = phaseClosing
}

// Update takes the course's keys.
func (cs courseView) Update(msg tea.Msg) (courseView, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return cs, nil
	}
	cs.note = ""
	if cs.phase == phaseMenu {
		asked := cs.leaveFor
		cs.leaveFor = -1
		switch {
		case key.Matches(k, cs.keys.Up):
			cs.cursor = max(0, cs.cursor-1)
		case key.Matches(k, cs.keys.Down):
			cs.cursor = min(len(cs.c.Lessons)-1, cs.cursor+1)
		case key.Matches(k, cs.keys.Open) && cs.paused && cs.cursor == cs.lesson:
			// Back to the place esc left.
			cs.phase, cs.paused = phaseRun, false
		case key.Matches(k, cs.keys.Open) && cs.paused && asked != cs.cursor:
			// Another lesson would let go of the place kept: ask first.
			cs.leaveFor = cs.cursor
			score := ""
			if cs.asked > 0 {
				score = fmt.Sprintf(" (%d of %d right)", cs.right, cs.asked)
			}
			cs.note = fmt.Sprintf("lesson %d is in progress%s: enter again opens lesson %d, letting it go",
				cs.lesson+1, score, cs.cursor+1)
		case key.Matches(k, cs.keys.Open):
			if cs.paused && cs.prog.Resume != nil {
				// The place let go is let go on disk too, or the next
				// learn would reopen it.
				cs.prog.Resume = nil
				cs.saveProgress = true
			}
			cs.paused = false
			cs.startLesson(cs.cursor)
		}
		return cs, nil
	}
	switch {
	case key.Matches(k, cs.keys.Lessons):
		cs.paused = cs.phase == phaseRun
		cs.phase, cs.cursor = phaseMenu, cs.lesson
	case cs.open && key.Matches(k, cs.keys.Answer):
		i := slices.Index(cs.labels, k.String())
		if i < 0 {
			cs.note = fmt.Sprintf("%s is not one of the answers: press %s", k.String(), cs.keyRange())
			return cs, nil
		}
		cs.give(i)
	case cs.open && key.Matches(k, cs.keys.Next):
		cs.note = fmt.Sprintf("answer first: press %s", cs.keyRange())
	case cs.open && k.Type == tea.KeyRunes && len(k.Runes) == 1:
		// Any other letter or sign is no answer either, and says so, as a
		// wrong digit does.
		cs.note = fmt.Sprintf("%s is not one of the answers: press %s", k.String(), cs.keyRange())
	case key.Matches(k, cs.keys.Next):
		cs.goOn()
	case cs.phase == phaseCompare:
		cs.compare, _ = cs.compare.Update(k)
	}
	return cs, nil
}

// ShortHelp is the course's help bar.
func (cs courseView) ShortHelp() []key.Binding {
	k := cs.keys
	switch {
	case cs.phase == phaseMenu:
		return []key.Binding{k.Up, k.Open}
	case cs.phase == phaseRun && cs.open:
		ans := k.Answer
		ans.SetHelp(cs.labels[0]+"-"+cs.labels[len(cs.labels)-1], "answer")
		return []key.Binding{ans, k.Lessons}
	}
	return []key.Binding{k.Next, k.Lessons}
}

// FullHelp is every key of the course where the learner is: the list of
// lessons, or a lesson.
func (cs courseView) FullHelp() [][]key.Binding {
	k := cs.keys
	if cs.phase == phaseMenu {
		return [][]key.Binding{{k.Up, k.Open}}
	}
	if cs.open && len(cs.labels) > 0 {
		// The answer keys only while a question is open.
		ans := k.Answer
		ans.SetHelp(cs.labels[0]+"-"+cs.labels[len(cs.labels)-1], "answer")
		return [][]key.Binding{{ans, k.Lessons}}
	}
	return [][]key.Binding{{k.Next, k.Lessons}}
}

// View draws the course screen in exactly its box.
func (cs *courseView) View() string {
	var lines []string
	switch cs.phase {
	case phaseMenu:
		lines = cs.menuView()
	case phaseIntro:
		lines = cs.introView()
	case phaseRun:
		lines = cs.runView()
	case phaseCompare:
		lines = cs.compareLines()
	case phaseClosing:
		lines = cs.closingView()
	}
	return box(lines, cs.w, cs.h)
}

func (cs *courseView) titleLine() string {
	l := cs.lessonNow()
	left := cs.st.AppTitle.Render(fmt.Sprintf("Lesson %d of %d", cs.lesson+1, len(cs.c.Lessons))) + cs.st.Title.Render(" · "+termtext.CleanLine(l.Title))
	right := ""
	if cs.asked > 0 {
		right = cs.st.Subtle.Render(fmt.Sprintf("%d of %d right", cs.right, cs.asked))
	}
	pad := cs.w - lipgloss.Width(left) - lipgloss.Width(right)
	if pad < 1 {
		return left
	}
	return left + strings.Repeat(" ", pad) + right
}

func (cs *courseView) para(s string, style lipgloss.Style) []string {
	var out []string
	for _, l := range wrap(paragraph(s), cs.w-2) {
		out = append(out, "  "+style.Render(l))
	}
	return out
}

func (cs *courseView) menuView() []string {
	lines := []string{cs.st.AppTitle.Render("The course") + cs.st.Subtle.Render(" · predict before you look"), ""}
	done := 0
	for i, l := range cs.c.Lessons {
		lp := cs.prog.Lessons[l.ID]
		mark, score := "·", ""
		if lp.Done {
			done++
			mark, score = "✓", fmt.Sprintf("%d of %d right", lp.Right, lp.Asked)
		}
		if cs.paused && i == cs.lesson {
			mark, score = "▹", "in progress: enter goes back"
		}
		line := fmt.Sprintf("%s %2d  %s", mark, i+1, termtext.CleanLine(l.Title))
		style := cs.st.Text
		cursor := "  "
		if i == cs.cursor {
			style, cursor = cs.st.Selected, "▸ "
		}
		lw := cs.w - 2 - len(score) - 2
		lines = append(lines, cursor+style.Render(fit(line, max(1, lw)))+"  "+cs.st.Subtle.Render(score))
	}
	lines = append(lines, "", cs.st.Subtle.Render(fmt.Sprintf("  %d of %s done · enter opens the lesson under ▸", done, termtext.Plural(len(cs.c.Lessons), "lesson"))))
	return lines
}

func (cs *courseView) introView() []string {
	l := cs.lessonNow()
	lines := []string{cs.titleLine(), ""}
	lines = append(lines, cs.para(l.Intro, cs.st.Text)...)
	lines = append(lines, "")
	for _, r := range l.Runs {
		lines = append(lines, "  "+cs.st.Selected.Render(r.Name)+cs.st.Text.Render("  "+cut(termtext.CleanLine(r.Mission.Title)+": "+r.About, cs.w-5)))
	}
	lines = append(lines, "", cs.st.Subtle.Render(cut("  Answer with the key beside your answer: a count with its own digit,", cs.w)),
		cs.st.Subtle.Render(cut("  anything else with a letter. w explains a word. n begins.", cs.w)))
	return lines
}

// runView is a run: the settings, the schedule with the steps shown so
// far, the ledger and what the agent last said, then the open question or
// the last answer.
func (cs *courseView) runView() []string {
	r := cs.runNow()
	l := cs.lessonNow()
	s := r.Settings()
	lines := []string{cs.titleLine()}
	head := fmt.Sprintf(" of %d · ", len(l.Runs))
	lines = append(lines, cs.st.Selected.Render(fmt.Sprintf("Run %s", r.Name))+cs.st.Subtle.Render(head)+
		cs.st.Text.Render(cut(termtext.CleanLine(r.Mission.Title)+": "+r.About, cs.w-cells("Run "+r.Name+head))))
	lines = append(lines, cs.st.Subtle.Render(settingsLine(s, cs.w)))

	pos := cs.runner.Position()
	hide, hideLedger := cs.hiding()
	// The box below the two columns: the question, or the last answer
	// with what the step did.
	said := cs.saidLine(pos)
	if hide {
		said = []string{cs.st.Subtle.Render("  the agent's last words: hidden until you answer")}
	}
	// What the two columns need to show whole: the ledger before the
	// step and the schedule.
	need := max(3, 1+ledgerLines(cs.view.Ledger), len(cs.scheduleLines(pos, cs.w-clamp(cs.w*2/5, 30, 44)-2, 99, false)))
	var below []string
	switch {
	case cs.open && cs.last == nil && pos > 0 && !hide:
		// The step just run, in brief, then the question about the next,
		// where there is room for both and the columns whole: the
		// question comes first, then the columns, then the brief.
		below = cs.questionLines(cs.h - len(lines) - len(said) - 5)
		if brief := firstLines(cs.happened(pos), 2, cs.w, "…"); cs.h-len(lines)-len(below)-len(brief)-len(said)-2-need >= 0 {
			below = append(brief, below...)
		}
	case cs.open:
		below = cs.questionLines(cs.h - len(lines) - len(said) - 5)
	case cs.last != nil:
		below = cs.answerLines(pos)
	case cs.runner.Done():
		below = cs.runEndLines()
	default:
		below = cs.stepLines(pos)
	}
	room := max(3, cs.h-len(lines)-len(below)-len(said)-2)
	// The ledger's lines are short; the schedule's words take the rest.
	rw := clamp(cs.w*2/5, 30, 44)
	lw := cs.w - rw - 2
	left := cs.scheduleLines(pos, lw, room, true)
	// As tall as the schedule or the ledger needs, within the room.
	colH := clamp(max(len(left), 1+ledgerLines(cs.view.Ledger)), 3, max(3, room))
	left = firstLines(left, colH, lw, " …")
	cs.holds.SetCase(cs.view)
	var names keyNames
	names.add(cs.view.Log(), 0)
	cs.holds.SetNames(names)
	cs.holds.SetSize(rw, colH)
	// While a question is open the runner stands before the step it
	// asks about: the ledger shows what stood before it, nothing after.
	// Before a verdict, which the count and the agent's words would give
	// away, it shows nothing.
	right := cs.holds.View()
	if hideLedger {
		right = box([]string{panelTitle(*cs.st, "the ledger holds", "", false, rw), cs.st.Subtle.Render(cut("hidden until you answer:", rw)),
			cs.st.Subtle.Render(cut("the count would give the verdict", rw)), cs.st.Subtle.Render(cut("away", rw))}, rw, colH)
	}
	lines = append(lines, "", lipgloss.JoinHorizontal(lipgloss.Top, box(left, lw, colH), "  ", right))
	lines = append(lines, said...)
	lines = append(lines, "")
	return append(lines, below...)
}

// hiding says what the open question's answer is in, so that it is not
// drawn: a verdict is in the ledger's count and the agent's last words;
// whether the guarded caller sends is in what it said it would do, and in
// what the step before did (a read-back, a hand-over to a person).
func (cs *courseView) hiding() (words, ledger bool) {
	if !cs.open || cs.next >= len(cs.runNow().Questions) {
		return false, false
	}
	return hides(cs.runNow().Questions[cs.next].Kind)
}

// hides is what a question of kind k keeps off the screen until it is
// answered (see hiding).
func hides(k course.QuestionKind) (words, ledger bool) {
	switch k {
	case course.AskVerdict:
		return true, true
	case course.AskSends:
		return true, false
	}
	return false, false
}

// settingsLine is the run's settings in a learner's words
// (missions.SettingsSentence) in w cells: the key's gloss goes first where
// the whole does not fit, so the contract is never cut.
func settingsLine(s missions.Settings, w int) string {
	if p := missions.SettingsSentence(s, false); cells(p) <= w {
		return p
	}
	return cut(missions.SettingsSentence(s, true), w)
}

// scheduleLines are the run's steps in words, in h lines: the steps done
// marked ✓, the next one ▸ and written out whole; the others whole too
// where roomy and they fit, else one line each.
func (cs *courseView) scheduleLines(pos, w, h int, roomy bool) []string {
	if roomy {
		// Room to spare: every step written out whole, none cut.
		if lines := cs.scheduleRows(pos, w, true); len(lines) <= h {
			return lines
		}
	}
	lines := cs.scheduleRows(pos, w, false)
	if len(lines) > h {
		// Keep the next step in sight: drop done steps from the top.
		next := min(pos+1, len(cs.runNow().Mission.Schedule)+1)
		drop := len(lines) - h
		for drop > 0 && next > 1 && len(lines) > 1 {
			lines = append(lines[:1], lines[2:]...)
			drop--
			next--
		}
	}
	return firstLines(lines, h, w, " …")
}

// scheduleRows are the schedule's title and steps: the next step written
// out whole, the others whole too if whole, else one line each.
func (cs *courseView) scheduleRows(pos, w int, whole bool) []string {
	m := cs.runNow().Mission
	lines := []string{panelTitle(*cs.st, "the schedule", fmt.Sprintf("step %d of %d", pos, len(m.Schedule)+1), false, w)}
	for i, st := range m.Schedule {
		text := termtext.CleanLine(missions.StepWords(m, st))
		if i+1 <= pos && st.Kind() == missions.StepAttempt {
			// Run: sent, or let go by, as the lab's schedule says.
			who := ""
			if len(m.Intents) > 1 {
				who = " (" + termtext.CleanLine(st.Attempt) + ")"
			}
			if heldIn(cs.view, send{i + 1, 0}) {
				text = "held, not sent" + who
			} else {
				text = "sent" + strings.TrimPrefix(text, "if sent")
			}
		}
		lines = append(lines, cs.stepRow(i+1, pos, text, w, whole)...)
	}
	return append(lines, cs.stepRow(len(m.Schedule)+1, pos, "the clock runs out: anything still running finishes", w, whole)...)
}

func (cs *courseView) stepRow(step, pos int, text string, w int, whole bool) []string {
	mark, style := "  ", cs.st.Text
	switch {
	case step <= pos:
		mark, style = "✓ ", cs.st.Done
	case step == pos+1:
		mark, style, whole = "▸ ", cs.st.Now, true
	}
	if !whole {
		return []string{style.Render(cut(fmt.Sprintf("%s%d %s", mark, step, text), w))}
	}
	// The lead is as wide as the step's number needs: "✓ 10 " is five.
	lead := fmt.Sprintf("%s%d ", mark, step)
	indent := strings.Repeat(" ", cells(lead))
	var out []string
	for i, l := range wrap(text, w-cells(lead)) {
		if i > 0 {
			lead = indent
		}
		out = append(out, style.Render(lead+l))
	}
	return out
}

// saidLine is what the agent last said, up to pos: always on screen.
func (cs *courseView) saidLine(pos int) []string {
	last := ""
	log := cs.view.Log()
	for i := range log.Len() {
		if log.Step(i) <= pos && log.Says(i) {
			last = log.At(i).Say
		}
	}
	if last == "" {
		return []string{cs.st.Subtle.Render("  the agent has said nothing yet")}
	}
	out := []string{cs.st.Subtle.Render("  the agent said:")}
	for _, l := range firstLines(wrap("“"+termtext.CleanLine(last)+"”", cs.w-4), 2, cs.w-4, "…") {
		out = append(out, "    "+cs.st.Say.Render(l))
	}
	return out
}

// questionLines are the open question and its choices in at most room
// lines where they can be: the choices go in two columns where one does
// not fit. A question is never cut.
func (cs *courseView) questionLines(room int) []string {
	q := cs.runNow().Questions[cs.next]
	n := 0
	for _, r := range cs.lessonNow().Runs {
		n += len(r.Questions)
	}
	lines := []string{panelTitle(*cs.st, fmt.Sprintf("question %d of %d", cs.asked+1, n), "", true, cs.w)}
	lines = append(lines, cs.para(q.Prompt(cs.runNow().Mission), cs.st.Title)...)
	choice := func(i, w int) string {
		return cs.st.Selected.Render(cs.labels[i]) + "  " + cs.st.Text.Render(fit(choiceText(q, cs.choices[i]), w-3))
	}
	if len(lines)+len(cs.choices) <= room {
		for i := range cs.choices {
			lines = append(lines, "    "+choice(i, cs.w-4))
		}
		return lines
	}
	half := (len(cs.choices) + 1) / 2
	colW := (cs.w - 6) / 2
	short := func(i int, w int) string {
		// Two columns are narrow: a verdict keeps its word, its
		// meaning is in the glossary (w).
		c := choiceText(q, cs.choices[i])
		if word, _, ok := strings.Cut(c, ": "); ok && ansi.StringWidth(c) > w-3 {
			c = word
		}
		return cs.st.Selected.Render(cs.labels[i]) + "  " + cs.st.Text.Render(fit(c, w-3))
	}
	choice = short
	for i := range half {
		line := "    " + choice(i, colW)
		if j := i + half; j < len(cs.choices) {
			line += "  " + choice(j, colW)
		}
		lines = append(lines, line)
	}
	return lines
}

// answerLines say whether the answer was right, why, and what the step
// did.
func (cs *courseView) answerLines(pos int) []string {
	a := cs.last
	var head string
	q := a.question
	style := cs.st.CountEqual
	if a.right() {
		head = "✓ Right: " + choiceText(q, a.choices[a.answer])
	} else {
		// The right answer first, so it is what a narrow screen keeps;
		// a verdict by its name, its meaning being in the reason below.
		style = cs.st.CountMore
		head = "✗ Not quite: it is " + choiceName(q, a.choices[a.answer]) + "; you said " + choiceName(q, a.choices[a.picked])
	}
	lines := []string{panelTitle(*cs.st, "your answer", "", false, cs.w)}
	for _, l := range firstLines(wrap(head, cs.w-4), 2, cs.w-4, "…") {
		lines = append(lines, "  "+style.Render(l))
	}
	lines = append(lines, cs.para(a.question.Why, cs.st.Text)...)
	if _, more := cs.questionAt(a.question.Step); more {
		return append(lines, cs.st.Subtle.Render("  n: one more question about this step"))
	}
	if hid, _ := hides(a.question.Kind); hid && pos >= 2 {
		// The step before the question's was run with its words hidden,
		// as they gave the answer away: what it did is said now.
		lines = append(lines, cs.happenedAs(pos-1, fmt.Sprintf("step %d: ", pos-1))...)
	}
	return append(lines, cs.happened(pos)...)
}

// stepLines say what the last step did.
func (cs *courseView) stepLines(pos int) []string {
	if pos == 0 {
		return []string{cs.st.Subtle.Render("  n runs step 1")}
	}
	return append([]string{panelTitle(*cs.st, fmt.Sprintf("step %d", pos), "", false, cs.w)}, cs.happened(pos)...)
}

// happened is the engine's own words for what step pos did.
func (cs *courseView) happened(pos int) []string { return cs.happenedAs(pos, "what happened: ") }

// happenedAs is happened with its own lead.
func (cs *courseView) happenedAs(pos int, lead string) []string {
	var notes []string
	log := cs.view.Log()
	for i := range log.Len() {
		if log.Step(i) != pos || log.Kind(i) == missions.EventCheckpoint {
			continue
		}
		if ev := log.At(i); ev.Note != "" {
			notes = append(notes, termtext.CleanLine(ev.Note))
		}
	}
	if len(notes) == 0 {
		return nil
	}
	out := []string{}
	for _, l := range firstLines(wrap(lead+strings.Join(notes, "; "), cs.w-2), 3, cs.w-2, "…") {
		out = append(out, "  "+cs.st.Subtle.Render(l))
	}
	return out
}

func (cs *courseView) runEndLines() []string {
	c := cs.view
	lines := []string{panelTitle(*cs.st, "run "+cs.runNow().Name+" is over", "", false, cs.w)}
	for _, v := range c.Outcome.Verdicts {
		who := ""
		if len(c.Outcome.Verdicts) > 1 {
			// Several intents: each line says whose verdict it is.
			who = termtext.CleanLine(v.Intent) + ": "
		}
		for i, l := range wrap(who+string(v.Verdict)+": "+v.Explain(), cs.w-4) {
			if i == 0 {
				l = strings.TrimPrefix(l, who)
				word, rest, _ := strings.Cut(l, ":")
				lines = append(lines, "  "+cs.st.Text.Render(who)+cs.st.verdictStyle(v.Verdict).Render(word)+cs.st.Text.Render(":"+rest))
				continue
			}
			lines = append(lines, "    "+cs.st.Text.Render(l))
		}
	}
	// The path whole, over as many lines as it takes: it is where to
	// look for the file.
	for _, l := range wrap("n writes the run's case as JSON to "+cs.dir+" and goes on", cs.w-2) {
		lines = append(lines, cs.st.Subtle.Render("  "+l))
	}
	return lines
}

func (cs *courseView) compareLines() []string {
	lines := []string{cs.titleLine(), cs.st.Subtle.Render(cut("The runs side by side: the same words, different ledgers.", cs.w)), ""}
	lines = append(lines, strings.Split(cs.compare.View(), "\n")...)
	// What a ◆ on the rows means the view says itself, as the lab's does.
	return append(lines, cs.st.Subtle.Render("n goes on"))
}

func (cs *courseView) closingView() []string {
	l := cs.lessonNow()
	lines := []string{cs.titleLine(), ""}
	lines = append(lines, cs.para(l.Closing, cs.st.Title)...)
	lines = append(lines, "", "  "+cs.st.Text.Render(fmt.Sprintf("You answered %d of %d right.", cs.right, cs.asked)))
	if cs.dir != "" {
		for _, l := range wrap("The cases of its runs are written as JSON in "+cs.dir+".", cs.w-2) {
			lines = append(lines, "  "+cs.st.Subtle.Render(l))
		}
	}
	if cs.lesson+1 < len(cs.c.Lessons) {
		lines = append(lines, "", cs.st.Subtle.Render(cut(fmt.Sprintf("  n: lesson %d, %s · esc: all lessons", cs.lesson+2, cs.c.Lessons[cs.lesson+1].Title), cs.w)))
	} else {
		var undone []int
		for i, l := range cs.c.Lessons {
			if !cs.prog.Lessons[l.ID].Done {
				undone = append(undone, i+1)
			}
		}
		last := "That was the last lesson, and every lesson is done. n shows them all."
		switch {
		case len(undone) == 1:
			last = fmt.Sprintf("That was the last lesson; lesson %d is not done yet: n shows the list.", undone[0])
		case len(undone) > 1:
			last = fmt.Sprintf("That was the last lesson; lessons %s are not done yet: n shows the list.", spans(undone))
		}
		for _, l := range wrap(strings.TrimSpace(last), cs.w-2) {
			lines = append(lines, cs.st.Subtle.Render("  "+l))
		}
	}
	return lines
}

// spans names ascending numbers by their runs: "2–10", "2, 4–6 and 9".
func spans(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d–%d", ns[i], ns[j]))
		} else {
			parts = append(parts, fmt.Sprint(ns[i]))
		}
		i = j + 1
	}
	return termtext.AndList(parts)
}
