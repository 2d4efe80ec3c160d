package lab

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
	"github.com/replaylab/replaylab/render"
)

// chooserKeys are the provider chooser's own keys.
type chooserKeys struct {
	Up, Down key.Binding
	Choose   key.Binding
	Back     key.Binding
}

func newChooserKeys() chooserKeys {
	return chooserKeys{
		Up:     key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/↓", "move")),
		Down:   key.NewBinding(key.WithKeys("down", "j")),
		Choose: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run under it")),
		Back:   key.NewBinding(key.WithKeys("esc", "C"), key.WithHelp("esc", "back")),
	}
}

// providerChooser is the screen C opens on a run: every built-in profile,
// one line each, and the selected one's rules in words under the list.
// enter runs the mission under it; esc goes back unchanged.
type providerChooser struct {
	st   *Styles
	keys chooserKeys
	ps   []*ledger.Profile
	sel  int
	// own is the mission's own provider, marked in the list.
	own  ledger.Contract
	w, h int
}

func newProviderChooser(st *Styles) providerChooser {
	return providerChooser{st: st, keys: newChooserKeys(), ps: providers.Builtins()}
}

// Open selects the profile the run plays now, and marks the mission's
// own.
func (c *providerChooser) Open(s missions.Settings, own ledger.Contract) {
	c.sel, c.own = 0, own
	if c.own == "" {
		c.own = ledger.V1
	}
	for i, p := range c.ps {
		if providers.CaseName(p) == s.Contract {
			c.sel = i
		}
	}
}

func (c *providerChooser) SetSize(w, h int) { c.w, c.h = w, h }

// chosen is what a key of the chooser decided: a profile to run under,
// or to go back; neither while the cursor moves.
type chosen struct {
	contract ledger.Contract
	pick     bool
	back     bool
}

// Update takes a key of the chooser.
func (c providerChooser) Update(k tea.KeyMsg) (providerChooser, chosen) {
	switch {
	case key.Matches(k, c.keys.Up):
		c.sel = (c.sel + len(c.ps) - 1) % len(c.ps)
	case key.Matches(k, c.keys.Down):
		c.sel = (c.sel + 1) % len(c.ps)
	case key.Matches(k, c.keys.Choose):
		return c, chosen{contract: providers.CaseName(c.ps[c.sel]), pick: true}
	case key.Matches(k, c.keys.Back):
		return c, chosen{back: true}
	}
	return c, chosen{}
}

func (c providerChooser) ShortHelp() []key.Binding {
	return []key.Binding{c.keys.Up, c.keys.Choose, c.keys.Back}
}
func (c providerChooser) FullHelp() [][]key.Binding { return [][]key.Binding{c.ShortHelp()} }

// View is the list, then as much of the selected profile's rules as fits.
func (c *providerChooser) View() string {
	idW := 0
	for _, p := range c.ps {
		idW = max(idW, len(p.ID))
	}
	lines := []string{panelTitle(*c.st, "the provider's contract", fmt.Sprintf("* the mission's own · %d of %d", c.sel+1, len(c.ps)), true, c.w)}
	for i, p := range c.ps {
		mark, style := "  ", c.st.Text
		if i == c.sel {
			mark, style = "▸ ", c.st.Selected
		}
		id := p.ID
		if providers.CaseName(p) == c.own {
			id += "*"
		}
		line := fmt.Sprintf("%s%-*s  %s", mark, idW+1, id, termtext.CleanLine(p.Summary))
		lines = append(lines, style.Render(cut(line, c.w)))
	}
	p := c.ps[c.sel]
	detail := []string{"", c.st.Title.Render(cut(p.ID+": "+termtext.CleanLine(p.Title), c.w))}
	// The rules that tell providers apart first, each label in a column
	// of its own, as replaylab providers prints them.
	rules := render.ProfileRules(p)
	first := map[string]int{"saves": 0, "replay": 1, "in_flight": 2, "failed_key": 3, "mismatch": 4, "retention": 5, "key": 6, "refund_limit": 7}
	slices.SortStableFunc(rules, func(a, b render.Rule) int { return first[a.Field] - first[b.Field] })
	room := c.h - len(lines) - len(detail)
	const label = 14
	for i, r := range rules {
		text := wrap(r.Value+": "+r.Words, max(20, c.w-label))
		if need := len(text) + 1; (i == len(rules)-1 && room < len(text)) || (i < len(rules)-1 && room < need) {
			detail = append(detail, c.st.Subtle.Render(cut(fmt.Sprintf("… %d more: replaylab providers %s prints them all", len(rules)-i, p.ID), c.w)))
			room = 0
			break
		}
		for j, l := range text {
			head := fmt.Sprintf("%-*s", label, r.Field)
			if j > 0 {
				head = strings.Repeat(" ", label)
			}
			detail = append(detail, c.st.Text.Render(cut(head+l, c.w)))
		}
		room -= len(text)
	}
	if len(p.Assumed) > 0 && room > 0 {
		fields := make([]string, len(p.Assumed))
		for i, a := range p.Assumed {
			fields[i] = a.Field
		}
		detail = append(detail, c.st.Subtle.Render(cut("assumed (not in the provider's own pages): "+strings.Join(fields, ", "), c.w)))
	}
	// The list is whole; the rules fill what is left, cut where the box
	// ends (replaylab providers NAME prints them all).
	lines = append(lines, detail...)
	return box(lines, c.w, c.h)
}
