package render

import (
	"fmt"
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// SequenceDiagram draws a case as a Mermaid sequenceDiagram between the
// caller and the provider, fenced for Markdown: each attempt an arrow
// with its intent and key, what the provider did as a note, and the reply
// as an arrow back, drawn lost (--x) when it never arrived in time; a
// request dropped on the way is an arrow that ends in a cross; read-backs,
// what the provider did on its own and escalations are notes. GitHub and
// most Markdown tools render it as a picture.
func SequenceDiagram(c *missions.Case) string {
	var b strings.Builder
	b.WriteString("```mermaid\nsequenceDiagram\n")
	b.WriteString("    participant C as Caller\n")
	b.WriteString("    participant P as Provider\n")
	for _, ev := range c.Events {
		switch ev.Kind {
		case missions.EventAttempt:
			send := fmt.Sprintf("attempt %d, %s, %s", ev.Attempt, ev.Intent, keyPhrase(ev.Key))
			if ev.Provider == "not_reached" {
				fmt.Fprintf(&b, "    C-xP: %s (dropped on the way)\n", mmText(send))
				fmt.Fprintf(&b, "    Note over C: timeout\n")
				continue
			}
			fmt.Fprintf(&b, "    C->>P: %s\n", mmText(send))
			if note := providerDid(ev); note != "" {
				fmt.Fprintf(&b, "    Note over P: %s\n", mmText(note))
			}
			switch ev.Observed {
			case missions.ObservedTimeout:
				fmt.Fprintf(&b, "    P--xC: reply lost: the caller times out\n")
			case missions.ObservedNothing:
				fmt.Fprintf(&b, "    P--xC: reply not recorded: the caller crashed\n")
			default:
				fmt.Fprintf(&b, "    P-->>C: %s\n", mmText(replyWords(ev)))
			}
		case missions.EventRead:
			fmt.Fprintf(&b, "    C->>P: read back %s\n", mmText(ev.Intent))
			fmt.Fprintf(&b, "    P-->>C: %s\n", mmText(ev.Note))
		case missions.EventCommit, missions.EventResolve, missions.EventPrune:
			fmt.Fprintf(&b, "    Note over P: on its own, %s\n", mmText(ev.Note))
		case missions.EventWait:
			fmt.Fprintf(&b, "    Note over C,P: %s\n", mmText(ev.Note))
		case missions.EventRestart:
			fmt.Fprintf(&b, "    Note over C: the caller restarts\n")
		case missions.EventEscalate:
			fmt.Fprintf(&b, "    Note over C: escalated to a person: %s\n", mmText(ev.Intent))
		}
	}
	b.WriteString("```\n")
	return b.String()
}

func keyPhrase(k string) string {
	if k == "" {
		return "no key"
	}
	return "key " + k
}

// providerDid says in a few words what the provider did with an attempt.
func providerDid(ev missions.Event) string {
	var obj string
	if ev.Response != nil && ev.Response.Object != 0 {
		obj = " " + ev.Response.Object.String()
	}
	switch ledger.Action(ev.Provider) {
	case ledger.Committed:
		return "commits" + obj
	case ledger.Replayed:
		return "replays the saved response" + obj
	case ledger.Completed:
		return "completes the earlier work" + obj
	case ledger.Executing:
		return "still executing"
	case ledger.Rejected:
		return "refuses before executing"
	case ledger.Conflict:
		return "the key is still executing: conflict"
	case ledger.Mismatch:
		return "the key was saved with other parameters"
	}
	return ev.Provider
}

// replyWords is the reply that reached the caller.
func replyWords(ev missions.Event) string {
	if ev.Response == nil {
		return string(ev.Observed)
	}
	r := ev.Response
	s := fmt.Sprintf("%d", r.Code)
	if r.Object != 0 {
		s += " " + r.Object.String()
	}
	if r.Status != 0 {
		s += " " + r.Status.String()
	}
	return s + ", " + string(ev.Observed)
}

// mmText makes text safe inside a Mermaid message: one line, without the
// characters Mermaid reads as syntax there (; ends a statement, # starts
// an entity, < and > open HTML). A hidden character's escape (\u200b)
// stays as it is.
func mmText(s string) string {
	s = termtext.CleanLine(s)
	return strings.NewReplacer(";", ",", "#", "no. ", "<", "‹", ">", "›").Replace(s)
}
