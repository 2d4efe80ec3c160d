package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/providers"
	"github.com/replaylab/replaylab/render"
)

func newProvidersCmd() *cobra.Command {
	var width int
	cmd := &cobra.Command{
		Use:   "providers [NAME|FILE]",
		Short: "List the provider profiles, or print one in full with its sources",
		Long: `A profile is a provider's idempotency contract as data: where the key
travels, how long it is kept, which answers are kept under it, what a
repeat returns, and what a repeat in flight, with other parameters, or
under a failed key gets. Every command that runs a provider takes one:
--provider NAME, or --provider FILE for a profile of your own (the
format is that of the built-ins; replaylab providers FILE checks one).`,
		Example: "  replaylab providers\n" +
			"  replaylab providers checkout\n" +
			"  replaylab providers ./my-provider.yaml",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			width := min(textWidth(w, width), 96)
			if len(args) == 0 {
				_, err := fmt.Fprint(w, render.ProviderList(providers.Builtins(), width))
				return err
			}
			var p *ledger.Profile
			var err error
			if providers.IsFile(args[0]) {
				p, err = readProfile(args[0])
			} else if p, err = providers.Lookup(args[0]); err != nil {
				err = badInput(err)
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(w, render.Profile(p, width))
			return err
		},
	}
	registerWidth(cmd, &width)
	return cmd
}
