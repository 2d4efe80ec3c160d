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
	for _, l := range p.fit(p.h - 1) {
		lines = append(lines, p.st.Subtle.Render(l))
	}
	return box(lines, p.w, p.h)
}

// fit is the goal in at most n lines: whole, or the whole sentences that
// fit, marked as going on, rather than a sentence cut in its middle; a
// first sentence too long for the lines is cut where they end.
func (p *goalPanel) fit(n int) []string {
	if all := wrap(p.text, p.w); len(all) <= n {
		return all
	}
	var best []string
	for i := 0; i < len(p.text); i++ {
		if p.text[i] != '.' || (i+1 < len(p.text) && p.text[i+1] != ' ') {
			continue
		}
		lines := wrap(p.text[:i+1]+" …", p.w)
		if len(lines) > n {
			break
		}
		best = lines
	}
	if best != nil {
		return best
	}
	return firstLines(wrap(p.text, p.w), n, p.w, " …")
}
