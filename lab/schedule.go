package lab

import (
	"fmt"
	"sort"
	"strings"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
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
}

// schedLine is one line of the schedule: the first line of a step carries
// its number, the lines of its workers follow indented.
type schedLine struct {
	step  int // 1-based
	first bool
	text  string
}

func newSchedulePanel(st *Styles) schedulePanel { return schedulePanel{st: st} }

func (p *schedulePanel) SetSize(w, h int) { p.w, p.h = w, h }

// SetMission builds the step lines once per mission.
func (p *schedulePanel) SetMission(m *missions.Mission) {
	p.lines = stepLines(m)
	p.steps = len(m.Schedule) + 1
}

// SetPosition marks how many steps have run.
func (p *schedulePanel) SetPosition(pos int) { p.pos = pos }

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
			out = append(out, schedLine{step: i + 1, first: true, text: export.CleanLine(shortStep(st, many))})
			continue
		}
		out = append(out, schedLine{step: i + 1, first: true, text: fmt.Sprintf("together, %d workers:", len(st.Together))})
		for j, tg := range st.Together {
			branch := "├ "
			if j == len(st.Together)-1 {
				branch = "└ "
			}
			out = append(out, schedLine{step: i + 1, text: branch + export.CleanLine(shortStep(tg, many))})
		}
	}
	return append(out, schedLine{step: len(m.Schedule) + 1, first: true, text: "clock runs out"})
}

// shortStep renders a step compactly: the fixture first, since that is
// what changes from step to step; the intent only when there are several.
func shortStep(st missions.Step, manyIntents bool) string {
	switch st.Kind() {
	case missions.StepAttempt:
		s := string(st.Fixture)
		if st.Delay > 0 {
			s += fmt.Sprintf(" +%d", st.Delay)
			if st.Resolve != 0 {
				s += "→" + st.Resolve.String()
			}
		}
		if len(st.Payload) > 0 {
			s += ", new payload"
		}
		if manyIntents {
			s = st.Attempt + ": " + s
		}
		return s
	case missions.StepTogether:
		parts := make([]string, len(st.Together))
		for i, t := range st.Together {
			parts[i] = shortStep(t, manyIntents)
		}
		return "together: " + strings.Join(parts, " | ")
	case missions.StepWait:
		return fmt.Sprintf("wait %d ticks", st.Wait)
	case missions.StepRead:
		return "read back " + st.Read
	case missions.StepRestart:
		return "restart the caller"
	}
	return st.String()
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
		lines = append(lines, style.Render(cut(text, p.w)))
	}
	return box(lines, p.w, p.h)
}
