package render

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// SessionText is what serve prints when it stops: what it served, and a
// verdict per intent with what the provider saw that makes it.
func SessionText(s *export.Session) string {
	var b bytes.Buffer
	n := map[string]int{}
	all, calls, cancelled := 0, 0, 0
	for r := range s.Each() {
		// A request counted again (Again) was sent that many more times.
		n[r.Kind] += 1 + r.Again
		all += 1 + r.Again
		if r.Call != nil {
			calls++
			if r.Call.Cancelled != nil {
				cancelled++
			}
		}
	}
	parts := []string{termtext.Plural(n[export.RequestCreate], "create")}
	api := all - n[export.RequestFaults]
	if n[export.RequestRefused] > 0 {
		parts = append(parts, fmt.Sprintf("%d refused", n[export.RequestRefused]))
	}
	if reads := n[export.RequestRetrieve] + n[export.RequestList]; reads > 0 {
		parts = append(parts, termtext.Plural(reads, "read"))
	}
	if n[export.RequestUpdate] > 0 {
		parts = append(parts, termtext.Plural(n[export.RequestUpdate], "update"))
	}
	if n[export.RequestCancel] > 0 {
		parts = append(parts, termtext.Plural(n[export.RequestCancel], "cancel"))
	}
	if calls > 0 {
		// Cancellations of tool calls: the client gave up; nothing was
		// undone.
		mcp := fmt.Sprintf("%d as MCP tool calls", calls)
		if calls == 1 {
			mcp = "1 as an MCP tool call"
		}
		if cancelled > 0 {
			mcp += fmt.Sprintf(", %d cancelled by the client", cancelled)
		}
		parts = append(parts, mcp)
	}
	fmt.Fprintf(&b, "served %s (%s) · %s · ledger: %s, %d succeeded\n",
		termtext.Plural(api, "request"), strings.Join(parts, ", "), missions.Settings{Contract: s.Settings.Contract}.Words(missions.SettingContract), termtext.Plural(s.Ledger.Effects, "effect"), s.Outcome.Succeeded)
	if len(s.Outcome.Verdicts) == 0 {
		b.WriteString("no intent sent a refund, so there is no verdict\n")
	}
	idW := 0
	for _, v := range s.Outcome.Verdicts {
		idW = max(idW, ansi.StringWidth(termtext.Escaped(v.Intent)))
	}
	seen := sentByIntent(s)
	for _, v := range s.Outcome.Verdicts {
		id := termtext.Escaped(v.Intent)
		id += strings.Repeat(" ", idW-ansi.StringWidth(id))
		fmt.Fprintf(&b, "  %s  %-14s  %s\n", id, v.Verdict, sessionVerdictWords(seen[v.Intent], v))
	}
	if s.Mission != nil {
		judged := map[string]bool{}
		for _, v := range s.Outcome.Verdicts {
			judged[v.Intent] = true
		}
		for _, in := range s.Mission.Intents {
			if !judged[in.ID] {
				fmt.Fprintf(&b, "  %s: not attempted (no create named it), so no verdict\n", termtext.Escaped(in.ID))
			}
		}
	}
	return b.String()
}

// sent is what the provider saw of one intent: its creates with and
// without a key, its keys, and the statuses replies showed of its refunds
// in turn.
type sent struct {
	keyed, keyless int
	keys           map[string]bool
	heard          []string
	// repeats counts its creates by how each repeated the one before.
	repeats map[string]int
}

// sentByIntent gathers what the provider saw of every intent, in one pass
// over the session.
func sentByIntent(s *export.Session) map[string]*sent {
	owner := make(map[ledger.ObjectID]string, len(s.Ledger.Objects))
	for _, o := range s.Ledger.Objects {
		owner[o.ID] = o.Intent
	}
	out := map[string]*sent{}
	of := func(intent string) *sent {
		x := out[intent]
		if x == nil {
			x = &sent{keys: map[string]bool{}, repeats: map[string]int{}}
			out[intent] = x
		}
		return x
	}
	for r := range s.Each() {
		if r.Kind == export.RequestCreate {
			x := of(r.Intent)
			if r.Repeat != nil {
				x.repeats[r.Repeat.How]++
			}
			if r.Key == "" {
				x.keyless++
			} else {
				x.keyed++
				x.keys[r.Key] = true
			}
		}
		if r.Wire != export.WireDelivered {
			continue
		}
		for _, o := range r.Shown {
			intent, ok := owner[o.Object]
			if !ok {
				continue
			}
			x, st := of(intent), o.Status.String()
			if len(x.heard) == 0 || x.heard[len(x.heard)-1] != st {
				x.heard = append(x.heard, st)
			}
		}
	}
	return out
}

// repeatWords says how an intent's creates repeated the ones before
// them (export.Repeat): "; of its creates after the first, 2 sent again
// while no reply had come, 1 with other arguments".
func repeatWords(n map[string]int) string {
	say := map[string]string{
		export.RepeatResent:         "the same request sent again",
		export.RepeatReissued:       "sent again while no reply had come",
		export.RepeatAfterReply:     "sent again after an answer",
		export.RepeatOtherArguments: "with other arguments",
	}
	var parts []string
	for _, how := range export.RepeatWords() {
		if n[how] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[how], say[how]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; of its creates after the first, " + strings.Join(parts, ", ")
}

// sessionVerdictWords says what the provider saw (x) that makes verdict v.
func sessionVerdictWords(x *sent, v missions.IntentVerdict) string {
	if x == nil {
		x = &sent{}
	}
	var words string
	switch {
	case x.keyless == 0:
		words = fmt.Sprintf("%s under %s", termtext.Plural(x.keyed, "create"), termtext.Plural(len(x.keys), "key"))
	case x.keyed == 0:
		words = termtext.Plural(x.keyless, "create") + " without a key"
	default:
		words = fmt.Sprintf("%s: %d under %s, %d without a key", termtext.Plural(x.keyed+x.keyless, "create"), x.keyed, termtext.Plural(len(x.keys), "key"), x.keyless)
	}
	switch v.Verdict {
	case missions.ExactlyOnce:
		return words + "; one refund, and a reply told the client it succeeded"
	case missions.FailedCleanly:
		if len(x.heard) > 0 {
			return words + "; no refund stands, and the client was shown its refund " + strings.Join(x.heard, ", then ")
		}
		return words + "; no refund stands, and the client heard only errors or nothing"
	case missions.Duplicate:
		return fmt.Sprintf("%s; %s stand for one intent%s", words, termtext.Plural(v.Effects, "refund"), repeatWords(x.repeats))
	case missions.HiddenEffect:
		return fmt.Sprintf("%s; %s stands, but no reply told the client it succeeded", words, termtext.Plural(v.Effects, "refund"))
	case missions.Phantom:
		return words + "; the client was told of another intent's refund as its own, and none of its own stands"
	}
	return words
}
