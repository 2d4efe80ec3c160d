package lab

import (
	"fmt"
	"io"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/replaylab/replaylab/internal/termtext"
)

// Run runs the lab on the terminal (standard input and output) until the
// user quits; what became of the writes it waited for is said on stderr
// once the screen is gone.
func Run(m Model, stderr io.Writer) error {
	followNoColor(os.Getenv)
	// Asked here, with a short wait, so that the colours do not ask with
	// a long one once the lab is drawing and reading keys.
	dark, _ := terminalBackground(os.Stdin, os.Stdout, backgroundWait)
	lipgloss.SetHasDarkBackground(dark)
	final, err := tea.NewProgram(m, tea.WithAltScreen()).Run()
	if lm, ok := final.(Model); ok && lm.QuitNote() != "" {
		// What became of the writes the lab waited for, once the screen
		// is gone.
		fmt.Fprintln(stderr, "replaylab:", termtext.CleanLine(lm.QuitNote()))
	}
	return err
}

// followNoColor draws the lab without colour when NO_COLOR is set to
// anything (no-color.org); the counter then spells out what its colours
// would say.
func followNoColor(getenv func(string) string) {
	if getenv("NO_COLOR") != "" {
		lipgloss.SetColorProfile(termenv.Ascii)
	}
}
