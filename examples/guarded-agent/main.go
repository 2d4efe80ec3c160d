// Command guarded-agent is an agent whose refund tool layer does what the
// source article asks of one, over the provider's MCP tools: the key is
// minted once per intent and kept durably (REPLAYLAB_STATE_DIR), and every
// call for that intent carries it; a call whose result never comes, or
// whose error says nothing (a timeout, a closed stream, "Failed to create
// refund"), is reconciled with list_refunds before anything is sent again;
// what cannot be settled safely goes to a person with the evidence. The
// rules are the executor's (examples/internal/executor), the same as
// guarded-refund's over REST.
//
// The "model" is a script (no LLM): it asks for each intent once, and the
// tool layer answers for it.
//
// It is here to be graded: replaylab conform --mcp -- ./guarded-agent.
package main

import (
	"encoding/json"
	"os"

	"github.com/replaylab/replaylab/examples/internal/executor"
)

func main() {
	intents := executor.Intents("guarded-agent")
	cs := executor.Connect("guarded-agent")
	defer cs.Close()
	x := executor.FromEnv("guarded-agent", executor.Tools{CS: cs})
	out := json.NewEncoder(os.Stdout)
	for _, in := range intents {
		_ = out.Encode(x.Settle(in))
	}
}
