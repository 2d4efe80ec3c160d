package traces_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/traces"
)

// FuzzRead: any bytes either read or are refused with a *traces.Error
// naming a line of the input; reading never panics, and every call it
// hands over has a name and its times in order.
func FuzzRead(f *testing.F) {
	if data, err := os.ReadFile("testdata/traceloop.otlp.jsonl"); err == nil {
		f.Add(data)
	}
	if data, err := os.ReadFile("../testdata/traces.otlp.jsonl"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba902b7","name":"execute_tool create_refund","startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := strings.Count(string(data), "\n") + 1
		_, err := traces.Read("f.otlp.jsonl", strings.NewReader(string(data)), func(c *traces.Call) error {
			if c.Name == "" || c.Start == 0 || c.End < c.Start {
				t.Fatalf("a call without a name or its times: %+v", c)
			}
			return nil
		})
		if err == nil {
			return
		}
		var te *traces.Error
		if !errors.As(err, &te) || te.Line < 1 || te.Line > lines {
			t.Fatalf("refused without a line of the input: %v", err)
		}
	})
}
