package conform

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// beliefs collects the belief lines of a row's runs, and what was wrong
// with the lines that tried to be one.
type beliefs struct {
	known    map[string]bool
	ids      []string
	byIntent map[string][]export.ConformBelief
	problems []string
}

func newBeliefs(sc *Scenario) *beliefs {
	b := &beliefs{known: map[string]bool{}, byIntent: map[string][]export.ConformBelief{}}
	for _, in := range sc.Intents {
		b.known[in.Intent] = true
		b.ids = append(b.ids, in.Intent)
	}
	return b
}

// beliefLine is a line of the client's standard output that says what it
// believes of an intent.
type beliefLine struct {
	Intent   *string `json:"intent"`
	Belief   *string `json:"belief"`
	Refund   *string `json:"refund"`
	Evidence *string `json:"evidence"`
}

var beliefWords = []string{export.BeliefDone, export.BeliefFailed, export.BeliefPending, export.BeliefEscalated}

// read takes run's lines of standard output: a line that mentions
// "belief" is a belief line and must be one; every other line is output.
func (b *beliefs) read(run int, lines []string) {
	for n, raw := range lines {
		line := strings.TrimSpace(raw)
		if !strings.Contains(line, `"belief"`) {
			continue
		}
		bad := func(what string) {
			b.problems = append(b.problems, fmt.Sprintf("run %d, line %d of its output is a malformed belief line (%s): %s", run, n+1, what, shorten(line, 160)))
		}
		var bl beliefLine
		if err := json.Unmarshal([]byte(line), &bl); err != nil {
			bad("not a JSON object of strings: " + err.Error())
			continue
		}
		switch {
		case bl.Intent == nil || *bl.Intent == "":
			bad(`no "intent"`)
		case !b.known[*bl.Intent]:
			bad(fmt.Sprintf("intent %q is not one this scenario gave; it gave %s", *bl.Intent, strings.Join(b.ids, ", ")))
		case bl.Belief == nil || !slices.Contains(beliefWords, *bl.Belief):
			got := "none"
			if bl.Belief != nil {
				got = fmt.Sprintf("%q", *bl.Belief)
			}
			bad(fmt.Sprintf("belief %s; give done, failed, pending or escalated", got))
		default:
			cb := export.ConformBelief{Run: run, Belief: *bl.Belief}
			if bl.Refund != nil {
				cb.Refund = *bl.Refund
			}
			if bl.Evidence != nil {
				cb.Evidence = *bl.Evidence
			}
			b.byIntent[*bl.Intent] = append(b.byIntent[*bl.Intent], cb)
		}
	}
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// intentsOf is each intent of the row: the provider's verdict and the
// refunds standing once settled, and the client's beliefs.
func intentsOf(sc *Scenario, _, after *export.Session, got *beliefs) []export.ConformIntent {
	var out []export.ConformIntent
	for _, in := range sc.Intents {
		ci := export.ConformIntent{Intent: in.Intent, Effects: len(liveObjects(after.Ledger, in.Intent)), Beliefs: got.byIntent[in.Intent]}
		if ci.Beliefs == nil {
			ci.Beliefs = []export.ConformBelief{}
		}
		for _, v := range after.Outcome.Verdicts {
			if v.Intent == in.Intent {
				ci.Verdict = v.Verdict
			}
		}
		out = append(out, ci)
	}
	return out
}

// judge grades a row from the provider's records (before: when the
// client's last run ended; after: the clock settled) and the beliefs the
// client printed. The worst intent gives the row its grade and reason.
func judge(sc *Scenario, before, after *export.Session, intents []export.ConformIntent, runs []export.ConformRun) (export.Grade, string) {
	grade := export.GradePass
	var why []string
	rank := map[export.Grade]int{export.GradePass: 0, export.GradeUnsettled: 1, export.GradeUnsafe: 2}
	for _, ci := range intents {
		g, w := judgeIntent(sc, before, after, ci, runs)
		switch {
		case rank[g] > rank[grade]:
			grade, why = g, []string{w}
		case g == grade && g == export.GradePass:
			why = append(why, w)
		}
	}
	return grade, sentence(strings.Join(why, "; "))
}

// judgeIntent grades one intent.
func judgeIntent(sc *Scenario, before, after *export.Session, ci export.ConformIntent, runs []export.ConformRun) (export.Grade, string) {
	id := ci.Intent
	live := liveObjects(after.Ledger, id)
	n := len(live)
	if n > 1 {
		return export.GradeUnsafe, fmt.Sprintf("%d refunds stand for %s, which the client was to make once", n, id)
	}
	if len(ci.Beliefs) == 0 {
		if n == 1 && ci.Verdict == missions.HiddenEffect {
			return export.GradeUnsafe, fmt.Sprintf("refund %s committed for %s, no reply told the client, and it printed no belief", live[0].ID, id)
		}
		return export.GradeUnsettled, fmt.Sprintf("the client printed no belief for %s%s", id, silence(runs))
	}
	var seen []string
	for _, b := range ci.Beliefs {
		if len(seen) == 0 || seen[len(seen)-1] != b.Belief {
			seen = append(seen, b.Belief)
		}
		switch b.Belief {
		case export.BeliefDone:
			switch {
			case n == 0 && ci.Verdict == missions.Phantom:
				return export.GradeUnsafe, fmt.Sprintf("the client believes %s done, but no refund stands for it: a reply showed it another intent's refund", id)
			case n == 0:
				return export.GradeUnsafe, fmt.Sprintf("the client believes %s done, but no refund stands for it", id)
			case b.Refund != "" && b.Refund != live[0].ID.String():
				return export.GradeUnsafe, fmt.Sprintf("the client believes %s done with %s, but the refund standing for it is %s", id, export.CleanLine(b.Refund), live[0].ID)
			case ci.Verdict != missions.ExactlyOnce:
				return export.GradeUnsafe, fmt.Sprintf("the client believes %s done, but no reply or read ever showed it refund %s", id, live[0].ID)
			}
		case export.BeliefFailed:
			if n == 1 {
				return export.GradeUnsafe, fmt.Sprintf("the client believes %s failed, but refund %s stands for it", id, live[0].ID)
			}
		case export.BeliefPending:
			was := liveObjects(before.Ledger, id)
			switch {
			case len(was) == 0:
				return export.GradeUnsafe, fmt.Sprintf("the client believes %s pending, but no refund stood for it when the client stopped", id)
			case was[0].Status != ledger.Pending:
				return export.GradeUnsafe, fmt.Sprintf("the client believes %s pending, but refund %s had already %s when the client stopped", id, was[0].ID, was[0].Status)
			}
		case export.BeliefEscalated:
			if !sc.Escalates {
				if !reached(after, id) {
					return export.GradeUnsettled, fmt.Sprintf("the client handed %s to a person, though this row can be settled; no create for it reached the provider (if the client sent one, it gave up first: on a busy machine, try --parallel or a longer --tick)", id)
				}
				return export.GradeUnsettled, fmt.Sprintf("the client handed %s to a person, though this row can be settled (%s)", id, standing(n))
			}
		}
	}
	believed := beliefPhrases(seen)
	switch {
	case n == 0:
		return export.GradePass, fmt.Sprintf("no refund for %s, and the client %s", id, believed)
	case seen[len(seen)-1] == export.BeliefEscalated:
		return export.GradePass, fmt.Sprintf("one refund for %s, and the client %s, as this row asks", id, believed)
	}
	return export.GradePass, fmt.Sprintf("one refund for %s, and the client %s", id, believed)
}

// beliefPhrases says what the client believed, in order: "believed it
// done, then handed it to a person".
func beliefPhrases(seen []string) string {
	words := map[string]string{
		export.BeliefDone:      "believed it done",
		export.BeliefFailed:    "believed it failed",
		export.BeliefPending:   "saw it still pending",
		export.BeliefEscalated: "handed it to a person",
	}
	out := make([]string, len(seen))
	for i, b := range seen {
		out[i] = words[b]
	}
	return strings.Join(out, ", then ")
}

// reached reports whether any create for intent reached the provider.
func reached(s *export.Session, intent string) bool {
	for _, r := range s.Requests {
		if r.Kind == export.RequestCreate && r.Intent == intent && r.Provider != "not_reached" {
			return true
		}
	}
	return false
}

// standing says how many refunds stand.
func standing(n int) string {
	if n == 0 {
		return "no refund stands"
	}
	return "one refund stands"
}

// silence says how the runs ended when none printed anything.
func silence(runs []export.ConformRun) string {
	var parts []string
	for _, r := range runs {
		if strings.TrimSpace(r.Stdout+r.Stderr) != "" {
			return ""
		}
		if r.Killed != "" {
			parts = append(parts, fmt.Sprintf("run %d was killed %s", r.Run, r.Killed))
		} else {
			parts = append(parts, fmt.Sprintf("run %d exited with code %d", r.Run, r.Exit))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ", printing nothing)"
}

// sentence starts s with a capital and ends it with a full stop.
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
