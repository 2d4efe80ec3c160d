package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/export"
)

func newCheckCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check HISTORY.jsonl",
		Short: "Find the anomalies in a history from your own system",
		Long: `Read a history (JSON Lines, replaylab.history/v1): the attempts your client
made, each with its intent, key, payload digest, times and what it saw (ok,
fail, or info when it cannot tell: a timeout, a 5xx), and the records your
provider holds (object, key, intent, status). Join them and report each
anomaly with the lines that show it:

  duplicate_effect               more than one effect for one intent
  effect_never_learned           an info attempt that did take effect
  key_changed                    one intent sent under more than one key
  key_reused_with_other_payload  one key sent with two payload digests
  record_without_attempt         a record no attempt accounts for

A serve session file (serve --record) is read as its history too.
Exit code 0 when the history is clean, 1 when it shows an anomaly, 2 when a
line does not read (with its line number).`,
		Example: "  replaylab check testdata/history.jsonl\n  replaylab check session.json --json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			rep, err := checkFile(path)
			if err != nil {
				return err
			}
			if asJSON {
				b, err := json.MarshalIndent(rep, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), string(b))
			} else {
				fmt.Fprint(cmd.OutOrStdout(), export.HistoryText(path, rep))
			}
			if n := len(rep.Anomalies); n > 0 {
				return &exitError{code: exitVerdict, err: fmt.Errorf("%s: the history shows %d %s", path, n, map[bool]string{true: "anomaly", false: "anomalies"}[n == 1])}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON for scripts")
	return cmd
}

// checkFile checks a history file, or the history of a session file.
func checkFile(path string) (*export.HistoryReport, error) {
	if err := refuseSpecial(path); err != nil {
		return nil, err
	}
	f, err := openInput(path)
	if err != nil {
		return nil, badInput(fileError(path, err))
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return nil, badInput(fmt.Errorf("%s is a directory; expected a history .jsonl file", path))
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(512)
	if bytes.Contains(head, []byte(export.SessionSchemaID)) && !bytes.Contains(head, []byte(export.HistorySchemaID)) {
		data, err := readLimited(path, export.MaxCaseBytes, "a session .json file")
		if err != nil {
			return nil, badInput(fileError(path, err))
		}
		s, err := export.UnmarshalSession(path, data)
		if err != nil {
			return nil, badInput(err)
		}
		b, err := export.MarshalHistory(s.History())
		if err != nil {
			return nil, err
		}
		return export.CheckHistory(path, bytes.NewReader(b))
	}
	rep, err := export.CheckHistory(path, br)
	var he *export.HistoryError
	if errors.As(err, &he) {
		return nil, badInput(err)
	}
	if err != nil {
		return nil, badInput(fileError(path, err))
	}
	return rep, nil
}

// refuseSpecial refuses what reading would make no sense of or never end:
// a device, a socket. A named pipe is read, its wait for a writer bounded
// (openInput).
func refuseSpecial(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return badInput(fileError(path, err))
	}
	if m := info.Mode(); m&(os.ModeDevice|os.ModeSocket|os.ModeCharDevice) != 0 {
		return badInput(fmt.Errorf("%s is not a regular file (%s); give a history .jsonl file", path, m.Type()))
	}
	return nil
}
