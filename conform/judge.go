package conform

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/jsontext"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// beliefs collects the belief lines of a row's runs, and what was wrong
// with the lines that tried to be one.
type beliefs struct {
	known    map[string]bool
	ids      []string
	byIntent map[string][]Belief
	problems []string
}

func newBeliefs(sc *Scenario) *beliefs {
	b := &beliefs{known: map[string]bool{}, byIntent: map[string][]Belief{}}
	for _, in := range sc.Intents {
		b.known[in.Intent] = true
		b.ids = append(b.ids, in.Intent)
	}
	return b
}

var beliefWords = []string{BeliefDone, BeliefFailed, BeliefPending, BeliefEscalated}

// beliefFields are the fields of a belief line, spelled exactly.
var beliefFields = []string{"intent", "belief", "refund", "evidence"}

// read takes run's lines of standard output that mention "belief": each
// must be a belief line. overflow says some were not kept.
func (b *beliefs) read(run int, lines []numbered, overflow bool) {
	for _, nl := range lines {
		line := strings.TrimSpace(nl.text)
		bad := func(what string) {
			b.problems = append(b.problems, fmt.Sprintf("run %d, line %d of its output is a malformed belief line (%s): %s", run, nl.n, what, shownBytes(termtext.Shorten(line, 160))))
		}
		if nl.cut {
			bad(fmt.Sprintf("longer than %d KiB; a belief line is one short JSON object", lineLimit>>10))
			continue
		}
		if _, what := jsontext.Problem([]byte(line)); what != "" {
			bad("it holds " + what)
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &obj); err != nil || obj == nil {
			bad("not one JSON object")
			continue
		}
		if k := twice(line); k != "" {
			bad(fmt.Sprintf("field %q appears twice; a belief line holds each field once", k))
			continue
		}
		got := map[string]string{}
		problem := ""
		for k, raw := range obj {
			if !slices.Contains(beliefFields, k) {
				if slices.ContainsFunc(beliefFields, func(f string) bool { return strings.EqualFold(f, k) }) {
					problem = fmt.Sprintf("field %q: spell it %s", k, strings.ToLower(k))
				}
				continue // other fields are the client's own
			}
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				problem = fmt.Sprintf("%q holds %s; expected a string", k, termtext.Shorten(string(raw), 40))
				continue
			}
			got[k] = v
		}
		switch {
		case problem != "":
			bad(problem)
		case got["intent"] == "":
			bad(`no "intent"`)
		case !b.known[got["intent"]]:
			bad(fmt.Sprintf("intent %q is not one this scenario gave; it gave %s", got["intent"], strings.Join(b.ids, ", ")))
		case !slices.Contains(beliefWords, got["belief"]):
			w := "none"
			if v, ok := got["belief"]; ok {
				w = strconv.Quote(v)
			}
			bad(fmt.Sprintf("belief %s; give done, failed, pending or escalated", w))
		default:
			id := got["intent"]
			b.byIntent[id] = append(b.byIntent[id], Belief{Run: run, Belief: got["belief"], Refund: got["refund"], Evidence: got["evidence"]})
		}
	}
	if overflow {
		b.problems = append(b.problems, fmt.Sprintf("run %d printed more than %d KiB of lines that mention \"belief\"; the rest were not read", run, beliefBytesLimit>>10))
	}
}

// shownBytes is s on one line with each byte that is not UTF-8 shown as
// \xNN rather than dropped.
func shownBytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return termtext.CleanLine(b.String())
}

// twice is the first top-level field of the JSON object line that
// appears more than once, or "" (a decoder would keep the last).
func twice(line string) string {
	d := json.NewDecoder(strings.NewReader(line))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	seen := map[string]bool{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return ""
		}
		k, _ := t.(string)
		if seen[k] {
			return k
		}
		seen[k] = true
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// intentsOf is each intent of the row: the provider's verdict and the
// refunds standing once settled, and the client's beliefs.
func intentsOf(sc *Scenario, after *export.Session, got *beliefs) []RowIntent {
	var out []RowIntent
	for _, in := range sc.Intents {
		ci := RowIntent{Intent: in.Intent, Effects: len(liveObjects(after.Ledger, in.Intent)), Beliefs: got.byIntent[in.Intent]}
		if ci.Beliefs == nil {
			ci.Beliefs = []Belief{}
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

// conduct is how a row's client behaved as a program: the runs killed
// while they hung (by number), whether the one that hung sent no request
// at all, the row's timeout, what it still waited on when it was killed
// (heldWords), and what it printed that does not read.
type conduct struct {
	hung     []string
	silent   bool
	timeout  time.Duration
	held     string
	problems []string
}

// judge grades a row, once: from the provider's records (before: when
// the client's last run ended; after: the clock settled) and the beliefs
// the client printed, the worst intent giving the row its grade and
// reason; then from its conduct, since a client that misbehaved as a
// program does not pass, and the misbehaviour is the reason a person
// needs first (unsafe stands: a duplicate is worse). A client killed
// while it hung is not blamed for the silence the kill made. hung says
// the row is unsettled because the client hung.
func judge(sc *Scenario, before, after *export.Session, intents []RowIntent, runs []ClientRun, c conduct) (Grade, string, bool) {
	grade := GradePass
	var why []string
	rank := map[Grade]int{GradePass: 0, GradeUnsettled: 1, GradeUnsafe: 2}
	for _, ci := range intents {
		g, w := judgeIntent(sc, before, after, ci, runs, len(c.hung) > 0)
		switch {
		case rank[g] > rank[grade]:
			grade, why = g, []string{w}
		case g == grade && g == GradePass:
			why = append(why, w)
		}
	}
	switch {
	case grade == GradeUnsafe:
	case len(c.hung) > 0:
		w := fmt.Sprintf("The client did not finish within %v of its first request (run %s); its process group was killed.", c.timeout, strings.Join(c.hung, ", "))
		if c.silent {
			w = fmt.Sprintf("The client sent no request within %v of its start (run %s); its process group was killed.", 2*c.timeout, strings.Join(c.hung, ", "))
		}
		if c.held != "" {
			w += " " + c.held
		}
		return GradeUnsettled, w, true
	case len(c.problems) > 0:
		return GradeUnsettled, sentence(c.problems[0]), false
	}
	return grade, sentence(strings.Join(why, "; ")), false
}

// judgeIntent grades one intent.
func judgeIntent(sc *Scenario, before, after *export.Session, ci RowIntent, runs []ClientRun, hung bool) (Grade, string) {
	id := ci.Intent
	live := liveObjects(after.Ledger, id)
	n := len(live)
	if n > 1 {
		return GradeUnsafe, fmt.Sprintf("%d refunds stand for %s, which the client was to make once%s", n, id, hops(after, live))
	}
	heard := heardOf(after, id)
	if len(ci.Beliefs) == 0 {
		if n == 1 && !heard.shown[live[0].ID] && !hung {
			return GradeUnsafe, fmt.Sprintf("refund %s committed for %s, no reply or read showed it to the client, and it printed no belief", live[0].ID, id)
		}
		return GradeUnsettled, fmt.Sprintf("the client printed no belief for %s%s", id, silence(runs))
	}
	// Every belief line is judged; the worst gives the intent its grade.
	grade, why := GradePass, ""
	rank := map[Grade]int{GradePass: 0, GradeUnsettled: 1, GradeUnsafe: 2}
	worse := func(g Grade, w string) {
		if rank[g] > rank[grade] {
			grade, why = g, w
		}
	}
	var seen []string
	for _, b := range ci.Beliefs {
		if len(seen) == 0 || seen[len(seen)-1] != b.Belief {
			seen = append(seen, b.Belief)
		}
		switch b.Belief {
		case BeliefDone:
			switch {
			case n == 0 && ci.Verdict == missions.Phantom:
				worse(GradeUnsafe, fmt.Sprintf("the client believes %s done, but no refund stands for it: a reply showed it another intent's refund", id))
			case n == 0:
				worse(GradeUnsafe, fmt.Sprintf("the client believes %s done, but no refund stands for it", id))
			case b.Refund != "" && b.Refund != live[0].ID.String():
				worse(GradeUnsafe, fmt.Sprintf("the client believes %s done with %s, but the refund standing for it is %s", id, termtext.CleanLine(b.Refund), live[0].ID))
			case ci.Verdict != missions.ExactlyOnce:
				worse(GradeUnsafe, fmt.Sprintf("the client believes %s done, but no reply or read ever showed it refund %s succeeded", id, live[0].ID))
			}
		case BeliefFailed:
			switch {
			case n == 1:
				worse(GradeUnsafe, fmt.Sprintf("the client believes %s failed, but refund %s stands for it", id, live[0].ID))
			case !heard.failure:
				// No refund stands, but nothing told the client so: a
				// timeout is not a failure, and saying nothing is not one.
				worse(GradeUnsettled, fmt.Sprintf("the client believes %s failed, but no reply or read told it so (no refusal, no failed refund): a timeout is not a failure", id))
			}
		case BeliefPending:
			was := liveObjects(before.Ledger, id)
			switch {
			case !heard.pending:
				worse(GradeUnsafe, fmt.Sprintf("the client believes %s pending, but no reply or read ever showed it a pending refund", id))
			case len(was) == 1 && was[0].Status != ledger.Pending:
				worse(GradeUnsettled, fmt.Sprintf("the client believes %s pending, but refund %s had %s before the client stopped: reading it again would have settled it", id, was[0].ID, was[0].Status))
			}
		case BeliefEscalated:
			switch {
			case sc.Escalates:
			case !reached(after, id):
				worse(GradeUnsettled, fmt.Sprintf("the client handed %s to a person, though this row can be settled; no create for it reached the provider (if the client sent one, it gave up first: on a busy machine, try --parallel or a longer --tick)", id))
			default:
				worse(GradeUnsettled, fmt.Sprintf("the client handed %s to a person, though this row can be settled (%s)", id, standing(n)))
			}
		}
	}
	if grade != GradePass {
		return grade, why
	}
	believed := beliefPhrases(seen)
	switch {
	case n == 0:
		return GradePass, fmt.Sprintf("no refund for %s, and the client %s", id, believed)
	case seen[len(seen)-1] == BeliefEscalated:
		return GradePass, fmt.Sprintf("one refund for %s, and the client %s, as this row asks", id, believed)
	}
	return GradePass, fmt.Sprintf("one refund for %s, and the client %s", id, believed)
}

// hops says, of each refund beyond the first that stands for an intent,
// which create made it and what that create repeated: the hop that sent
// it, as far as the wire shows.
func hops(s *export.Session, live []ledger.Object) string {
	bySeq := map[int]export.SessionRequest{}
	made := map[ledger.ObjectID]export.SessionRequest{}
	// The creates still executing when answered (late commits): their
	// refunds land later, in the order they began.
	var late []export.SessionRequest
	for _, r := range s.Requests {
		if r.Kind != export.RequestCreate {
			continue
		}
		bySeq[r.Seq] = r
		if r.Response != nil && r.Response.Object != 0 && r.Provider == string(ledger.Committed) {
			if _, ok := made[r.Response.Object]; !ok {
				made[r.Response.Object] = r
			}
		}
		if r.Provider == string(ledger.Executing) && r.Intent == live[0].Intent {
			late = append(late, r)
		}
	}
	var unmade []ledger.ObjectID
	for _, o := range live {
		if _, ok := made[o.ID]; !ok {
			unmade = append(unmade, o.ID)
		}
	}
	if len(unmade) == len(late) {
		for i, id := range unmade {
			made[id] = late[i]
		}
	}
	// The first create that made a standing refund is the intent's own;
	// each later one is an extra.
	type made1 struct {
		id ledger.ObjectID
		r  export.SessionRequest
		ok bool
	}
	var all []made1
	for _, o := range live {
		r, ok := made[o.ID]
		all = append(all, made1{o.ID, r, ok})
	}
	slices.SortStableFunc(all, func(a, b made1) int {
		switch {
		case a.ok && b.ok:
			return a.r.Seq - b.r.Seq
		case a.ok:
			return -1
		case b.ok:
			return 1
		}
		return 0
	})
	var out []string
	for _, m := range all[1:] {
		switch {
		// Which refund id each got is the provider's order, which two
		// creates sent at once can take either way: the reason names the
		// requests, and the session the ids.
		case m.ok && m.r.Repeat != nil:
			out = append(out, fmt.Sprintf("request %d made one more, %s", m.r.Seq, export.DescribeRepeat(m.r, bySeq[m.r.Repeat.Of])))
		case m.ok:
			out = append(out, fmt.Sprintf("request %d made one more", m.r.Seq))
		default:
			// A late commit lands after its request; a v2 completion
			// makes the refund a later request finished.
			out = append(out, "one more committed after the request that began it, which the session does not name")
		}
	}
	if len(out) == 0 {
		return ""
	}
	return ": " + strings.Join(out, "; ")
}

// heard is what the provider's delivered replies told the client of an
// intent: the refunds they showed, whether one showed a refund pending,
// and whether one told it the refund failed (a refusal, or a refund shown
// failed or canceled).
type heard struct {
	shown            map[ledger.ObjectID]bool
	pending, failure bool
}

func heardOf(s *export.Session, intent string) heard {
	h := heard{shown: map[ledger.ObjectID]bool{}}
	owner := map[ledger.ObjectID]string{}
	for _, o := range s.Ledger.Objects {
		owner[o.ID] = o.Intent
	}
	for _, r := range s.Requests {
		if r.Wire != export.WireDelivered {
			continue
		}
		if (r.Kind == export.RequestCreate || r.Kind == export.RequestRefused) && r.Intent == intent && r.Status >= 400 && r.Status < 500 && r.Status != 409 {
			h.failure = true
		}
		for _, o := range r.Shown {
			if owner[o.Object] != intent {
				continue
			}
			h.shown[o.Object] = true
			switch o.Status {
			case ledger.Pending:
				h.pending = true
			case ledger.Failed, ledger.Canceled:
				h.failure = true
			}
		}
	}
	return h
}

// beliefPhrases says what the client believed, in order: "believed it
// done, then handed it to a person".
func beliefPhrases(seen []string) string {
	words := map[string]string{
		BeliefDone:      "believed it done",
		BeliefFailed:    "believed it failed",
		BeliefPending:   "saw it still pending",
		BeliefEscalated: "handed it to a person",
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
func silence(runs []ClientRun) string {
	var parts []string
	said := ""
	for _, r := range runs {
		if strings.TrimSpace(r.Stdout) != "" {
			return ""
		}
		if last := lastLine(r.Stderr); last != "" {
			said = fmt.Sprintf("run %d said %q", r.Run, termtext.Shorten(termtext.CleanLine(last), 160))
		}
		if r.Killed != "" {
			parts = append(parts, fmt.Sprintf("run %d was killed %s", r.Run, r.Killed))
		} else {
			parts = append(parts, fmt.Sprintf("run %d exited with code %d", r.Run, r.Exit))
		}
	}
	switch {
	case len(parts) == 0:
		return ""
	case said != "":
		// What a client says on its way out is usually why.
		return " (" + strings.Join(parts, ", ") + "; " + said + ")"
	}
	return " (" + strings.Join(parts, ", ") + ", printing nothing)"
}

// lastLine is the last line of s that is not blank.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
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
