// Command guarded-refund is the executor the source article asks for
// (examples/internal/executor has its rules), over the Stripe-shaped REST
// API with stripe-go, written against the replaylab conform contract
// (docs/conform.md): a key per intent minted once and kept durably, every
// outcome classified, reconciliation by listing the intent's refunds, and
// escalation with the evidence when nothing else is safe.
package main

import (
	"encoding/json"
	"os"

	"github.com/replaylab/replaylab/examples/internal/executor"
	"github.com/replaylab/replaylab/examples/internal/restapi"
)

func main() {
	intents := executor.Intents("guarded-refund")
	x := executor.FromEnv("guarded-refund", restapi.New())
	out := json.NewEncoder(os.Stdout)
	for _, in := range intents {
		_ = out.Encode(x.Settle(in))
	}
}
