package lab

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// settleLabel names the step after the schedule, where the clock runs
// until late commits and pending objects land.
const settleLabel = "after the schedule: clock runs out"

// schedulePanel lists the mission's steps with the current one marked.
// Only the lines that fit are built, around the current step.
type schedulePanel struct {
	st      *Styles
	w, h    int
	labels  []string // one per runner step, the settle step last
	pos     int
	focused bool
}

func newSchedulePanel(st *Styles) schedulePanel { return schedulePanel{st: st} }

func (p *schedulePanel) SetSize(w, h int)          { p.w, p.h = w, h }
func (p *schedulePanel) ShortHelp() []key.Binding  { return nil }
func (p *schedulePanel) FullHelp() [][]key.Binding { return nil }

// SetMission builds the step labels once per mission.
func (p *schedulePanel) SetMission(m *missions.Mission) {
	p.labels = stepLabels(m)
}

// SetPosition marks how many steps have run.
func (p *schedulePanel) SetPosition(pos int) { p.pos = pos }

// stepLabels renders each runner step in a few words, the settle step last.
func stepLabels(m *missions.Mission) []string {
	many := len(m.Intents) > 1
	out := make([]string, 0, len(m.Schedule)+1)
	for _, st := range m.Schedule {
		out = append(out, export.CleanLine(shortStep(st, many)))
	}
	return append(out, "clock runs out")
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
			s += " (new payload)"
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
		return "together " + strings.Join(parts, " | ")
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
	n := len(p.labels)
	lines := []string{panelTitle(*p.st, "schedule", fmt.Sprintf("%d/%d", p.pos, n), p.focused, p.w)}
	rows := p.h - 1
	// A window around the current step, so the next one shows too.
	start := clamp(p.pos-rows/2, 0, max(0, n-rows))
	end := min(n, start+rows)
	numW := len(fmt.Sprint(n))
	for i := start; i < end; i++ {
		step := i + 1
		mark, style := " ", p.st.Text
		switch {
		case step == p.pos:
			mark, style = "▶", p.st.Now
		case step < p.pos:
			mark, style = "✓", p.st.Done
		case step == p.pos+1:
			mark, style = "›", p.st.Text
		}
		text := fmt.Sprintf("%s %*d %s", mark, numW, step, p.labels[i])
		lines = append(lines, style.Render(cut(text, p.w)))
	}
	return box(lines, p.w, p.h)
}
