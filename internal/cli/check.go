package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/check"
	"github.com/replaylab/replaylab/internal/termtext"
)

func newCheckCmd() *cobra.Command {
	var asJSON bool
	o := check.DefaultTraceOptions()
	cmd := &cobra.Command{
		Use:   "check HISTORY.jsonl | check TRACES.otlp.jsonl [RECORDS]",
		Short: "Find the anomalies in a history, or in an agent's OpenTelemetry traces",
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

OpenTelemetry traces (OTLP/JSON lines, as the file exporter writes them)
are read too: each tool-call span of a write tool (--write-tools) is an
attempt, of a read tool a read; the intent and the key come from the
captured arguments. From the spans alone check names

  resent_after_unknown           a write sent again after an unknown
                                 outcome under another key, or with none,
                                 and which hop sent it (the same call id:
                                 a retry below the model; a new call id:
                                 the model; other arguments)

and, given the provider's records (a saved GET /v1/refunds list, or a
serve session) as the second file, every anomaly above, with the spans
and refunds that show it. See docs/check.md.

Exit code 0 when the history is clean, 1 when it shows an anomaly, 2 when a
line does not read (with its line number) or the history holds nothing.`,
		Example: "  replaylab check testdata/history.jsonl\n  replaylab check session.json --json\n  replaylab check testdata/traces.otlp.jsonl testdata/refunds.json",
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, records := args[0], ""
			if len(args) == 2 {
				records = args[1]
			}
			if err := o.Validate(); err != nil {
				return badInput(err)
			}
			defer check.LimitMemory()()
			in, err := check.Open(path, records, o, pipeWait)
			if err != nil {
				return badInput(err)
			}
			if tr := in.Traces; tr != nil {
				write := func() error { return tr.WriteText(cmd.OutOrStdout()) }
				if asJSON {
					write = func() error { return tr.WriteJSON(cmd.OutOrStdout()) }
				}
				if err := write(); err != nil {
					return fmt.Errorf("writing the report: %w", cause(err))
				}
				return anomalies(path, "traces", tr.Len())
			}
			if cmd.Flags().Changed("write-tools") || cmd.Flags().Changed("read-tools") || cmd.Flags().Changed("intent-field") || cmd.Flags().Changed("key-field") {
				return badInput(fmt.Errorf("%s is a history, not traces: --write-tools, --read-tools, --intent-field and --key-field are for traces only; a history names its intents and keys itself", path))
			}
			rep, session := in.History, in.Session
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
			return anomalies(path, "history", rep.Len())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON for scripts")
	cmd.Flags().StringSliceVar(&o.WriteTools, "write-tools", o.WriteTools, "traces: the `TOOLS` whose calls are attempts (comma-separated)")
	cmd.Flags().StringSliceVar(&o.ReadTools, "read-tools", o.ReadTools, "traces: the `TOOLS` whose calls are reads (comma-separated)")
	cmd.Flags().StringVar(&o.IntentField, "intent-field", o.IntentField, "traces: the argument that carries the intent, and the refund's metadata `FIELD` in a records file")
	cmd.Flags().StringVar(&o.KeyField, "key-field", o.KeyField, "traces: the argument `NAME` that carries the idempotency key")
	return cmd
}

// anomalies is the command's end: exit 1 when what was read shows n > 0.
func anomalies(path, what string, n int) error {
	if n > 0 {
		verb := map[bool]string{true: "show", false: "shows"}[what == "traces"]
		return &exitError{code: exitVerdict, err: fmt.Errorf("%s: the %s %s %d %s", path, what, verb, n, map[bool]string{true: "anomaly", false: "anomalies"}[n == 1])}
	}
	return nil
}
