package check_test

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/replaylab/replaylab/check"
	"github.com/replaylab/replaylab/export"
)

// FuzzHistory: no input panics the history reader; a refusal names a
// line the input has, and a report's anomalies point at lines it has.
func FuzzHistory(f *testing.F) {
	if data, err := os.ReadFile("../testdata/history.jsonl"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"type":"attempt","intent":"i","key":"k","digest":"d","outcome":"info"}` + "\n" + `{"type":"record","intent":"i","key":"k","object":"re_1","status":"succeeded"}`))
	f.Add([]byte("{\"schema\":\"replaylab.history/v1\"}\n\n{}\n"))
	f.Add([]byte(`{"type":"attempt","intent":"i","outcome":"ok","start":"2026-12-01T10:00:00Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte("\n")) + 1
		rep, err := check.History("fuzz.jsonl", bytes.NewReader(data))
		if err != nil {
			var he *export.HistoryError
			if !errors.As(err, &he) || he.Line < 1 || he.Line > lines {
				t.Fatalf("error %v names no line of the input (%d lines)", err, lines)
			}
			return
		}
		for _, a := range rep.Anomalies {
			if len(a.Lines) == 0 {
				t.Fatalf("anomaly %+v points at no line", a)
			}
			for _, l := range a.Lines {
				if l < 1 || l > rep.Lines {
					t.Fatalf("anomaly %+v points at line %d of %d", a, l, rep.Lines)
				}
			}
		}
	})
}
