package cli

import (
	"sync"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
	"github.com/replaylab/replaylab/render"
)

// Shell completion (replaylab completion SHELL): mission ids where a
// command takes one, and the accepted words of every flag that has a
// fixed set of them.

// completeMissions offers the catalog's mission ids, each with its title,
// for up to most arguments (0: any number).
func completeMissions(most int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if most > 0 && len(args) >= most {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cat, err := loadCatalog(cmd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, m := range cat.Missions {
			out = append(out, cobra.CompletionWithDesc(termtext.CleanLine(m.ID), termtext.CleanLine(m.Title)))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// words is a completion of a fixed list of words.
func words[T ~string](list []T) cobra.CompletionFunc {
	out := make([]cobra.Completion, len(list))
	for i, w := range list {
		out[i] = string(w)
	}
	return cobra.FixedCompletions(out, cobra.ShellCompDirectiveNoFileComp)
}

// registerCompletions gives each flag of cmd that takes a word from a
// fixed set those words, and directory flags directories.
func registerCompletions(cmd *cobra.Command) {
	for name, f := range flagWords() {
		if cmd.Flags().Lookup(name) == nil {
			continue
		}
		// Cannot fail: the flag exists (looked up above) and a command is
		// built, and so registered, once.
		_ = cmd.RegisterFlagCompletionFunc(name, f)
	}
}

// flagWords are the completions of the flags that take a word, built once
// for every command.
var flagWords = sync.OnceValue(func() map[string]cobra.CompletionFunc {
	return map[string]cobra.CompletionFunc{
		missions.FlagStableKeys: words([]string{"on", "off"}),
		missions.FlagPolicy:     words(missions.Policies),
		missions.FlagContract:   words(missions.ShortContracts),
		missions.FlagProvider:   words(providers.Names()),
		missions.FlagKeySource:  words(missions.KeySources),
		"format":                words([]render.Format{render.Text, render.Markdown, render.JSON}),
		"fail-on":               words(missions.Verdicts),
		"dir":                   dirsOnly,
		"missions":              dirsOnly,
	}
})

func dirsOnly(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}
