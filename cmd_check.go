package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/check"
	"github.com/replaylab/replaylab/internal/termtext"
)

func newCheckCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check HISTORY.jsonl",
		Short: "Find the anomalies in a history from your own system",
		Long: `Read a history (JSON Lines, replaylab.history/v1): the attempts your client
made, each with its intent, key, payload digest, times and what it saw (ok,
fail, or info when it cannot tell: a timeout, a 5xx), the reads in which it
saw the provider's objects, and the records your provider holds (object,
key, intent, status). Join them and report each anomaly with the lines that
show it:

  duplicate_effect               more than one effect for one intent
  effect_never_learned           it took effect, but the client heard only
                                 fail or info, and no read after its attempt
                                 showed that effect
  key_changed                    one intent sent under more than one key
  key_reused_with_other_payload  one key sent with two payload digests
  key_shared_by_intents          one key sent, or recorded, for two intents
  record_without_attempt         a record whose intent the client never
                                 attempted
  ok_without_effect              an ok the provider holds no effect for, or
                                 one that named another intent's refund
  record_under_unsent_key        a record under a key no attempt sent
  object_shared_by_intents       one object recorded for two intents

An object's records are its status history: its last record is its final
status. Where lines carry times ("start"), last and after go by the times;
where they do not, by the order of the lines.

A serve session file (serve --record) is read as its history too.
Exit code 0 when the history is clean, 1 when it shows an anomaly, 2 when a
line does not read (with its line number) or the history holds nothing.`,
		Example: "  replaylab check testdata/history.jsonl\n  replaylab check session.json --json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			defer check.LimitMemory()()
			rep, session, err := check.File(path, pipeWait)
			if err != nil {
				return badInput(err)
			}
			if session && !asJSON {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is a serve session: it is checked as the history serve --record FILE.jsonl writes of it, and the line numbers below are that history's\n", termtext.CleanLine(path))
			}
			// The report is written an anomaly at a time: a history with a
			// million of them is never a million messages in memory.
			write := func() error { return rep.WriteText(cmd.OutOrStdout(), path) }
			if asJSON {
				write = func() error { return rep.WriteJSON(cmd.OutOrStdout()) }
			}
			if err := write(); err != nil {
				return fmt.Errorf("writing the report: %w", cause(err))
			}
			if n := rep.Len(); n > 0 {
				return &exitError{code: exitVerdict, err: fmt.Errorf("%s: the history shows %d %s", path, n, map[bool]string{true: "anomaly", false: "anomalies"}[n == 1])}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON for scripts")
	return cmd
}
