package lab

import (
	"fmt"
	"sort"

	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/reproduce"
)

// schedulePanel lists the mission's steps with the current one marked.
// A step of two workers sending together takes a line per worker. The
// lines are built once per mission; only those that fit, around the
// current step, are drawn.
type schedulePanel struct {
	noKeys
	st    *Styles
	w, h  int
	lines []schedLine // the settle step last
	steps int
	pos   int
	// full is the whole run, where the sends the caller held back are
	// read: the schedule offered them, the caller did not send. The
	// timeline shows each as a "hold" row.
	full *missions.Case
}

// send names one send the schedule offers: its step (from 1) and its
// worker (0 for a lone attempt, from 1 in a together step).
type send struct{ step, worker int }

// schedLine is one line of the schedule: the first line of a step carries
// its number, the lines of its workers follow indented.
type schedLine struct {
	step  int // 1-based
	first bool
	text  string
	// worker is the worker that sends on this line: 0 for a lone attempt,
	// from 1 for the lines of a together step, -1 where nothing is sent.
	worker int
}

func newSchedulePanel(st *Styles) schedulePanel { return schedulePanel{st: st} }

func (p *schedulePanel) SetSize(w, h int) { p.w, p.h = w, h }

// SetMission builds the step lines once per mission.
func (p *schedulePanel) SetMission(m *missions.Mission) {
	p.lines = stepLines(m)
	p.steps = len(m.Schedule) + 1
}

// SetRecorded builds the step lines of a recorded client's run: its
// requests.
func (p *schedulePanel) SetRecorded(run *reproduce.SessionRun) {
	p.lines = recordedLines(run)
	p.steps = len(run.Steps) + 1
}

// SetRun marks how many steps have run, and gives the whole run, where
// the steps the caller held back are read: a step's holds are the same at
// every position after it.
func (p *schedulePanel) SetRun(full *missions.Case, pos int) {
	p.pos, p.full = pos, full
}

// heldIn reports whether the caller held back send s in c: whether a hold
// event of s's worker is among step s's events, which a search finds, as
// events come in the order of their steps. Only the lines drawn ask.
func heldIn(c *missions.Case, s send) bool {
	if c == nil {
		return false
	}
	log := c.Log()
	n := log.Len()
	for i := sort.Search(n, func(i int) bool { return log.Step(i) >= s.step }); i < n && log.Step(i) == s.step; i++ {
		if log.Kind(i) == missions.EventHold && log.Worker(i) == s.worker {
			return true
		}
	}
	return false
}

// heldAt is how many of step pos's sends the caller held back in c, read
// from the events at the end of c, which are that step's.
func heldAt(c *missions.Case, pos int) int {
	n, log := 0, c.Log()
	for i := log.Len() - 1; i >= 0 && log.Step(i) == pos; i-- {
		if log.Kind(i) == missions.EventHold {
			n++
		}
	}
	return n
}

// heldWords says how many of a step's sends were held back: "held" when
// the step had one send to make, "1 of 2 held" for workers sending
// together.
func heldWords(held, sends int) string {
	if sends <= 1 {
		return "held"
	}
	return fmt.Sprintf("%d of %d held", min(held, sends), sends)
}

// sendsOf is how many sends a step offers.
func sendsOf(st missions.Step) int {
	switch st.Kind() {
	case missions.StepAttempt:
		return 1
	case missions.StepTogether:
		return len(st.Together)
	}
	return 0
}

// current is the last line of the current step (0 before the first),
// found by halving since the lines are in step order.
func (p *schedulePanel) current() int {
	i := sort.Search(len(p.lines), func(i int) bool { return p.lines[i].step > p.pos })
	return max(0, i-1)
}

// Height is how many lines the panel needs to show every step.
func (p *schedulePanel) Height() int { return 1 + len(p.lines) }

// stepLines renders each runner step in a few words, the settle step last.
func stepLines(m *missions.Mission) []schedLine {
	many := len(m.Intents) > 1
	out := make([]schedLine, 0, len(m.Schedule)+1)
	for i, st := range m.Schedule {
		if st.Kind() != missions.StepTogether {
			worker := 0
			if sendsOf(st) == 0 {
				worker = -1
			}
			text := termtext.CleanLine(shortStep(st, many))
			if editedStep(m, i+1) {
				text += editedTag
			}
			out = append(out, schedLine{step: i + 1, first: true, text: text, worker: worker})
			continue
		}
		out = append(out, schedLine{step: i + 1, first: true, text: fmt.Sprintf("together, %d workers:", len(st.Together)), worker: -1})
		for j, tg := range st.Together {
			branch := "├ "
			if j == len(st.Together)-1 {
				branch = "└ "
			}
			out = append(out, schedLine{step: i + 1, text: branch + termtext.CleanLine(shortStep(tg, many)), worker: j + 1})
		}
	}
	return append(out, schedLine{step: len(m.Schedule) + 1, first: true, text: "clock runs out", worker: -1})
}

// editedTag marks a step whose fixture was replaced in the lab (f).
const editedTag = " ✎"

// editedStep reports whether step n (from 1) of m was edited.
func editedStep(m *missions.Mission, n int) bool {
	if m.Edited == nil {
		return false
	}
	for _, e := range m.Edited.Steps {
		if e.Step == n {
			return true
		}
	}
	return false
}

// shortStep renders a step compactly: the fixture first, since that is
// what changes from step to step; the intent only when there are several.
func shortStep(st missions.Step, manyIntents bool) string {
	return st.Phrase(func(a missions.Step) string {
		s := string(a.Fixture)
		if a.Delay > 0 {
			s += fmt.Sprintf(" +%d", a.Delay)
			if a.Resolve != 0 {
				s += "→" + a.Resolve.String()
			}
		}
		if len(a.Payload) > 0 {
			s += ", new payload"
		}
		if manyIntents {
			s = a.Attempt + ": " + s
		}
		return s
	})
}

// Width is how many cells the panel needs to show every line whole for
// the run c, with the held marks c's steps will get: it does not change
// as the run steps.
func (p *schedulePanel) Width(c *missions.Case) int {
	numW := len(fmt.Sprint(p.steps))
	w := 0
	for _, l := range p.lines {
		n := 2 + numW + 1 + ansi.StringWidth(l.text)
		if heldIn(c, send{l.step, l.worker}) {
			n += ansi.StringWidth(heldTag)
		}
		w = max(w, n)
	}
	return w
}

// heldTag marks a line whose send the caller held back.
const heldTag = " · held"

// heldOn reports whether the send on line l was held back, once its step
// has run.
func (p *schedulePanel) heldOn(l schedLine) bool {
	return l.step <= p.pos && heldIn(p.full, send{l.step, l.worker})
}

func (p *schedulePanel) View() string {
	if p.w <= 0 || p.h <= 0 {
		return ""
	}
	n := len(p.lines)
	lines := []string{panelTitle(*p.st, "schedule", fmt.Sprintf("%d/%d", p.pos, p.steps), false, p.w)}
	rows := p.h - 1
	// A window around the current step, so the next one shows too.
	start := clamp(p.current()-rows/2, 0, max(0, n-rows))
	end := min(n, start+rows)
	numW := len(fmt.Sprint(p.steps))
	for i := start; i < end; i++ {
		l := p.lines[i]
		mark, style := " ", p.st.Text
		switch {
		case l.step == p.pos:
			mark, style = "▶", p.st.Now
		case l.step < p.pos:
			mark, style = "✓", p.st.Done
		case l.step == p.pos+1:
			mark, style = "›", p.st.Text
		}
		text := fmt.Sprintf("%s %*d %s", mark, numW, l.step, l.text)
		if !l.first {
			text = fmt.Sprintf("  %*s %s", numW, "", l.text)
		}
		// A send held back says so, on its own line: the fixture it
		// names never met a request. The words give way, not the mark.
		if p.heldOn(l) {
			text = cut(text, max(0, p.w-ansi.StringWidth(heldTag))) + heldTag
		}
		lines = append(lines, style.Render(cut(text, p.w)))
	}
	return box(lines, p.w, p.h)
}
