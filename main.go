// Command replaylab is a terminal lab for learning why a timed-out write is
// not a failure: it replays tool-call attempts against a simulated provider
// and shows what the ledger holds after each one. The commands live in
// internal/cli; this file only hands them the process.
package main

import (
	"os"

	"github.com/replaylab/replaylab/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
