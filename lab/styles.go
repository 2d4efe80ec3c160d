package lab

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// Palette: every colour adapts to light and dark terminals. Where colour
// is off (NO_COLOR, a plain profile) the screens still read, because every
// state that a colour marks is also spelled out in words or symbols.
var (
	colorGreen  = lipgloss.AdaptiveColor{Light: "#1a7f37", Dark: "#3fb950"}
	colorRed    = lipgloss.AdaptiveColor{Light: "#cf222e", Dark: "#ff6b61"}
	colorAmber  = lipgloss.AdaptiveColor{Light: "#9a6700", Dark: "#e3b341"}
	colorAccent = lipgloss.AdaptiveColor{Light: "#0550ae", Dark: "#79c0ff"}
	colorSubtle = lipgloss.AdaptiveColor{Light: "#6e7781", Dark: "#8b949e"}
	colorText   = lipgloss.AdaptiveColor{Light: "#1f2328", Dark: "#e6edf3"}
	colorRule   = lipgloss.AdaptiveColor{Light: "#d0d7de", Dark: "#30363d"}
)

// Styles holds every style the lab uses, built once.
type Styles struct {
	AppTitle   lipgloss.Style
	Title      lipgloss.Style
	Subtle     lipgloss.Style
	Text       lipgloss.Style
	Accent     lipgloss.Style
	Changed    lipgloss.Style // a setting the user changed from the mission's default
	PanelTitle lipgloss.Style
	PanelFocus lipgloss.Style // the title of the panel that has the keys
	Rule       lipgloss.Style

	// The effect counter, by how the effects compare with the intended.
	CountEqual lipgloss.Style
	CountMore  lipgloss.Style
	CountFewer lipgloss.Style

	Now      lipgloss.Style // what the current step did
	Provider lipgloss.Style // the provider changing its ledger on its own
	Escalate lipgloss.Style // an intent handed to a person
	Done     lipgloss.Style // steps already run
	Say      lipgloss.Style
	Diverge  lipgloss.Style
	Selected lipgloss.Style
	Cursor   lipgloss.Style // the timeline row picked with ↑/↓

	Status      lipgloss.Style
	StatusError lipgloss.Style

	Help help.Styles
}

// DefaultStyles builds the lab's styles.
func DefaultStyles() Styles {
	s := Styles{}
	s.AppTitle = lipgloss.NewStyle().Bold(true).Foreground(colorAccent)
	s.Title = lipgloss.NewStyle().Bold(true).Foreground(colorText)
	s.Subtle = lipgloss.NewStyle().Foreground(colorSubtle)
	s.Text = lipgloss.NewStyle().Foreground(colorText)
	s.Accent = lipgloss.NewStyle().Foreground(colorAccent)
	s.Changed = lipgloss.NewStyle().Foreground(colorAccent).Bold(true)
	s.PanelTitle = lipgloss.NewStyle().Bold(true).Foreground(colorSubtle)
	s.PanelFocus = lipgloss.NewStyle().Bold(true).Foreground(colorAccent)
	s.Rule = lipgloss.NewStyle().Foreground(colorRule)

	s.CountEqual = lipgloss.NewStyle().Bold(true).Foreground(colorGreen)
	s.CountMore = lipgloss.NewStyle().Bold(true).Foreground(colorRed)
	s.CountFewer = lipgloss.NewStyle().Bold(true).Foreground(colorAmber)

	s.Now = lipgloss.NewStyle().Bold(true).Foreground(colorText)
	s.Provider = lipgloss.NewStyle().Bold(true).Foreground(colorAmber)
	s.Escalate = lipgloss.NewStyle().Bold(true).Foreground(colorRed)
	s.Done = lipgloss.NewStyle().Foreground(colorSubtle)
	s.Say = lipgloss.NewStyle().Foreground(colorText).Italic(true)
	s.Diverge = lipgloss.NewStyle().Bold(true).Foreground(colorRed)
	s.Selected = lipgloss.NewStyle().Bold(true).Foreground(colorAccent)
	s.Cursor = lipgloss.NewStyle().Bold(true).Foreground(colorAccent)

	s.Status = lipgloss.NewStyle().Foreground(colorGreen)
	s.StatusError = lipgloss.NewStyle().Foreground(colorRed).Bold(true)

	h := help.New().Styles
	h.ShortKey = lipgloss.NewStyle().Foreground(colorAccent)
	h.FullKey = h.ShortKey
	h.ShortDesc = lipgloss.NewStyle().Foreground(colorSubtle)
	h.FullDesc = h.ShortDesc
	h.ShortSeparator = lipgloss.NewStyle().Foreground(colorRule)
	h.FullSeparator = h.ShortSeparator
	h.Ellipsis = h.ShortSeparator
	s.Help = h
	return s
}

// counterStyle picks the counter's style: green when the ledger holds what
// was intended, red when it holds more, amber when it holds fewer.
func (s Styles) counterStyle(effects, intended int) lipgloss.Style {
	switch {
	case effects > intended:
		return s.CountMore
	case effects < intended:
		return s.CountFewer
	}
	return s.CountEqual
}

// outcomeStyle is the counter's style: the verdicts' where there are
// some, since they judge the count against what the caller believes, the
// count's against the intended where there are none.
func (s Styles) outcomeStyle(effects, intended int, worst missions.Verdict) lipgloss.Style {
	if worst == "" {
		return s.counterStyle(effects, intended)
	}
	return s.verdictStyle(worst)
}

// verdictStyle picks a verdict's style by what it says of the caller's
// belief against the ledger, not by the effect count: green where they
// agree (exactly_once, failed_cleanly), amber where a person now decides
// (escalated), red where they disagree (duplicate, hidden_effect,
// phantom). A hidden effect leaves the count as intended, so the counter's
// colour would call it fine.
func (s Styles) verdictStyle(v missions.Verdict) lipgloss.Style {
	switch v {
	case missions.ExactlyOnce, missions.FailedCleanly:
		return s.CountEqual
	case missions.EscalatedV:
		return s.CountFewer
	}
	return s.CountMore
}

// verdictList renders verdicts one after the other, ", " apart, each in
// its own style, in at most w cells; the text past w is cut with "…".
func (s Styles) verdictList(vs []missions.IntentVerdict, w int) string {
	var b strings.Builder
	used := 0
	for i, v := range vs {
		word := termtext.CleanLine(string(v.Verdict))
		if i > 0 {
			word = ", " + word
		}
		if used+ansi.StringWidth(word) > w {
			if rest := w - used; rest > 0 {
				b.WriteString(s.verdictStyle(v.Verdict).Render(cut(word, rest)))
			}
			break
		}
		b.WriteString(s.verdictStyle(v.Verdict).Render(word))
		used += ansi.StringWidth(word)
	}
	return b.String()
}
