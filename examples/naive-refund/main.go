// Command naive-refund is what most refund code does, written against the
// replaylab conform contract (docs/conform.md): create the refund with
// stripe-go; on any error, or a refund that did not come back succeeded,
// call Create again, up to three times. stripe-go mints a fresh
// idempotency key for every call, so each call is a new request to the
// provider. It believes done on a succeeded refund and failed otherwise.
//
// It is here to be graded: replaylab conform -- ./naive-refund finds the
// rows of the test matrix where this loop refunds twice.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	stripe "github.com/stripe/stripe-go/v82"

	"github.com/replaylab/replaylab/examples/internal/executor"
)

func main() {
	intents := executor.Intents("naive-refund")
	timeout := executor.RequestTimeout()

	backend := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL:           stripe.String(os.Getenv("REPLAYLAB_API_BASE")),
		HTTPClient:    &http.Client{},
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})
	sc := stripe.NewClient(os.Getenv("REPLAYLAB_API_KEY"), stripe.WithBackends(&stripe.Backends{API: backend, Connect: backend, Uploads: backend, MeterEvents: backend}))

	out := json.NewEncoder(os.Stdout)
	for _, in := range intents {
		b := executor.Belief{Intent: in.Intent, Belief: "failed"}
		for try := 1; try <= 3; try++ {
			params := &stripe.RefundCreateParams{Charge: stripe.String(in.Charge), Amount: stripe.Int64(in.Amount)}
			params.AddMetadata("intent", in.Intent)
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			r, err := sc.V1Refunds.Create(ctx, params)
			cancel()
			if err == nil && r.Status == stripe.RefundStatusSucceeded {
				b = executor.Belief{Intent: in.Intent, Belief: "done", Refund: r.ID}
				break
			}
			// Anything else reads as "the refund failed": try again.
			if err != nil {
				b.Evidence = fmt.Sprintf("try %d: %v", try, err)
			} else {
				b.Evidence = fmt.Sprintf("try %d: refund %s is %s", try, r.ID, r.Status)
			}
			fmt.Fprintln(os.Stderr, "naive-refund:", in.Intent, b.Evidence)
		}
		_ = out.Encode(b)
	}
}
