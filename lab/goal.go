package lab

import "github.com/replaylab/replaylab/missions"

// goalPanel shows what the open mission sets out to show. The lab gives it
// only the lines the other panels leave over, so it fills what would be
// blank and never takes room from the run.
type goalPanel struct {
	noKeys
	st   *Styles
	w, h int
	text string
}

func newGoalPanel(st *Styles) goalPanel { return goalPanel{st: st} }

func (p *goalPanel) SetSize(w, h int) { p.w, p.h = w, h }

// SetMission takes the mission's teaching goal as one paragraph.
func (p *goalPanel) SetMission(m *missions.Mission) {
	p.text = paragraph(m.Goal)
}

// Height is how many lines the whole goal takes at width w, with its title.
func (p *goalPanel) Height(w int) int {
	if p.text == "" {
		return 0
	}
	return 1 + len(wrap(p.text, w))
}

func (p *goalPanel) View() string {
	if p.w <= 0 || p.h <= 0 {
		return ""
	}
	lines := []string{panelTitle(*p.st, "what this mission shows", "", false, p.w)}
	for _, l := range firstLines(wrap(p.text, p.w), p.h-1, p.w, " …") {
		lines = append(lines, p.st.Subtle.Render(l))
	}
	return box(lines, p.w, p.h)
}
