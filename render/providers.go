package render

import (
	"fmt"
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
)

// ProviderList is `replaylab providers`: each profile's id, title and
// what sets its contract apart, in lines at most width wide.
func ProviderList(ps []*ledger.Profile, width int) string {
	idWidth := 0
	for _, p := range ps {
		idWidth = max(idWidth, len(p.ID))
	}
	indent := strings.Repeat(" ", idWidth+2)
	var b strings.Builder
	for _, p := range ps {
		text := termtext.Wrap(termtext.CleanLine(p.Title)+": "+termtext.CleanLine(p.Summary), max(30, width-len(indent)))
		fmt.Fprintf(&b, "%-*s  %s\n", idWidth, p.ID, text[0])
		for _, line := range text[1:] {
			fmt.Fprintf(&b, "%s%s\n", indent, line)
		}
	}
	return b.String()
}

// Profile is `replaylab providers NAME`: the profile in full, each rule in
// words beside its value, what the provider's pages leave open, and the
// pages it was written from.
func Profile(p *ledger.Profile, width int) string {
	var b strings.Builder
	wrap := func(label, text string) {
		lines := termtext.Wrap(termtext.CleanLine(text), max(30, width-16))
		fmt.Fprintf(&b, "  %-14s%s\n", label, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "  %-14s%s\n", "", l)
		}
	}
	fmt.Fprintf(&b, "%s: %s\n", p.ID, termtext.CleanLine(p.Title))
	for _, l := range termtext.Wrap(termtext.CleanLine(p.Summary), max(30, width)) {
		fmt.Fprintln(&b, l)
	}
	b.WriteString("\n")
	for _, r := range ProfileRules(p) {
		wrap(r.Field, r.Value+": "+r.Words)
	}
	if len(p.Assumed) > 0 {
		b.WriteString("\nNot in the provider's own pages (assumed):\n")
		for _, a := range p.Assumed {
			wrap(a.Field, a.Why)
		}
	}
	b.WriteString("\nSources:\n")
	for _, d := range p.Docs {
		fmt.Fprintf(&b, "  %s\n", termtext.CleanLine(d))
	}
	return b.String()
}

// Rule is one field of a profile: its name, its value as the file writes
// it, and what that means for a retry.
type Rule struct {
	Field, Value, Words string
}

// ProfileRules are the profile's fields in the order of the format, each
// with what it means: the one wording of a profile for the providers
// command, the lab's glossary and its chooser.
func ProfileRules(p *ledger.Profile) []Rule {
	key := p.Key.Where() + fmt.Sprintf(", at most %d characters", p.Key.MaxLength)
	keyWords := "a request without a key is executed, without deduplication"
	if p.Key.Required {
		keyWords = "a create without a key is refused (" + p.Key.Missing.String() + ")"
	}
	out := []Rule{{"key", key, keyWords}}
	if p.Saves != ledger.SavesNone {
		out = append(out, Rule{"retention", p.Retention.String(), "a key is kept " + p.Retention.Words() + "; past that, the same key executes anew"})
	}
	out = append(out, Rule{"saves", string(p.Saves), savesWords[p.Saves]})
	if p.Saves == ledger.SavesNone {
		return append(out, Rule{"refund_limit", p.RefundLimit.String(), "a refund past what was captured is refused before it runs"})
	}
	out = append(out, Rule{"replay", string(p.Replay), replayWords[p.Replay]})
	if p.FailedKey == nil {
		out = append(out, Rule{"failed_key", "reusable", "a rejection before execution saves nothing: the corrected request may go under the same key"})
	} else {
		out = append(out, Rule{"failed_key", "final " + p.FailedKey.String(), "once an attempt under a key failed, every later request under it is refused: a new key is needed"})
	}
	if p.Mismatch == nil {
		out = append(out, Rule{"mismatch", "ignored", "the kept answer comes back whatever the parameters: a new amount gets the old refund, as a success"})
	} else {
		out = append(out, Rule{"mismatch", p.Mismatch.String(), "the same key with other parameters is refused"})
	}
	switch {
	case p.InFlight == nil:
		out = append(out, Rule{"in_flight", "executes", "a repeat while the first still runs executes too: no guard"})
	case p.InFlight.Status >= 500:
		out = append(out, Rule{"in_flight", p.InFlight.String(), "a repeat while the first still runs gets a " + fmt.Sprint(p.InFlight.Status) + ", which a client cannot tell from a server error"})
	default:
		w := "a repeat while the first still runs is refused and nothing is saved: wait, then resend under the same key"
		if p.InFlight.RetryAfter > 0 {
			w += fmt.Sprintf(" (Retry-After: %d s)", p.InFlight.RetryAfter)
		}
		out = append(out, Rule{"in_flight", p.InFlight.String(), w})
	}
	return append(out, Rule{"refund_limit", p.RefundLimit.String(), "a refund past what was captured is refused before it runs"})
}

var savesWords = map[ledger.Saves]string{
	ledger.SavesAll:     "every answer is kept once execution began, 5xx included: a same-key resend cannot run twice",
	ledger.SavesNo5xx:   "every answer but a 5xx is kept; after a 5xx the key is free, and a same-key resend executes anew",
	ledger.SavesSuccess: "only 2xx answers are kept (even one whose reply was lost); after any error the key is free, and a same-key resend executes anew",
	ledger.SavesNone:    "no idempotency contract: keys are ignored and every executed request is a new effect",
}

var replayWords = map[ledger.Replay]string{
	ledger.ReplaySaved:    "a repeat returns the first answer as it was saved, status included",
	ledger.ReplayCurrent:  "a repeat returns the object as it is now (a pending refund may come back completed or failed)",
	ledger.ReplayComplete: "a repeat finishes work that failed or stopped part-way and returns the updated answer",
}
