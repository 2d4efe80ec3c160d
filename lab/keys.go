package lab

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// Every screen has its own keys, a value of its own: a copy of the lab
// changes its own help bar, never the original's. Each screen turns its
// bindings on and off with SetEnabled as its state changes, so the help
// bar never offers a key that would do nothing.

// globalKeys answer on every screen: the root takes them first.
type globalKeys struct {
	Quit     key.Binding
	Help     key.Binding
	Glossary key.Binding
	// Close leaves the full key list.
	Close key.Binding
}

func newGlobalKeys() globalKeys {
	return globalKeys{
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "all keys")),
		Glossary: key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "words (glossary)")),
		Close:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close")),
	}
}

// pickerKeys are the mission picker's own; the list brings its filter's.
type pickerKeys struct {
	Open key.Binding
}

func newPickerKeys() pickerKeys {
	return pickerKeys{Open: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open mission"))}
}

// runKeys are the lab screen's: moving through the run, its settings,
// its cases and its panels.
type runKeys struct {
	Step     key.Binding
	StepBack key.Binding
	RunAll   key.Binding
	Restart  key.Binding

	// Settings: each re-runs the mission and keeps the position.
	StableKeys key.Binding
	Policy     key.Binding
	Contract   key.Binding
	// Provider opens the chooser of every provider's profile; Contract
	// cycles the first three (v1, v2, none).
	Provider  key.Binding
	KeySource key.Binding
	// Fixture cycles the selected step's fixture through the world
	// table; AllFixtures gives every attempt one fixture, the next in
	// turn (the source article's "replace both outcomes").
	Fixture     key.Binding
	AllFixtures key.Binding

	Export  key.Binding
	Pin     key.Binding
	Compare key.Binding

	Checkpoints key.Binding
	Evidence    key.Binding

	// Focus moves ↑/↓ among the timeline, the ledger and the agent's
	// words.
	Focus    key.Binding
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding

	Leave key.Binding
}

func newRunKeys() runKeys {
	s := newScrollKeys()
	return runKeys{
		Step:     key.NewBinding(key.WithKeys("n", " ", "right"), key.WithHelp("n/→", "step")),
		StepBack: key.NewBinding(key.WithKeys("b", "left"), key.WithHelp("b/←", "step back")),
		RunAll:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "run to end")),
		Restart:  key.NewBinding(key.WithKeys("0"), key.WithHelp("0", "restart")),

		StableKeys:  key.NewBinding(key.WithKeys("k"), key.WithHelp("k", "stable keys")),
		Policy:      key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "policy")),
		Contract:    key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "contract")),
		Provider:    key.NewBinding(key.WithKeys("C"), key.WithHelp("C", "provider")),
		KeySource:   key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "key source")),
		Fixture:     key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "this step's fixture")),
		AllFixtures: key.NewBinding(key.WithKeys("F"), key.WithHelp("F", "every attempt's fixture")),

		Export:  key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "export JSON")),
		Pin:     key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "pin case")),
		Compare: key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "compare pinned")),

		Checkpoints: key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "hide checkpoints")),
		Evidence:    key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "evidence")),

		Focus:    key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "↑/↓ to the ledger")),
		Up:       s.Up,
		Down:     s.Down,
		PageUp:   s.PageUp,
		PageDown: s.PageDown,

		Leave: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
	}
}

// compareKeys are the compare view's: the scroll keys, Left and Right
// bringing the pinned cases that do not fit into view, and its own.
type compareKeys struct {
	scrollKeys
	Add    key.Binding
	Export key.Binding
	Unpin  key.Binding
	Leave  key.Binding
}

func newCompareKeys() compareKeys {
	s := newScrollKeys()
	s.Up.SetHelp("↑/↓", "scroll")
	return compareKeys{
		scrollKeys: s,
		Add:        key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "add a mission's case")),
		Export:     key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "export all")),
		Unpin:      key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "clear pins")),
		Leave:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
	}
}

// evidenceKeys are the evidence view's: the scroll keys (up and down
// only) and the way back.
type evidenceKeys struct {
	scrollKeys
	Back key.Binding
}

func newEvidenceKeys() evidenceKeys {
	s := newScrollKeys()
	s.Up.SetHelp("↑/↓", "scroll")
	return evidenceKeys{
		scrollKeys: s,
		Back:       key.NewBinding(key.WithKeys("esc", "g"), key.WithHelp("esc/g", "back to the run")),
	}
}

// scrollKeys are what a scrolling panel reads: its own copy, always on;
// the screen that holds the panel decides when they reach it.
type scrollKeys struct {
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Left     key.Binding
	Right    key.Binding
}

func newScrollKeys() scrollKeys {
	return scrollKeys{
		Up:       key.NewBinding(key.WithKeys("up"), key.WithHelp("↑/↓", "pick row")),
		Down:     key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "scroll down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup/dn", "page")),
		PageDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),
		Left:     key.NewBinding(key.WithKeys("left"), key.WithHelp("←/→", "other pins")),
		Right:    key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "newer pins")),
	}
}

// scroll is how many rows a scrolling key moves a view whose page is page
// rows: back for ↑ and pgup, on for ↓ and pgdn, 0 for any other key.
func (k scrollKeys) scroll(msg tea.KeyMsg, page int) int {
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
