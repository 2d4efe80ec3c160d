package render

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// MissionList is `replaylab missions`: each mission's id, title and the
// first sentence of its goal, in lines at most width wide; a long id on
// a narrow line puts the title and goal under it.
func MissionList(cat *missions.Catalog, width int) string {
	var b strings.Builder
	idWidth := 0
	for _, m := range cat.Missions {
		idWidth = max(idWidth, ansi.StringWidth(termtext.CleanLine(m.ID)))
	}
	indentW := idWidth + 2
	if width-indentW < 30 {
		indentW = 4
	}
	indent := strings.Repeat(" ", indentW)
	for _, m := range cat.Missions {
		id := termtext.CleanLine(m.ID)
		var text []string
		if indentW == idWidth+2 {
			text = append(termtext.Wrap(termtext.CleanLine(m.Title), width-indentW), "")
			fmt.Fprintf(&b, "%s%s  %s\n", id, strings.Repeat(" ", idWidth-ansi.StringWidth(id)), text[0])
			text = text[1 : len(text)-1]
		} else {
			fmt.Fprintln(&b, id)
			text = termtext.Wrap(termtext.CleanLine(m.Title), width-indentW)
		}
		text = append(text, termtext.Wrap(GoalLine(m.Goal), width-indentW)...)
		for _, line := range text {
			fmt.Fprintf(&b, "%s%s\n", indent, line)
		}
	}
	return b.String()
}

// GoalLine is the first sentence of a mission's goal, cleaned, on one line:
// the goal is wrapped prose, so its first sentence says more than its
// first line.
func GoalLine(goal string) string {
	g := strings.Join(strings.Fields(termtext.CleanLine(goal)), " ")
	if i := strings.Index(g, ". "); i >= 0 {
		g = g[:i+1]
	}
	return g
}
