package cli

import (
	"os"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
)

// onTerminal reports whether the command's standard input and output are
// both a terminal, as the lab and the course need.
func onTerminal(cmd *cobra.Command) bool {
	in, ok := cmd.InOrStdin().(*os.File)
	if !ok {
		return false
	}
	out, ok := cmd.OutOrStdout().(*os.File)
	return ok && term.IsTerminal(in.Fd()) && term.IsTerminal(out.Fd())
}
