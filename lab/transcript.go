package lab

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// said is one thing the agent told the user, with the ledger's effect
// count at that moment. Its words are made when it is drawn: a long run
// says thousands of things and the panel shows a few.
type said struct {
	// attempt is 2 for words said at the step of attempt 2, in answer to
	// it, and 0 for words said at a later step (after a read-back, a
	// restart, the clock running out) or before any attempt, which carry
	// their tick instead, as the timeline's rows do.
	attempt, tick int
	effects       int
	step          int
	event         int // the index of the event that said it
}

// who is "#2" for words said in answer to attempt 2, else "t3" for the
// tick they were said at.
func (e said) who() string {
	if e.attempt > 0 {
		return "#" + strconv.Itoa(e.attempt)
	}
	return "t" + strconv.Itoa(e.tick)
}

// transcript shows what the agent told the user, newest last, each line
// with what the ledger held when it was said: the words beside the truth.
type transcript struct {
	st    *Styles
	keys  scrollKeys
	w, h  int
	lines []said
	pos   int
	// back is how many of the newest entries are scrolled out of sight
	// below, with ↑ while the panel has the keys; a step brings the
	// newest back.
	back    int
	focused bool
	// log holds the events the lines were read from.
	log missions.EventLog
	// recorded: the run is a recorded client's, whose words the session
	// does not keep.
	recorded bool
}

func newTranscript(st *Styles) transcript { return transcript{st: st, keys: newScrollKeys()} }

func (p *transcript) ShortHelp() []key.Binding  { return []key.Binding{p.keys.Up} }
func (p *transcript) FullHelp() [][]key.Binding { return [][]key.Binding{{p.keys.Up}} }

// Update scrolls the entries, one an arrow, with the panel focused.
func (p transcript) Update(msg tea.Msg) (transcript, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		switch n := p.keys.scroll(k, 1); {
		case n < 0:
			p.back = min(p.back+1, max(0, len(p.lines)-1))
		case n > 0:
			p.back = max(p.back-1, 0)
		}
	}
	return p, nil
}

func (p *transcript) SetSize(w, h int) { p.w, p.h = w, h }

// Scrolls reports whether some of what the agent said is out of sight:
// its entries, whole, are taller than the panel.
func (p *transcript) Scrolls() bool { return p.Height(p.h+1) > p.h }

// SetCase collects what the agent said in c. It runs once per change of
// the case, never while drawing. A case that only extends the last one
// adds the words of its new events; one moved back drops those after it.
func (p *transcript) SetCase(c *missions.Case, pos int) {
	if pos != p.pos {
		p.back = 0
	}
	p.pos = pos
	log := c.Log()
	from := 0
	if p.log.Shares(log) {
		from = min(p.log.Len(), log.Len())
	}
	k := len(p.lines)
	for k > 0 && p.lines[k-1].event >= from {
		k--
	}
	p.lines = p.lines[:k]
	p.log = log
	for i := log.NextSaid(from); i < log.Len(); i = log.NextSaid(i + 1) {
		step := log.Step(i)
		e := said{tick: log.Tick(i), effects: log.Effects(i), step: step, event: i}
		// Words said at the step of an attempt answer it: the last
		// attempt up to them, within their step.
		for j := i; j >= 0 && log.Step(j) == step; j-- {
			if a := log.Attempt(j); a > 0 {
				e.attempt = a
				break
			}
		}
		p.lines = append(p.lines, e)
	}
}

// block is the lines of one entry: the words, wrapped, then what the
// ledger held when they were said. With rows > 0 and the entry taller, it
// keeps rows lines: the words from their start, cut and marked where they
// go on, then the ledger's line.
func (p *transcript) block(e said, rows int) []string {
	style := p.st.Done
	if e.step == p.pos {
		style = p.st.Say
	}
	prefix := e.who() + " "
	indent := fit("", len(prefix))
	words := wrap(p.text(e), p.w-len(prefix))
	if rows > 0 && rows-1 < len(words) {
		// Too tall for the rows left: the words from their first, cut
		// and marked where they go on, and the ledger's line, so the
		// sentence still reads from its start beside what the ledger held.
		words = words[:max(1, rows-1)]
		words[len(words)-1] = withMark(words[len(words)-1], " …", p.w-len(prefix))
	}
	b := make([]string, 0, len(words)+1)
	for j, l := range words {
		lead := indent
		if j == 0 {
			lead = p.st.Subtle.Render(prefix)
		}
		b = append(b, lead+style.Render(l))
	}
	then := "ledger then: " + termtext.Plural(e.effects, "effect")
	if len(prefix)+lipgloss.Width(then) > p.w {
		then = "ledger: " + termtext.Plural(e.effects, "effect")
	}
	return append(b, indent+p.st.Subtle.Render(then))
}

// text is what the agent said in e, made from its event.
func (p *transcript) text(e said) string { return termtext.CleanLine(p.log.At(e.event).Say) }

// Height is how many lines the panel needs to show every entry at its
// width, counting no further than limit.
func (p *transcript) Height(limit int) int {
	n := 2 // the title and "nothing yet"
	if len(p.lines) > 0 {
		n = 1
	}
	for i := len(p.lines) - 1; i >= 0 && n <= limit; i-- {
		n += len(p.block(p.lines[i], 0))
	}
	return min(n, limit)
}

// View draws the newest entries that fit, building only those.
func (p *transcript) View() string {
	if p.w <= 0 || p.h <= 0 {
		return ""
	}
	rows := p.h - 1
	if len(p.lines) == 0 {
		title := panelTitle(*p.st, "the agent said", "", false, p.w)
		none := "nothing yet"
		if p.recorded {
			none = "your client's words are not in the session: it keeps what reached the provider"
		}
		lines := []string{title}
		for _, l := range wrap(none, p.w) {
			lines = append(lines, p.st.Subtle.Render(l))
		}
		return box(lines, p.w, p.h)
	}
	var blocks [][]string
	used, shown := 0, 0
	newest := len(p.lines) - 1 - min(p.back, len(p.lines)-1)
	for i := newest; i >= 0 && used < rows; i-- {
		b := p.block(p.lines[i], 0)
		if used+len(b) > rows && len(blocks) > 0 {
			// The start of the entry before fills the rows left, with
			// its "ledger then" line.
			if left := rows - used; left >= 2 {
				blocks = append(blocks, p.block(p.lines[i], left))
				used += left
			}
			break
		}
		blocks = append(blocks, b)
		used += len(b)
		shown++
	}
	note := ""
	if earlier := newest + 1 - shown; earlier > 0 {
		note = fmt.Sprintf("↑%d more", earlier)
	}
	if later := len(p.lines) - 1 - newest; later > 0 {
		note = strings.TrimSpace(note + fmt.Sprintf(" ↓%d", later))
	}
	lines := []string{panelTitle(*p.st, "the agent said", note, p.focused, p.w)}
	if used > rows {
		// The newest entry alone is taller than the panel: its words
		// from the start, the last line marked where they go on, so what
		// the agent said last is read from its first word.
		b := p.block(p.lines[newest], 0)
		if len(b) > rows && rows > 0 {
			b = append(b[:rows-1:rows-1], withMark(b[rows-1], " …", p.w))
		}
		lines = append(lines, b...)
		return box(lines, p.w, p.h)
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		lines = append(lines, blocks[i]...)
	}
	return box(lines, p.w, p.h)
}
