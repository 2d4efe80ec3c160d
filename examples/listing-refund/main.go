// Command listing-refund looks careful, and passes every row of the
// matrix: it mints one durable key per intent, classifies every outcome,
// reconciles by listing the intent's refunds and escalates what it cannot
// settle. It has one flaw, and only generated schedules (replaylab
// conform --explore) meet it: when the list shows no refund it resends
// under the same key, trusting the key to stand in for the original
// however long ago it was sent. Past the provider's retention the key is
// gone, and an original that commits late makes a second refund.
//
// It is the executor of guarded-refund (examples/internal/executor) with
// the one rule it leaves out: that a resend must come inside the key's
// retention. docs/conform.md shows both of its results.
package main

import (
	"encoding/json"
	"os"

	"github.com/replaylab/replaylab/examples/internal/executor"
	"github.com/replaylab/replaylab/examples/internal/restapi"
)

func main() {
	intents := executor.Intents("listing-refund")
	x := executor.FromEnv("listing-refund", restapi.New())
	// The flaw: an empty list is taken as proof that the original never
	// ran, so a resend under its key is taken as safe at any age.
	x.TrustEmptyList = true
	out := json.NewEncoder(os.Stdout)
	for _, in := range intents {
		_ = out.Encode(x.Settle(in))
	}
}
