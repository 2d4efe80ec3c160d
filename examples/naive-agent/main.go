// Command naive-agent is an agent loop as most are built, with a scripted
// "model" (no LLM) over the provider's MCP tools: it calls create_refund
// without an idempotency key and, on an error result or a call that never
// answers, calls it again, as a model obeying "An error occurred while
// running the tool. Please try again." does, up to three times. Run again
// for the same intent with another amount, it asks again with the new
// amount. It believes done on a succeeded refund and failed otherwise.
//
// It is here to be graded: replaylab conform --mcp -- ./naive-agent finds
// the rows of the test matrix where this loop refunds twice.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/replaylab/replaylab/examples/internal/executor"
)

func main() {
	intents := executor.Intents("naive-agent")
	timeout := executor.RequestTimeout()
	cs := executor.Connect("naive-agent")
	defer cs.Close()

	out := json.NewEncoder(os.Stdout)
	for _, in := range intents {
		b := executor.Belief{Intent: in.Intent, Belief: "failed"}
		for try := 1; try <= 3; try++ {
			var r executor.ToolRefund
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			err := executor.Call(ctx, cs, "create_refund", executor.CreateArgs(in, ""), &r)
			cancel()
			if err == nil && r.Status == "succeeded" {
				b = executor.Belief{Intent: in.Intent, Belief: "done", Refund: r.ID}
				break
			}
			// The model reads "the tool failed" and calls it again.
			if err != nil {
				b.Evidence = fmt.Sprintf("try %d: %v", try, err)
			} else {
				b.Evidence = fmt.Sprintf("try %d: refund %s is %s", try, r.ID, r.Status)
			}
			fmt.Fprintln(os.Stderr, "naive-agent:", in.Intent, b.Evidence)
		}
		_ = out.Encode(b)
	}
}
