package check_test

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/replaylab/replaylab/check"
)

// genTraces is OTLP/JSON lines made on the fly, so that what the input
// takes in memory does not count: spans spans in batches of 100 a line,
// as the file exporter writes them. Each intent has four: a create that
// timed out, its resend under the same key that named the refund, a list
// that showed it, and a chat span that is no tool call.
type genTraces struct {
	spans, n int
	buf      bytes.Buffer
	line     []byte
}

func (g *genTraces) Read(p []byte) (int, error) {
	for g.buf.Len() < len(p) && g.n < g.spans {
		l := append(g.line[:0], `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"refund-agent"}}]},"scopeSpans":[{"scope":{"name":"agent"},"spans":[`...)
		for k := 0; k < 100 && g.n < g.spans; k++ {
			if k > 0 {
				l = append(l, ',')
			}
			l = g.span(l, g.n)
			g.n++
		}
		l = append(l, "]}]}]}\n"...)
		g.buf.Write(l)
		g.line = l
	}
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	return g.buf.Read(p)
}

func (g *genTraces) span(l []byte, n int) []byte {
	intent, kind := n/4, n%4
	t := 1_796_205_600_000_000_000 + int64(n)*1_000_000
	l = append(l, `{"traceId":"`...)
	l = hex(l, uint64(intent+1), 32)
	l = append(l, `","spanId":"`...)
	l = hex(l, uint64(n+1), 16)
	l = append(l, `","startTimeUnixNano":"`...)
	l = strconv.AppendInt(l, t, 10)
	l = append(l, `","endTimeUnixNano":"`...)
	l = strconv.AppendInt(l, t+500_000, 10)
	args := func(l []byte) []byte {
		l = append(l, `{\"intent\":\"refund-`...)
		l = strconv.AppendInt(l, int64(intent), 10)
		l = append(l, `\",\"charge\":\"ch_`...)
		l = strconv.AppendInt(l, int64(intent), 10)
		l = append(l, `\",\"amount\":4500,\"currency\":\"usd\",\"idempotency_key\":\"k-`...)
		l = strconv.AppendInt(l, int64(intent), 10)
		return append(l, `\"}`...)
	}
	switch kind {
	case 0, 1:
		l = append(l, `","name":"execute_tool create_refund","kind":1,"attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.name","value":{"stringValue":"create_refund"}},{"key":"gen_ai.tool.call.id","value":{"stringValue":"call_`...)
		l = strconv.AppendInt(l, int64(n), 10)
		l = append(l, `"}},{"key":"gen_ai.tool.call.arguments","value":{"stringValue":"`...)
		l = args(l)
		if kind == 0 {
			l = append(l, `"}},{"key":"error.type","value":{"stringValue":"timeout"}}],"status":{"code":2,"message":"timeout"}}`...)
			return l
		}
		l = append(l, `"}},{"key":"gen_ai.tool.call.result","value":{"stringValue":"{\"id\":\"re_`...)
		l = strconv.AppendInt(l, int64(intent), 10)
		return append(l, `\",\"object\":\"refund\",\"status\":\"succeeded\"}"}}],"status":{"code":1}}`...)
	case 2:
		l = append(l, `","name":"execute_tool list_refunds","kind":1,"attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.name","value":{"stringValue":"list_refunds"}},{"key":"gen_ai.tool.call.arguments","value":{"stringValue":"{\"intent\":\"refund-`...)
		l = strconv.AppendInt(l, int64(intent), 10)
		l = append(l, `\"}"}},{"key":"gen_ai.tool.call.result","value":{"stringValue":"{\"refunds\":[{\"id\":\"re_`...)
		l = strconv.AppendInt(l, int64(intent), 10)
		return append(l, `\",\"status\":\"succeeded\"}],\"has_more\":false}"}}],"status":{"code":1}}`...)
	}
	return append(l, `","name":"chat scripted-model","kind":3,"attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},{"key":"gen_ai.usage.input_tokens","value":{"intValue":"812"}}]}`...)
}

func hex(l []byte, v uint64, width int) []byte {
	s := strconv.FormatUint(v, 16)
	for range width - len(s) {
		l = append(l, '0')
	}
	return append(l, s...)
}

// BenchmarkTraces1M is check on 1 M spans (250,000 intents: 500,000
// creates, 250,000 lists, 250,000 other spans), beside the pdata decode
// of the same lines alone and the making of the lines alone: the goal is
// at most twice the decode's time, and at most 300 MB at the peak.
//
//	go test -run '^$' -bench 'Traces1M' -benchtime 3x ./check/
func BenchmarkTraces1M(b *testing.B) {
	const spans = 1_000_000
	b.Run("lines-only", func(b *testing.B) {
		for b.Loop() {
			n, _ := io.Copy(io.Discard, &genTraces{spans: spans})
			b.ReportMetric(float64(n)/(1<<20), "input-MiB")
		}
	})
	b.Run("pdata-decode-only", func(b *testing.B) {
		var peak uint64
		for b.Loop() {
			peak = max(peak, peakHeap(func() {
				br := bufio.NewReaderSize(&genTraces{spans: spans}, 1<<20)
				var u ptrace.JSONUnmarshaler
				n := 0
				for {
					line, err := br.ReadSlice('\n')
					if len(line) > 0 {
						td, derr := u.UnmarshalTraces(line)
						if derr != nil {
							b.Fatal(derr)
						}
						n += td.SpanCount()
					}
					if err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
				if n != spans {
					b.Fatalf("%d spans", n)
				}
			}))
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	})
	b.Run("check", func(b *testing.B) {
		defer check.LimitMemory()() // as the command does
		var peak uint64
		for b.Loop() {
			peak = max(peak, peakHeap(func() {
				tr, err := check.TracesFrom("gen.otlp.jsonl", &genTraces{spans: spans}, "", check.DefaultTraceOptions(), 0)
				if err != nil {
					b.Fatal(err)
				}
				if err := tr.WriteText(io.Discard); err != nil {
					b.Fatal(err)
				}
				if tr.Stats.Spans != spans || tr.Writes != spans/2 || tr.Reads != spans/4 || tr.Len() != 0 {
					b.Fatalf("%+v: %d writes, %d reads, %d anomalies", tr.Stats, tr.Writes, tr.Reads, tr.Len())
				}
			}))
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	})
}
