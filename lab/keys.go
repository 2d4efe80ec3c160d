package lab

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// KeyMap is every key the lab answers to. The root turns bindings on and
// off with SetEnabled as the screen and the run change, so the help bar
// never advertises a key that would do nothing.
type KeyMap struct {
	// Picker.
	Open key.Binding

	// Lab: moving through the run.
	Step     key.Binding
	StepBack key.Binding
	RunAll   key.Binding
	Restart  key.Binding

	// Lab: settings. Each re-runs the mission and keeps the position.
	StableKeys key.Binding
	Policy     key.Binding
	Contract   key.Binding
	KeySource  key.Binding

	// Lab: cases.
	Export  key.Binding
	Pin     key.Binding
	Compare key.Binding
	Unpin   key.Binding

	// Lab: what the timeline shows.
	Checkpoints key.Binding

	// Lab: the evidence bundle of an escalated intent.
	Evidence key.Binding

	// Scrolling the focused panel.
	Focus    key.Binding
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding

	// The compare view's columns, where not every pinned case fits.
	Left  key.Binding
	Right key.Binding

	Leave key.Binding
	Quit  key.Binding
	Help  key.Binding
	// Glossary opens the words the lab uses, from any screen.
	Glossary key.Binding
}

// DefaultKeyMap returns the lab's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Open: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open mission")),

		Step:     key.NewBinding(key.WithKeys("n", " ", "right"), key.WithHelp("n/→", "step")),
		StepBack: key.NewBinding(key.WithKeys("b", "left"), key.WithHelp("b/←", "back")),
		RunAll:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "run to end")),
		Restart:  key.NewBinding(key.WithKeys("0"), key.WithHelp("0", "restart")),

		StableKeys: key.NewBinding(key.WithKeys("k"), key.WithHelp("k", "stable keys")),
		Policy:     key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "policy")),
		Contract:   key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "contract")),
		KeySource:  key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "key source")),

		Export:  key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "export JSON")),
		Pin:     key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "pin case")),
		Compare: key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "compare pinned")),
		Unpin:   key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "clear pins")),

		Checkpoints: key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "hide checkpoints")),

		Evidence: key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "evidence")),

		Focus:    key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "↑/↓ to the ledger")),
		Up:       key.NewBinding(key.WithKeys("up"), key.WithHelp("↑/↓", "pick row")),
		Down:     key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "scroll down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup/dn", "page")),
		PageDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),

		Left:  key.NewBinding(key.WithKeys("left"), key.WithHelp("←/→", "other pins")),
		Right: key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "newer pins")),

		Leave: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Quit:  key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:  key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "all keys")),

		Glossary: key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "words (glossary)")),
	}
}

// scroll is how many rows a scrolling key moves a view whose page is page
// rows: back for ↑ and pgup, on for ↓ and pgdn, 0 for any other key.
func (k *KeyMap) scroll(msg tea.KeyMsg, page int) int {
	switch {
	case key.Matches(msg, k.Up):
		return -1
	case key.Matches(msg, k.Down):
		return 1
	case key.Matches(msg, k.PageUp):
		return -page
	case key.Matches(msg, k.PageDown):
		return page
	}
	return 0
}
