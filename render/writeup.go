package render

import (
	"errors"
	"fmt"
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// WriteUp renders one case as a Markdown document a person can paste into
// a write-up: the title and teaching goal, the settings, a table of the
// timeline, the transcript beside the ledger, the verdicts, the final
// ledger and the command that reproduces the case. Every table is a GFM
// table; text from the case is cleaned and escaped.
func WriteUp(c *missions.Case) ([]byte, error) {
	if c == nil {
		return nil, errors.New("write-up: no case")
	}
	if c.Mission.ID == "" {
		return nil, errors.New("write-up: the case has no mission id")
	}
	var b strings.Builder
	m := c.Mission
	title := m.Title
	if strings.TrimSpace(title) == "" {
		title = m.ID
	}
	fmt.Fprintf(&b, "# %s\n\n", MarkdownText(title))
	fmt.Fprintf(&b, "Mission %s, %s.\n", MarkdownCode(m.ID), MarkdownText(SettingsLine(c.Settings)))
	if goal := strings.TrimSpace(termtext.Clean(m.Goal)); goal != "" {
		b.WriteString("\n**Teaching goal.** ")
		b.WriteString(MarkdownText(goal))
		b.WriteByte('\n')
	}

	b.WriteString("\n## Settings\n\n")
	MarkdownTable(&b, []string{"setting", "value"}, settingsRows(c))

	b.WriteString("\n## Timeline\n\n")
	writeTimeline(&b, c)

	b.WriteString("\n## Sequence\n\n")
	b.WriteString(SequenceDiagram(c))

	b.WriteString("\n## Transcript beside the ledger\n\n")
	writeTranscript(&b, c)

	b.WriteString("\n## Verdict\n\n")
	writeVerdicts(&b, c)

	b.WriteString("\n## Ledger at the end\n\n")
	writeLedger(&b, c.Ledger)

	b.WriteString("\n## Reproduce\n\n")
	b.WriteString("```sh\n")
	b.WriteString(ReproduceCommand(c))
	b.WriteString("\n```\n")
	if _, err := missions.BuiltIn().Get(c.Mission.ID); err != nil {
		b.WriteString("\nThis mission is not in the built-in catalog: add `--missions DIR`, naming the folder that holds its file. `replaylab replay` on the case's JSON export reruns it from the case alone.\n")
	}
	return []byte(b.String()), nil
}

// ReproduceCommand is the command line that runs the case's mission under
// the case's settings again, e.g.
// "replaylab run timeout-then-success --stable-keys=off --policy=naive --contract=v1".
// The key source is named only when it is not the mission's own, the seed
// only when it is not the default.
func ReproduceCommand(c *missions.Case) string {
	parts := []string{"replaylab", "run", termtext.ShellWord(termtext.CleanLine(c.Mission.ID))}
	for _, f := range c.Settings.Flags(&c.Mission) {
		parts = append(parts, termtext.ShellWord(f))
	}
	return strings.Join(parts, " ")
}

func settingsRows(c *missions.Case) [][]string {
	s := c.Settings
	budget := "the schedule's attempts"
	if s.MaxAttempts > 0 {
		budget = fmt.Sprintf("%d attempts per intent", s.MaxAttempts)
	}
	deadline := "none"
	if s.Deadline > 0 {
		deadline = fmt.Sprintf("tick %d", s.Deadline)
	}
	retention := "the provider's default"
	if c.Mission.Retention > 0 {
		retention = termtext.Plural(c.Mission.Retention, "tick")
	}
	return [][]string{
		{"stable keys", missions.OnOff(s.StableKeys)},
		{"policy", MarkdownCode(string(s.Policy))},
		{"contract", MarkdownCode(string(s.Contract))},
		{"key source", MarkdownCode(string(s.KeySource))},
		{"seed", fmt.Sprint(s.Seed)},
		{"budget", budget},
		{"deadline", deadline},
		{"key retention", retention},
	}
}

func writeTimeline(b *strings.Builder, c *missions.Case) {
	many := len(c.Mission.Intents) > 1
	header := []string{"#", "tick", "event"}
	if many {
		header = append(header, "intent")
	}
	header = append(header, "fixture", "provider", "observed", "class", "checkpoint", "effects", "what happened")
	var rows [][]string
	for _, ev := range c.Events {
		event := MarkdownText(string(ev.Kind))
		if ev.Attempt > 0 {
			event = fmt.Sprintf("%s %d", event, ev.Attempt)
		}
		if ev.Worker > 0 {
			event += fmt.Sprintf(" (worker %d)", ev.Worker)
		}
		row := []string{fmt.Sprint(ev.Seq), fmt.Sprint(ev.Tick), event}
		if many {
			row = append(row, MarkdownCode(ev.Intent))
		}
		row = append(row,
			MarkdownCode(string(ev.Fixture)),
			MarkdownText(ev.Provider),
			MarkdownText(string(ev.Observed)),
			MarkdownCode(string(ev.Class)),
			MarkdownText(string(ev.Checkpoint)),
			fmt.Sprint(ev.Effects),
			MarkdownText(ev.Note),
		)
		rows = append(rows, row)
	}
	MarkdownTable(b, header, rows)
}

// objectsHeld words what stood in the ledger after an event: the effect
// count and the objects, a few of them when there are many.
func objectsHeld(n int, h Held) string {
	if n <= 0 {
		return "no effect"
	}
	ids := h.IDs()
	for i, id := range ids {
		if id != "…" {
			ids[i] = MarkdownCode(id)
		}
	}
	if len(ids) == 0 {
		return termtext.Plural(n, "effect")
	}
	return termtext.Plural(n, "effect") + ": " + strings.Join(ids, ", ")
}

// A list of the objects in the ledger names them all up to heldListed;
// beyond, the first heldFirst and the newest.
const (
	heldListed = 4
	heldFirst  = 1
)

func writeTranscript(b *strings.Builder, c *missions.Case) {
	var rows [][]string
	attempt := ""
	held := HeldAfter(c, heldListed, heldFirst)
	for i, ev := range c.Events {
		if ev.Attempt > 0 {
			attempt = fmt.Sprint(ev.Attempt)
		}
		if strings.TrimSpace(ev.Say) == "" {
			continue
		}
		rows = append(rows, []string{attempt, fmt.Sprint(ev.Tick), MarkdownText(ev.Say), objectsHeld(ev.Effects, held[i])})
	}
	if len(rows) == 0 {
		b.WriteString("The agent said nothing to the user.\n")
		return
	}
	MarkdownTable(b, []string{"after attempt", "tick", "the agent said", "the ledger held"}, rows)
}

func writeVerdicts(b *strings.Builder, c *missions.Case) {
	o := c.Outcome
	fmt.Fprintf(b, "The ledger holds %s for %s intended; %d reached a successful terminal state.\n\n",
		termtext.Plural(o.Effects, "effect"), termtext.Plural(o.Intended, "effect"), o.Succeeded)
	var rows [][]string
	for _, v := range o.Verdicts {
		rows = append(rows, []string{MarkdownCode(v.Intent), "**" + MarkdownText(string(v.Verdict)) + "**", MarkdownText(string(v.Belief)), fmt.Sprint(v.Effects)})
	}
	MarkdownTable(b, []string{"intent", "verdict", "the caller believes", "effects"}, rows)
	for _, e := range o.Evidence {
		fmt.Fprintf(b, "\n### Evidence handed over for %s\n\n**Why it went to a person:** %s\n\n", MarkdownCode(e.Intent), MarkdownText(strings.TrimSuffix(e.Reason, ".")+"."))
		if e.Key != "" {
			fmt.Fprintf(b, "Key: %s.\n\n", MarkdownCode(e.Key))
		}
		var rows [][]string
		for _, a := range e.Attempts {
			resp := "nothing heard"
			if a.Response != nil {
				resp = fmt.Sprint(a.Response.Code)
				if a.Response.Object != 0 {
					resp += " " + MarkdownCode(a.Response.Object.String())
				}
				if a.Response.Status != 0 {
					resp += " " + MarkdownText(a.Response.Status.String())
				}
			}
			rows = append(rows, []string{fmt.Sprint(a.Attempt), fmt.Sprint(a.Tick), MarkdownText(string(a.Observed)), resp, MarkdownText(a.Error)})
		}
		if len(rows) > 0 {
			MarkdownTable(b, []string{"attempt", "tick", "observed", "the caller heard", "error"}, rows)
		}
		for _, r := range e.Reads {
			fmt.Fprintf(b, "\n- read at tick %d: %s", r.Tick, MarkdownText(r.Summary))
		}
		if len(e.Reads) > 0 {
			b.WriteByte('\n')
		}
	}
}

func writeLedger(b *strings.Builder, l ledger.Snapshot) {
	if len(l.Objects) == 0 {
		b.WriteString("No effects.\n")
	} else {
		var rows [][]string
		for _, o := range l.Objects {
			rows = append(rows, []string{MarkdownCode(o.ID.String()), MarkdownCode(o.Intent), MarkdownCode(o.Key), MarkdownText(o.Status.String()), fmt.Sprint(o.Tick), MarkdownText(o.Payload)})
		}
		MarkdownTable(b, []string{"effect", "intent", "key", "status", "tick", "payload"}, rows)
	}
	if len(l.Records) == 0 {
		b.WriteString("\nNo idempotency records.\n")
		return
	}
	b.WriteByte('\n')
	var rows [][]string
	for _, r := range l.Records {
		resp := fmt.Sprint(r.Response.Code)
		if r.Response.Object != 0 {
			resp += " " + MarkdownCode(r.Response.Object.String())
		}
		rows = append(rows, []string{MarkdownCode(r.Key), MarkdownText(r.State.String()), resp, fmt.Sprint(r.ExpiresAt)})
	}
	MarkdownTable(b, []string{"idempotency key", "state", "saved response", "expires at tick"}, rows)
}
