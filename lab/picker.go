package lab

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/list"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// pickerDetailMin is the width from which the picker shows the selected
// mission in full beside the list.
const pickerDetailMin = 110

// missionItem is one mission in the picker.
type missionItem struct {
	m     *missions.Mission
	title string
	goal  string
}

func newMissionItem(m *missions.Mission) missionItem {
	return missionItem{
		m:     m,
		title: termtext.CleanLine(m.Title),
		goal:  paragraph(m.Goal),
	}
}

// FilterValue is the text the filter searches: the title and id on the
// first line, the goal on the second, so a match in the name can rank
// before a match in the goal.
func (i missionItem) FilterValue() string {
	return i.title + " " + termtext.CleanLine(i.m.ID) + "\n" + i.goal
}

// wordFilter keeps the missions whose title, id or goal hold every word of
// the term, in any case. Missions whose title or id hold them all come
// first; each group keeps the catalog's order. (The list's own fuzzy
// filter finds "key" or "pend" letter by letter in any long goal, so it
// kept every mission.)
func wordFilter(term string, targets []string) []list.Rank {
	words := strings.Fields(strings.ToLower(term))
	var name, goal []list.Rank
	for i, t := range targets {
		head, rest, _ := strings.Cut(strings.ToLower(t), "\n")
		inName, inAll := true, true
		for _, w := range words {
			if !strings.Contains(head, w) {
				inName = false
				if !strings.Contains(rest, w) {
					inAll = false
					break
				}
			}
		}
		switch {
		case inName:
			name = append(name, list.Rank{Index: i})
		case inAll:
			goal = append(goal, list.Rank{Index: i})
		}
	}
	return append(name, goal...)
}

// missionDelegate draws a mission as its title and id over two lines of
// its teaching goal. The selected one is marked with a bar, which reads
// with or without colour.
type missionDelegate struct{ st *Styles }

func (d missionDelegate) Height() int                         { return 3 }
func (d missionDelegate) Spacing() int                        { return 1 }
func (d missionDelegate) Update(tea.Msg, *list.Model) tea.Cmd { return nil }

func (d missionDelegate) Render(w io.Writer, m list.Model, index int, item list.Item) {
	it, ok := item.(missionItem)
	if !ok || m.Width() <= 2 {
		return
	}
	tw := m.Width() - 2
	bar, ts, gs := "  ", d.st.Title, d.st.Subtle
	if index == m.Index() && m.FilterState() != list.Filtering {
		bar, ts, gs = d.st.Selected.Render("▌ "), d.st.Selected, d.st.Text
	}
	title := ts.Render(cut(it.title, tw))
	if rest := tw - lipgloss.Width(title) - 2; rest >= 8 {
		title += "  " + d.st.Subtle.Render(cut(termtext.CleanLine(it.m.ID), rest))
	}
	goal := firstLines(wrap(it.goal, tw), 2, tw, " …")
	for len(goal) < 2 {
		goal = append(goal, "")
	}
	fmt.Fprintf(w, "%s%s\n%s%s\n%s%s", bar, title, bar, gs.Render(goal[0]), bar, gs.Render(goal[1])) //nolint:errcheck
}

// picker is the mission picker: a filterable list of the catalog, with the
// selected mission in full beside it on wide terminals.
type picker struct {
	st   *Styles
	keys pickerKeys
	w, h int
	list list.Model
}

func newPicker(st *Styles, cat *missions.Catalog) picker {
	items := make([]list.Item, 0, len(cat.Missions))
	for _, m := range cat.Missions {
		items = append(items, newMissionItem(m))
	}
	l := list.New(items, missionDelegate{st: st}, 0, 0)
	l.Title = "pick a mission"
	l.Styles.Title = st.AppTitle
	l.Styles.TitleBar = lipgloss.NewStyle().PaddingLeft(2).PaddingBottom(1)
	l.SetStatusBarItemName("mission", "missions")
	l.SetShowHelp(false)
	l.Filter = wordFilter
	l.DisableQuitKeybindings()
	l.KeyMap.ShowFullHelp.Unbind()
	l.KeyMap.CloseFullHelp.Unbind()
	return picker{st: st, keys: newPickerKeys(), list: l}
}

func (p *picker) SetSize(w, h int) {
	p.w, p.h = w, h
	p.list.SetSize(p.listWidth(), h)
}

func (p *picker) listWidth() int {
	if p.w >= pickerDetailMin {
		return min(64, p.w/2)
	}
	return p.w
}

// Filtering reports whether the user is typing a filter; then every key
// belongs to the list.
func (p *picker) Filtering() bool { return p.list.SettingFilter() }

// Selected is the highlighted mission, or nil when the filter matches none.
func (p *picker) Selected() *missions.Mission {
	if it, ok := p.list.SelectedItem().(missionItem); ok {
		return it.m
	}
	return nil
}

// Select highlights the mission with the given id among those the filter
// shows (the list's index counts only those).
func (p *picker) Select(id string) {
	for i, it := range p.list.VisibleItems() {
		if it.(missionItem).m.ID == id {
			p.list.Select(i)
			return
		}
	}
}

// SelectFirstExcept highlights the first mission shown whose id is not
// in taken, if there is one.
func (p *picker) SelectFirstExcept(taken map[string]bool) {
	for i, it := range p.list.VisibleItems() {
		if !taken[it.(missionItem).m.ID] {
			p.list.Select(i)
			return
		}
	}
}

func (p *picker) ShortHelp() []key.Binding {
	return append([]key.Binding{p.keys.Open}, p.list.ShortHelp()...)
}

func (p *picker) FullHelp() [][]key.Binding {
	return append([][]key.Binding{{p.keys.Open}}, p.list.FullHelp()...)
}

// Update passes keys and filter results to the list. When the filter is
// dropped, the mission that was highlighted stays highlighted (the list
// itself would keep the position, which now points at another mission).
//
// Two keys do less than the list would: / starts a fresh filter (the list
// would go on from the words of the last one), and enter on a filter that
// matches nothing keeps it open (the list would drop it and highlight the
// first mission, which a second enter then opened).
func (p picker) Update(msg tea.Msg) (picker, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		switch {
		case k.String() == "/" && p.list.FilterState() == list.FilterApplied:
			p.list.ResetFilter()
		case k.Type == tea.KeyEnter && p.Filtering() && len(p.list.VisibleItems()) == 0:
			return p, nil
		}
	}
	prev, was := p.Selected(), p.list.FilterState()
	var cmd tea.Cmd
	p.list, cmd = p.list.Update(msg)
	if prev != nil && was != list.Unfiltered && p.list.FilterState() == list.Unfiltered {
		p.Select(prev.ID)
	}
	return p, cmd
}

func (p *picker) View() string {
	if p.w <= 0 || p.h <= 0 {
		return ""
	}
	lv := p.list.View()
	if p.w < pickerDetailMin {
		return box(strings.Split(lv, "\n"), p.w, p.h)
	}
	lw := p.listWidth()
	left := box(strings.Split(lv, "\n"), lw, p.h)
	dw := p.w - lw - 3
	right := box(p.detail(dw), dw, p.h)
	sep := box(strings.Split(strings.Repeat(p.st.Rule.Render("│")+"\n", p.h), "\n"), 1, p.h)
	return lipgloss.JoinHorizontal(lipgloss.Top, left, " ", sep, " ", right)
}

// detail describes the selected mission in full.
func (p *picker) detail(w int) []string {
	m := p.Selected()
	if m == nil {
		return []string{p.st.Subtle.Render("no mission matches the filter")}
	}
	out := []string{"", p.st.Title.Render(cut(termtext.CleanLine(m.Title), w)), p.st.Subtle.Render(cut(termtext.CleanLine(m.ID), w)), ""}
	for _, l := range wrap(paragraph(m.Goal), w) {
		out = append(out, p.st.Text.Render(l))
	}
	out = append(out, "", p.st.PanelTitle.Render(fmt.Sprintf("schedule: %s, then the clock runs out", termtext.Plural(len(m.Schedule), "step"))))
	lines := stepLines(m)
	lines = lines[:len(lines)-1] // the settle step is not the mission's
	for i, l := range lines {
		if i >= 6 && l.first {
			out = append(out, p.st.Subtle.Render(fmt.Sprintf("  … %s more", termtext.Plural(len(m.Schedule)-l.step+1, "step"))))
			break
		}
		text := fmt.Sprintf("  %d %s", l.step, l.text)
		if !l.first {
			text = fmt.Sprintf("  %*s %s", len(fmt.Sprint(l.step)), "", l.text)
		}
		out = append(out, p.st.Text.Render(cut(text, w)))
	}
	if len(m.Expect) > 0 {
		out = append(out, "", p.st.PanelTitle.Render("what it promises"))
		for _, e := range m.Expect {
			// The verdicts say what the count cannot: one effect can be
			// exactly_once, a hidden effect or an escalation.
			var vs []string
			for _, v := range e.VerdictsInOrder(m.Intents) {
				vs = append(vs, string(v))
			}
			spans := []span{{termtext.CleanLine(e.Under()) + ": " + termtext.Plural(e.Effects, "effect"), p.st.Text, true}}
			if len(vs) > 0 {
				spans = append(spans, span{"(" + termtext.CleanLine(strings.Join(vs, ", ")) + ")", p.st.Text, true})
			}
			out = append(out, flow(spans, w, 3, "  ", "    ")...)
		}
	}
	return out
}
