package lab

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/replaylab/replaylab/missions"
)

// glossaryKeys are the glossary screen's own keys.
type glossaryKeys struct {
	Scroll key.Binding
	Page   key.Binding
	Back   key.Binding
}

func newGlossaryKeys() glossaryKeys {
	return glossaryKeys{
		Scroll: key.NewBinding(key.WithKeys("up", "down", "k", "j"), key.WithHelp("↑/↓", "scroll")),
		Page:   key.NewBinding(key.WithKeys("pgup", "pgdown", " "), key.WithHelp("pgup/dn", "page")),
		Back:   key.NewBinding(key.WithKeys("esc", "w"), key.WithHelp("esc", "back")),
	}
}

// glossary is the screen of every word the lab shows, in bubbles'
// viewport.
type glossary struct {
	st   *Styles
	keys glossaryKeys
	vp   viewport.Model
	w, h int
}

func newGlossary(st *Styles) glossary {
	return glossary{st: st, keys: newGlossaryKeys(), vp: viewport.New(0, 0)}
}

func (g *glossary) SetSize(w, h int) {
	g.w, g.h = w, h
	g.vp.Width, g.vp.Height = w, max(0, h-1)
	g.vp.SetContent(strings.Join(g.lines(), "\n"))
}

// lines are the terms, each word on its line and its meaning wrapped
// under it.
func (g *glossary) lines() []string {
	var out []string
	for _, t := range missions.Glossary {
		out = append(out, g.st.Selected.Render(cut(t.Word, g.w)))
		for _, l := range wrap(t.Meaning, g.w-4) {
			out = append(out, "    "+g.st.Text.Render(l))
		}
	}
	return out
}

func (g glossary) Update(msg tea.Msg) (glossary, tea.Cmd) {
	var cmd tea.Cmd
	g.vp, cmd = g.vp.Update(msg)
	return g, cmd
}

func (g glossary) ShortHelp() []key.Binding {
	return []key.Binding{g.keys.Scroll, g.keys.Page, g.keys.Back}
}
func (g glossary) FullHelp() [][]key.Binding { return [][]key.Binding{g.ShortHelp()} }

func (g *glossary) View() string {
	note := ""
	if !g.vp.AtTop() || !g.vp.AtBottom() {
		note = percent(g.vp.ScrollPercent()) + " ↕"
	}
	title := panelTitle(*g.st, "words the lab uses", note, false, g.w)
	return box(append([]string{title}, strings.Split(g.vp.View(), "\n")...), g.w, g.h)
}

func percent(f float64) string { return fmt.Sprintf("%d%%", int(f*100)) }
