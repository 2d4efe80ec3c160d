package check

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/infile"
)

// File checks the history file at path, or the history of a session
// file; session says which it was. What the file holds is told by its
// content (export.Sniff); a device or a socket is refused, and a named
// pipe's wait for a writer lasts at most pipeWait.
func File(path string, pipeWait time.Duration) (rep *Result, session bool, err error) {
	in, err := Open(path, "", DefaultTraceOptions(), pipeWait)
	if err != nil {
		return nil, false, err
	}
	if in.Traces != nil {
		return nil, false, fmt.Errorf("%s holds OpenTelemetry traces (OTLP/JSON), not a history", path)
	}
	return in.History, in.Session, nil
}

// Input is what check made of a file: a history's result (from a session
// too, then Session is set), or a trace check's.
type Input struct {
	History *Result
	Session bool
	Traces  *TraceResult
}

// Open checks the file at path, whatever it holds: a history, a serve
// session (as its history), or OpenTelemetry traces (OTLP/JSON lines),
// which are joined with the records at records when that is not "". A
// records file goes with traces only: a history holds its records.
func Open(path, records string, o TraceOptions, pipeWait time.Duration) (*Input, error) {
	if err := refuseSpecial(path); err != nil {
		return nil, err
	}
	f, err := infile.Open(path, pipeWait)
	if err != nil {
		return nil, infile.Error(path, err)
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return nil, fmt.Errorf("%s is a directory; expected a history .jsonl file or traces (.otlp.jsonl)", path)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(4096)
	if kind, _ := export.Sniff(head); kind == export.KindTraces {
		tr, err := TracesFrom(path, br, records, o, pipeWait)
		if err != nil {
			return nil, err
		}
		return &Input{Traces: tr}, nil
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return nil, fmt.Errorf("%s is empty; expected a history (JSON Lines) or OpenTelemetry traces (OTLP/JSON lines)", path)
	}
	if refundList(head) {
		return nil, fmt.Errorf("%s holds a list of refunds (the provider's records): give it after the traces it joins, replaylab check TRACES.otlp.jsonl %s", path, path)
	}
	if records != "" {
		return nil, fmt.Errorf("%s is not OpenTelemetry traces: a records file goes with traces only, since a history (and a session) holds the provider's records already; give the history alone", path)
	}
	rep, session, err := history(path, br)
	if err != nil {
		return nil, err
	}
	return &Input{History: rep, Session: session}, nil
}

// history checks the history (or the session) br reads.
func history(path string, br *bufio.Reader) (rep *Result, session bool, err error) {
	head, _ := br.Peek(4096)
	switch kind, schema := export.Sniff(head); kind {
	case export.KindSession, export.KindCase, export.KindOther, export.KindJSON:
		// One JSON document: a session, or something that is not a
		// history. The whole of it tells which.
		data, tooBig, err := infile.ReadAtMost(br, export.MaxCaseBytes)
		if err != nil {
			return nil, false, infile.Error(path, err)
		}
		if tooBig {
			return nil, false, fmt.Errorf("%s: the file is larger than %d bytes, the most a session file may hold", path, export.MaxCaseBytes)
		}
		if kind, schema = export.Sniff(data); kind == export.KindJSON && bytes.Contains(data, []byte(`"`+export.SessionSchemaID+`"`)) {
			kind = export.KindSession // a session the decoder will say is broken, and where
		}
		switch kind {
		case export.KindSession:
			s, err := export.UnmarshalSession(path, data)
			if err != nil {
				return nil, false, err
			}
			b, err := export.MarshalHistory(s.History())
			if err != nil {
				return nil, false, err
			}
			rep, err := Check(path, bytes.NewReader(b))
			if err != nil {
				return nil, false, err
			}
			return rep, true, nil
		case export.KindOther, export.KindCase:
			return nil, false, fmt.Errorf("%s is a %s document, not a history: check reads JSON Lines (%s) or a serve session", path, schema, export.HistorySchemaID)
		}
		br = bufio.NewReader(bytes.NewReader(data))
	}
	rep, err = Check(path, br)
	var he *export.HistoryError
	if errors.As(err, &he) {
		return nil, false, err
	}
	if err != nil {
		return nil, false, infile.Error(path, err)
	}
	return rep, false, nil
}

// refundList: head starts a Stripe list of refunds.
func refundList(head []byte) bool {
	return bytes.Contains(head, []byte(`"object": "list"`)) || bytes.Contains(head, []byte(`"object":"list"`))
}

// refuseSpecial refuses what reading would make no sense of or never end:
// a device, a socket. A named pipe is read, its wait for a writer bounded
// (infile.Open).
func refuseSpecial(path string) error {
	return refuseSpecialAs(path, "a history .jsonl file or traces (.otlp.jsonl)")
}

// refuseSpecialAs is refuseSpecial for a file expected to be what.
func refuseSpecialAs(path, what string) error {
	info, err := os.Stat(path)
	if err != nil {
		return infile.Error(path, err)
	}
	if m := info.Mode(); m&(os.ModeDevice|os.ModeSocket|os.ModeCharDevice) != 0 {
		return fmt.Errorf("%s is not a regular file (%s); give %s", path, m.Type(), what)
	}
	return nil
}
