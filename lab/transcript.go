package lab

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// said is one thing the agent told the user, with the ledger's effect
// count at that moment.
type said struct {
	who     string // "#2" for the attempt it follows, or the tick
	text    string
	effects int
	step    int
}

// transcript shows what the agent told the user, newest last, each line
// with what the ledger held when it was said: the words beside the truth.
type transcript struct {
	st      *Styles
	w, h    int
	lines   []said
	pos     int
	focused bool
}

func newTranscript(st *Styles) transcript { return transcript{st: st} }

func (p *transcript) SetSize(w, h int)          { p.w, p.h = w, h }
func (p *transcript) ShortHelp() []key.Binding  { return nil }
func (p *transcript) FullHelp() [][]key.Binding { return nil }

// SetCase collects what the agent said in c. It runs once per change of
// the case, never while drawing.
func (p *transcript) SetCase(c *missions.Case, pos int) {
	p.pos = pos
	p.lines = p.lines[:0]
	attempt := 0
	for i := range c.Events {
		ev := &c.Events[i]
		if ev.Attempt > 0 {
			attempt = ev.Attempt
		}
		if ev.Say == "" {
			continue
		}
		who := fmt.Sprintf("t%d", ev.Tick)
		if attempt > 0 {
			who = fmt.Sprintf("#%d", attempt)
		}
		p.lines = append(p.lines, said{who: who, text: export.CleanLine(ev.Say), effects: ev.Effects, step: ev.Step})
	}
}

// View draws the newest entries that fit, building only those.
func (p *transcript) View() string {
	if p.w <= 0 || p.h <= 0 {
		return ""
	}
	title := panelTitle(*p.st, "the agent said", "", p.focused, p.w)
	rows := p.h - 1
	if len(p.lines) == 0 {
		return box([]string{title, p.st.Subtle.Render(cut("nothing yet", p.w))}, p.w, p.h)
	}
	var blocks [][]string
	used := 0
	for i := len(p.lines) - 1; i >= 0 && used < rows; i-- {
		e := p.lines[i]
		style := p.st.Done
		if e.step == p.pos {
			style = p.st.Say
		}
		var b []string
		prefix := e.who + " "
		for j, l := range wrap(e.text, p.w-len(prefix)) {
			if j == 0 {
				b = append(b, p.st.Subtle.Render(prefix)+style.Render(l))
			} else {
				b = append(b, fit("", len(prefix))+style.Render(l))
			}
		}
		b = append(b, fit("", len(prefix))+p.st.Subtle.Render("ledger then: "+plural(e.effects, "effect")))
		if used+len(b) > rows && len(blocks) > 0 {
			break
		}
		blocks = append(blocks, b)
		used += len(b)
	}
	lines := []string{title}
	if used > rows {
		// The newest entry alone is taller than the panel: show its end.
		b := blocks[0]
		lines = append(lines, b[len(b)-rows:]...)
		return box(lines, p.w, p.h)
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		lines = append(lines, blocks[i]...)
	}
	return box(lines, p.w, p.h)
}
