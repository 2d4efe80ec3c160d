package lab

// A recorded client's run: a session written by serve --record or conform
// --record, stepped request by request. Its steps are told from the
// requests themselves, in place of a mission's schedule.

import (
	"fmt"
	"strings"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/reproduce"
)

// takenLabel names a recorded run's last step when the session was taken
// while serving, before the clock settled.
const takenLabel = "as the session was taken"

// requestWords is a request of a recorded run as the schedule and the
// header name it: in full, and short.
func requestWords(r export.SessionRequest) (long, short string) {
	what := r.Kind
	if r.Call != nil {
		what = r.Call.Tool
	}
	switch r.Kind {
	case export.RequestCreate:
		short = string(r.Fixture)
		if r.Delay > 0 {
			short += fmt.Sprintf(" +%d", r.Delay)
		}
		key := "no key"
		if r.Key != "" {
			key = "key " + r.Key
		}
		long = fmt.Sprintf("request %d, %s %s (%s), fixture %s", r.Seq, what, r.Intent, key, short)
		short = r.Intent + ": " + short
	case export.RequestRetrieve, export.RequestList:
		fault := ""
		if r.ReadFault != "" && r.ReadFault != "read_ok" {
			fault = ", " + string(r.ReadFault)
		}
		q := strings.SplitN(r.Payload, "?", 2)[0]
		if r.Kind == export.RequestList {
			q = "refunds"
		}
		long = fmt.Sprintf("request %d, %s %s%s", r.Seq, what, q, fault)
		short = fmt.Sprintf("%s %s%s", r.Kind, q, fault)
	case export.RequestRefused:
		long = fmt.Sprintf("request %d, refused before the provider: %s", r.Seq, orDash(r.Error))
		short = "refused: " + orDash(r.Error)
	default:
		id := strings.SplitN(r.Payload, "?", 2)[0]
		long = fmt.Sprintf("request %d, %s %s", r.Seq, what, id)
		short = r.Kind + " " + id
	}
	if r.Again > 0 {
		// The same request came again right after, answered alike.
		long += fmt.Sprintf(", and %d more alike", r.Again)
		short += fmt.Sprintf(" ×%d", r.Again+1)
	}
	return termtext.CleanLine(long), termtext.CleanLine(short)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// recordedLines are the schedule's lines of a recorded run: one per
// request, then the clock running out (or the session as it was taken).
func recordedLines(run *reproduce.SessionRun) []schedLine {
	out := make([]schedLine, 0, len(run.Steps)+1)
	intents := map[string]bool{}
	for _, r := range run.Steps {
		if r.Intent != "" {
			intents[r.Intent] = true
		}
	}
	for i, r := range run.Steps {
		_, short := requestWords(r)
		if len(intents) <= 1 {
			// One intent: the fixture is what tells the steps apart.
			short = strings.TrimPrefix(short, r.Intent+": ")
		}
		out = append(out, schedLine{step: i + 1, first: true, text: short, worker: -1})
	}
	last := "clock runs out"
	if !run.Settled {
		last = takenLabel
	}
	return append(out, schedLine{step: len(run.Steps) + 1, first: true, text: last, worker: -1})
}
