package serve

import (
	"fmt"
	"net"
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
)

// Banner says where serve listens and what it will do; addr is nil over
// stdio.
func Banner(addr net.Addr, srv *Server, until int) string {
	o, left := srv.Options(), srv.FaultsLeft()
	var b strings.Builder
	tools := strings.Join(ToolNames(), ", ")
	switch {
	case addr == nil:
		fmt.Fprintf(&b, "replaylab serve: MCP over standard input and output (tools %s)\n", tools)
	case o.MCP:
		fmt.Fprintf(&b, "replaylab serve: listening on http://%s (REST), MCP tools at http://%s%s\n", addr, addr, MCPPath)
		fmt.Fprintf(&b, "  tools %s over Streamable HTTP\n", tools)
	default:
		fmt.Fprintf(&b, "replaylab serve: listening on http://%s\n", addr)
	}
	if w := srv.wire; w.name() != WireStripe && addr != nil {
		fmt.Fprintf(&b, "  %s's API: %s\n", w.name(), w.serves())
		if o.Webhook != "" {
			fmt.Fprintf(&b, "  webhooks: each refund's outcome as a signed REFUND notification to %s\n", termtext.Escaped(o.Webhook))
		}
	}
	if tcp, ok := addr.(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		fmt.Fprintf(&b, "  note: %s is not loopback; other machines can reach this server\n", tcp.IP)
	}
	if o.MCP && o.ToolErrors == ToolErrorsOpaque {
		fmt.Fprintf(&b, "  tool errors are opaque: a refused or failed create says only %q\n", OpaqueError)
	}
	fmt.Fprintf(&b, "  %s · one tick is %v · a lost reply is held until the client gives up (at most %v)\n", providerWords(o), o.Tick, o.Hold)
	words := func(fs []missions.Fixture) string {
		w := make([]string, len(fs))
		for i, f := range fs {
			w[i] = string(f)
		}
		return strings.Join(w, ", ")
	}
	link := o.IntentField
	if o.MCP {
		link += " or create_refund's intent"
	}
	switch {
	case o.Mission != nil:
		fmt.Fprintf(&b, "  faults: mission %s, per intent (link creates with %s):\n", o.Mission.ID, link)
		for _, in := range o.Mission.Intents {
			fmt.Fprintf(&b, "    %s: %s; then success\n", termtext.Escaped(in.ID), words(left[in.ID]))
		}
	case len(left[""]) > 0:
		fmt.Fprintf(&b, "  faults: %s; after those, every create meets success (link creates with %s)\n", words(left[""]), link)
	default:
		fmt.Fprintf(&b, "  faults: none; every create meets success (link creates with %s)\n", link)
	}
	if reads := srv.ReadFaultsLeft(); len(reads) > 0 {
		w := make([]string, len(reads))
		for i, r := range reads {
			w[i] = r.String()
		}
		fmt.Fprintf(&b, "  reads meet: %s; after those, every read is answered as the ledger stands\n", strings.Join(w, ", "))
	}
	switch {
	case until > 0:
		fmt.Fprintf(&b, "  serve stops after %s (or at Ctrl-C) and prints a verdict per intent\n", termtext.Plural(until, "API request"))
	case addr == nil:
		b.WriteString("  serve stops when its input ends (or at Ctrl-C) and prints a verdict per intent\n")
	default:
		b.WriteString("  Ctrl-C stops serve and prints a verdict per intent\n")
	}
	return b.String()
}

// DBWords says what serve found in its database; rec is nil for a new one.
func DBWords(path string, rec *Recovered) string {
	if rec == nil {
		return "durable: " + path + " (new); each request is written and synced before its reply"
	}
	entries := fmt.Sprintf("%d log entries", rec.Entries)
	if rec.Entries == 1 {
		entries = "1 log entry"
	}
	w := fmt.Sprintf("durable: %s, recovered from %s: %s, %s", path, entries,
		termtext.Plural(rec.Requests, "request"), termtext.Plural(rec.Refunds, "refund"))
	if rec.Unconfirmed == 1 {
		w += "; 1 reply not known to have been delivered"
	} else if rec.Unconfirmed > 1 {
		w += fmt.Sprintf("; %d replies not known to have been delivered", rec.Unconfirmed)
	}
	if rec.InFlight > 0 {
		w += fmt.Sprintf("; %s still executing, to commit at its due tick", termtext.Plural(rec.InFlight, "late commit"))
	}
	return w
}

// providerWords names the provider's profile as the banner says it:
// "contract v1" for the first three, as always, "provider checkout (key in
// the Cko-Idempotency-Key header)" for any other.
func providerWords(o Options) string {
	if providers.Short(o.Contract) || o.Profile == nil {
		return "contract " + string(o.Contract)
	}
	return "provider " + o.Profile.ID + " (key in the " + o.Profile.Key.Where() + "; replaylab providers " + o.Profile.ID + " says its contract)"
}
