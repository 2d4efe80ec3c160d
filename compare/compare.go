package compare

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
)

// DivergeMark marks, in every rendering of a comparison (the lab's, text,
// Markdown), the attempt where two cases' ledgers first diverge while the
// agent's words are the same.
const DivergeMark = "◆"

// DivergeLegend says what the mark means, in the one sentence every
// rendering and the lab show beside it.
const DivergeLegend = DivergeMark + " marks " + missions.DivergeMeaning

// ComparisonSchemaID names the machine-readable comparison format.
const ComparisonSchemaID = "replaylab.comparison/v1"

// Comparison is several cases side by side, aligned by the mission-wide
// attempt number. It is plain data: the command line renders it as text,
// Markdown or JSON, and the lab shows it on screen.
type Comparison struct {
	Cases []CaseHead `json:"cases"`
	// Story is what the cases show together, in one sentence, before any
	// pair: where the agent's first words are the same and the ledgers
	// end apart, "1, 2 and 0 effects behind the same words".
	Story string `json:"story,omitempty"`
	// Notes say what a reader must know before trusting the alignment,
	// such as cases that come from different missions.
	Notes []string `json:"notes,omitempty"`
	// Rows holds one row per attempt number that any case made, in
	// order.
	Rows []Row `json:"rows"`
	// Outcomes holds, per case, how the run ended.
	Outcomes []OutcomeCell `json:"outcomes"`
	// Pairs holds one entry per pair of cases, in order (1,2), (1,3), … (2,3), ….
	Pairs []Pair `json:"pairs"`
	// Diverge is the earliest attempt at which some pair of cases first
	// holds different ledgers while the agent's words are the same; 0 when
	// no pair does.
	Diverge int `json:"diverge"`
	// Sequences holds each case's Mermaid sequence diagram, for Markdown.
	Sequences []string `json:"-"`
}

// CaseHead says which case a column holds.
type CaseHead struct {
	// Name is how the comparison refers to the case: "A", "B", … (see
	// CaseName), never a number, so it cannot be read as an attempt.
	Name string `json:"name"`
	// Label is what sets the case apart from the others: its mission, when
	// the missions differ, and the settings that differ. Empty when
	// nothing does.
	Label string `json:"label"`
	// Source is where the case was read from; the caller of Compare may
	// fill it in.
	Source   string            `json:"source,omitempty"`
	Mission  string            `json:"mission"`
	Title    string            `json:"title"`
	Settings missions.Settings `json:"settings"`
	// Edited says which steps of the mission it came from were given
	// another fixture in the lab, "" when none were.
	Edited string `json:"edited,omitempty"`
}

// Heading returns the name followed by the label, e.g. "#2 stable keys off".
func (h CaseHead) Heading() string {
	if h.Label == "" {
		return h.Name
	}
	return h.Name + " " + h.Label
}

// Row is one attempt number across all cases.
type Row struct {
	Attempt int `json:"attempt"`
	// Cells holds one cell per case, in the order of Comparison.Cases.
	Cells []Cell `json:"cells"`
	// Divergent is true where at least one pair of cases first holds
	// different ledgers while the agent's words are the same.
	Divergent bool `json:"divergent"`
}

// Cell is what one case did at one attempt number.
type Cell struct {
	// Present is false when the case made no attempt with this number.
	Present  bool                 `json:"present"`
	Intent   string               `json:"intent,omitempty"`
	Fixture  missions.Fixture     `json:"fixture,omitempty"`
	Observed missions.Observation `json:"observed,omitempty"`
	// Said is what the agent told the user after the attempt and before
	// the next one; empty when it said nothing.
	Said string `json:"said"`
	// Effects is the ledger's effect count right after the attempt.
	Effects int `json:"effects"`
}

// OutcomeCell is how one case ended.
type OutcomeCell struct {
	Effects  int                      `json:"effects"`
	Intended int                      `json:"intended"`
	Verdicts []missions.IntentVerdict `json:"verdicts"`
}

// Pair compares two cases.
type Pair struct {
	// A and B index Comparison.Cases; A < B.
	A int `json:"a"`
	B int `json:"b"`
	// Diverge is the first attempt present in both cases where the effect
	// counts differ while the agent's words are the same (object ids and
	// keys aside); 0 when there is none.
	Diverge int `json:"diverge"`
	// LedgerDiffers is the first attempt present in both cases where the
	// effect counts differ, words aside; 0 when there is none.
	LedgerDiffers int `json:"ledger_differs"`
	// WordsDiffer is the first attempt present in both cases where the
	// agent's words differ; 0 when there is none.
	WordsDiffer int `json:"words_differ"`
	// Sentence says what the pair shows, in one sentence.
	Sentence string `json:"sentence"`
}

// Compare lines cases up attempt by attempt and says, for every pair, the
// first attempt where their ledgers diverge while the agent's words are
// still the same. It is a pure function of the cases: the same cases in
// the same order give the same Comparison.
//
// Rows are aligned by the mission-wide attempt number (Event.Attempt). What
// the agent said for an attempt is the Say of the attempt event and of the
// events after it up to the next attempt, since a guarded caller speaks on
// the checkpoints that follow a send. Words are compared with provider
// object ids and idempotency keys masked, because those name different
// things in different runs even when the sentence is the same. Cases of
// different missions are aligned by number all the same, and a note says
// so. Text that came from case files is cleaned for the terminal.
func Compare(cases []*missions.Case) Comparison {
	cmp := Comparison{Rows: []Row{}, Outcomes: []OutcomeCell{}, Pairs: []Pair{}}
	cells := make([]map[int]Cell, len(cases))
	seen := map[int]bool{}
	var numbers []int
	for i, c := range cases {
		cells[i] = attemptCells(c)
		for n := range cells[i] {
			if !seen[n] {
				seen[n] = true
				numbers = append(numbers, n)
			}
		}
		cmp.Outcomes = append(cmp.Outcomes, OutcomeCell{
			Effects:  c.Outcome.Effects,
			Intended: c.Outcome.Intended,
			Verdicts: cleanVerdicts(c.Outcome.Verdicts),
		})
	}
	cmp.Cases = heads(cases)
	for _, c := range cases {
		cmp.Sequences = append(cmp.Sequences, render.SequenceDiagram(c))
	}
	if ids := missionIDs(cases); len(ids) > 1 && !editsOfOne(cases) {
		cmp.Notes = append(cmp.Notes, fmt.Sprintf(
			"Cases of different missions (%s): attempts are paired by number only, so a row may pair different steps.",
			strings.Join(ids, ", ")))
	}
	for i, c := range cases {
		if e := c.Mission.Edited; e != nil {
			// An edit keeps its mission's steps, so its rows pair as the
			// mission's do.
			cmp.Notes = append(cmp.Notes, fmt.Sprintf("Case %s plays %s with its steps' fixtures replaced in the lab: %s.",
				CaseName(i), termtext.CleanLine(e.From), termtext.CleanLine(e.Words())))
		}
	}
	for _, id := range editedIDs(cases) {
		cmp.Notes = append(cmp.Notes, fmt.Sprintf(
			"Cases that name mission %s carry different missions under that id (one was edited): they are compared as different missions.", id))
	}
	sort.Ints(numbers)
	for _, n := range numbers {
		row := Row{Attempt: n, Cells: make([]Cell, len(cases))}
		for i := range cases {
			row.Cells[i] = cells[i][n]
		}
		cmp.Rows = append(cmp.Rows, row)
	}
	for a := 0; a < len(cases); a++ {
		for b := a + 1; b < len(cases); b++ {
			p := comparePair(cmp, a, b)
			cmp.Pairs = append(cmp.Pairs, p)
			if p.Diverge > 0 {
				cmp.Rows[cmp.rowIndex(p.Diverge)].Divergent = true
				if cmp.Diverge == 0 || p.Diverge < cmp.Diverge {
					cmp.Diverge = p.Diverge
				}
			}
		}
	}
	cmp.Story = story(cmp)
	return cmp
}

// story says what the cases show together: the largest set of cases whose
// agent first says the same words (ids and keys aside) while their
// ledgers end apart, with each one's count; else how the ledgers end.
func story(cmp Comparison) string {
	n := len(cmp.Cases)
	if n < 2 {
		return ""
	}
	first := make([]string, n)
	for i := range n {
		for _, row := range cmp.Rows {
			if c := row.Cells[i]; c.Present {
				first[i] = c.Said
				break
			}
		}
	}
	var best []int
	for i := range n {
		var group []int
		for j := range n {
			if first[i] != "" && sameWords(first[i], first[j]) {
				group = append(group, j)
			}
		}
		apart := false
		for _, j := range group {
			apart = apart || cmp.Outcomes[j].Effects != cmp.Outcomes[group[0]].Effects
		}
		if apart && len(group) > len(best) {
			best = group
		}
	}
	counts := func(ids []int) string {
		parts := make([]string, len(ids))
		for k, i := range ids {
			parts[k] = fmt.Sprint(cmp.Outcomes[i].Effects)
		}
		return termtext.AndList(parts) + " effects"
	}
	names := func(ids []int) string {
		parts := make([]string, len(ids))
		for k, i := range ids {
			parts[k] = cmp.Cases[i].Name
		}
		return termtext.AndList(parts)
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	every := "every case"
	if n == 2 {
		every = "both cases"
	}
	// partWithWords: no two of the group part ledgers while the agent
	// says the same; wherever their ledgers part, its words part too.
	partWithWords := true
	for _, p := range cmp.Pairs {
		if p.Diverge > 0 && slices.Contains(best, p.A) && slices.Contains(best, p.B) {
			partWithWords = false
		}
	}
	switch {
	case len(best) == n && partWithWords:
		// The first words are the same, but wherever the ledgers part
		// the words part too: not the lesson's "same words, different
		// ledgers".
		return fmt.Sprintf("In %s the agent first says %s; the ledgers end with %s (%s), and where they part, its words part too.",
			every, quote(maskedWords(first[best[0]])), counts(best), names(best))
	case len(best) == n:
		return fmt.Sprintf("Same words, different ledgers: in %s the agent first says %s, yet the ledgers end with %s (%s).",
			every, quote(maskedWords(first[best[0]])), counts(best), names(best))
	case len(best) > 0 && partWithWords:
		return fmt.Sprintf("In %s the agent first says %s; their ledgers end with %s, and where they part, its words part too.",
			names(best), quote(maskedWords(first[best[0]])), counts(best))
	case len(best) > 0:
		return fmt.Sprintf("Same words, different ledgers: in %s the agent first says %s, yet their ledgers end with %s.",
			names(best), quote(maskedWords(first[best[0]])), counts(best))
	}
	for _, i := range all {
		if cmp.Outcomes[i].Effects != cmp.Outcomes[0].Effects {
			return fmt.Sprintf("The ledgers end with %s (%s), and what the agent first says differs with them.", counts(all), names(all))
		}
	}
	return fmt.Sprintf("Every case ends with %s.", effects(cmp.Outcomes[0].Effects))
}

// maskedWords is what the agent said with object ids and keys as
// re_… and ik_…, for words quoted as said in several cases.
func maskedWords(s string) string { return maskedRefs().ReplaceAllString(s, "${1}_…") }

// rowIndex returns the index of the row for attempt n, which must exist.
func (cmp Comparison) rowIndex(n int) int {
	return sort.Search(len(cmp.Rows), func(i int) bool { return cmp.Rows[i].Attempt >= n })
}

// attemptCells collects, per attempt number, what the case did and said.
func attemptCells(c *missions.Case) map[int]Cell {
	out := make(map[int]Cell)
	current := 0
	var said []string
	flush := func() {
		if current == 0 {
			return
		}
		cell := out[current]
		cell.Said = strings.Join(said, " ")
		out[current] = cell
	}
	for _, ev := range c.Events {
		if ev.Kind == missions.EventAttempt && ev.Attempt > 0 {
			flush()
			current, said = ev.Attempt, nil
			out[current] = Cell{
				Present:  true,
				Intent:   termtext.CleanLine(ev.Intent),
				Fixture:  missions.Fixture(termtext.CleanLine(string(ev.Fixture))),
				Observed: missions.Observation(termtext.CleanLine(string(ev.Observed))),
				Effects:  ev.Effects,
			}
		}
		if current > 0 && strings.TrimSpace(ev.Say) != "" {
			said = append(said, strings.TrimSpace(termtext.CleanLine(ev.Say)))
		}
	}
	flush()
	return out
}

func cleanVerdicts(vs []missions.IntentVerdict) []missions.IntentVerdict {
	out := make([]missions.IntentVerdict, len(vs))
	for i, v := range vs {
		out[i] = missions.IntentVerdict{
			Intent:  termtext.CleanLine(v.Intent),
			Verdict: missions.Verdict(termtext.CleanLine(string(v.Verdict))),
			Effects: v.Effects,
			Belief:  missions.Belief(termtext.CleanLine(string(v.Belief))),
		}
	}
	return out
}

// missionIDs lists the missions of cases, by id, in the order they
// come; a mission an edited file carries under another's id counts apart.
func missionIDs(cases []*missions.Case) []string {
	var ids []string
	seen := map[string]bool{}
	for _, c := range cases {
		key := c.Mission.Digest()
		if !seen[key] {
			seen[key] = true
			ids = append(ids, termtext.CleanLine(c.Mission.ID))
		}
	}
	return ids
}

// editsOfOne reports whether the cases' missions are one mission and
// edits of it, whose steps pair one for one.
func editsOfOne(cases []*missions.Case) bool {
	base := ""
	for _, c := range cases {
		id := c.Mission.ID
		if e := c.Mission.Edited; e != nil {
			id = e.From
		}
		switch {
		case base == "":
			base = id
		case id != base:
			return false
		}
	}
	return true
}

// editedIDs lists the ids that more than one mission of cases carries.
func editedIDs(cases []*missions.Case) []string {
	byID := map[string]map[string]bool{}
	var order []string
	for _, c := range cases {
		id := termtext.CleanLine(c.Mission.ID)
		if byID[id] == nil {
			byID[id] = map[string]bool{}
			order = append(order, id)
		}
		byID[id][c.Mission.Digest()] = true
	}
	var out []string
	for _, id := range order {
		if len(byID[id]) > 1 {
			out = append(out, id)
		}
	}
	return out
}

// heads names the cases and labels each with what sets it apart.
func heads(cases []*missions.Case) []CaseHead {
	out := make([]CaseHead, len(cases))
	words := make([][]string, len(cases))
	for i, c := range cases {
		words[i] = render.SettingWords(c.Settings)
	}
	differs := func(k int) bool {
		for i := 1; i < len(words); i++ {
			if words[i][k] != words[0][k] {
				return true
			}
		}
		return false
	}
	manyMissions := len(missionIDs(cases)) > 1
	for i, c := range cases {
		var parts []string
		if manyMissions || len(cases) == 1 {
			parts = append(parts, termtext.CleanLine(c.Mission.ID))
		}
		if len(cases) == 1 {
			// Alone, a case is told by its mission and settings.
			parts = append(parts, words[i][:3]...)
		}
		for k := range words[i] {
			if differs(k) {
				parts = append(parts, words[i][k])
			}
		}
		out[i] = CaseHead{
			Name:     CaseName(i),
			Label:    strings.Join(parts, ", "),
			Mission:  termtext.CleanLine(c.Mission.ID),
			Title:    termtext.CleanLine(c.Mission.Title),
			Settings: c.Settings,
		}
		if e := c.Mission.Edited; e != nil {
			out[i].Edited = termtext.CleanLine(fmt.Sprintf("from %s: %s", e.From, e.Words()))
		}
	}
	return out
}

// CaseName is the name of the i-th case (from 0) in a comparison: "A" to
// "Z", then "AA", "AB", … as spreadsheet columns go. Attempts are numbered
// ("#1"), so cases are lettered.
func CaseName(i int) string {
	name := ""
	for i++; i > 0; i = (i - 1) / 26 {
		name = string(rune('A'+(i-1)%26)) + name
	}
	return name
}

// maskedRefs matches provider object ids and idempotency keys in the
// agent's words.
var maskedRefs = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(re|ik)_[0-9A-Za-z]+\b`) })

// asideWords names what two sentences that are the same words differ in:
// the object ids, the keys, or both.
func asideWords(a, b string) string {
	ids := regexp.MustCompile(`\bre_[0-9A-Za-z]+\b`)
	keys := regexp.MustCompile(`\bik_[0-9A-Za-z]+\b`)
	switch {
	case ids.ReplaceAllString(a, "re_") == ids.ReplaceAllString(b, "re_"):
		return "object ids aside"
	case keys.ReplaceAllString(a, "ik_") == keys.ReplaceAllString(b, "ik_"):
		return "keys aside"
	}
	return "object ids and keys aside"
}

func sameWords(a, b string) bool {
	return maskedRefs().ReplaceAllString(a, "$1_") == maskedRefs().ReplaceAllString(b, "$1_")
}

func comparePair(cmp Comparison, a, b int) Pair {
	p := Pair{A: a, B: b}
	for _, row := range cmp.Rows {
		ca, cb := row.Cells[a], row.Cells[b]
		if !ca.Present || !cb.Present {
			continue
		}
		same := sameWords(ca.Said, cb.Said)
		if !same && p.WordsDiffer == 0 {
			p.WordsDiffer = row.Attempt
		}
		if ca.Effects != cb.Effects {
			if p.LedgerDiffers == 0 {
				p.LedgerDiffers = row.Attempt
			}
			if same && p.Diverge == 0 {
				p.Diverge = row.Attempt
			}
		}
	}
	p.Sentence = pairSentence(cmp, p)
	return p
}

// effects is "1 effect", "2 effects".
func effects(n int) string { return termtext.Plural(n, "effect") }

func quote(s string) string {
	if s == "" {
		return "nothing"
	}
	return "“" + s + "”"
}

// pairSentence says in one sentence what a pair of cases shows.
func pairSentence(cmp Comparison, p Pair) string {
	ha, hb := cmp.Cases[p.A], cmp.Cases[p.B]
	// The first mention says "case" and what tells the case apart; every
	// sentence starts with it.
	na, nb := "Case "+ha.Name, "case "+hb.Name
	if ha.Label != "" {
		na += " (" + ha.Label + ")"
		nb += " (" + hb.Label + ")"
	}
	cell := func(n, i int) Cell { return cmp.Rows[cmp.rowIndex(n)].Cells[i] }
	switch {
	case p.Diverge > 0:
		ca, cb := cell(p.Diverge, p.A), cell(p.Diverge, p.B)
		words := "the agent says " + quote(ca.Said) + " in both"
		if ca.Said == "" {
			words = "the agent says nothing in either"
		} else if ca.Said != cb.Said {
			words += ", " + asideWords(ca.Said, cb.Said)
		}
		return fmt.Sprintf("%s and %s first diverge at attempt %d: %s, yet the ledger holds %s in %s and %s in %s.",
			na, nb, p.Diverge, words, effects(ca.Effects), ha.Name, effects(cb.Effects), hb.Name)
	case p.LedgerDiffers > 0:
		ca, cb := cell(p.LedgerDiffers, p.A), cell(p.LedgerDiffers, p.B)
		return endSentence(fmt.Sprintf("%s and %s first differ in the ledger at attempt %d (%s against %s), where the agent's words differ too: %s against %s",
			na, nb, p.LedgerDiffers, effects(ca.Effects), effects(cb.Effects), quote(ca.Said), quote(cb.Said)))
	}
	oa, ob := cmp.Outcomes[p.A], cmp.Outcomes[p.B]
	shared, onlyOne := 0, 0
	for _, row := range cmp.Rows {
		pa, pb := row.Cells[p.A].Present, row.Cells[p.B].Present
		switch {
		case pa && pb:
			shared++
		case pa || pb:
			onlyOne++
		}
	}
	var s string
	switch {
	case shared == 0:
		s = fmt.Sprintf("%s and %s share no attempt number", na, nb)
	default:
		s = fmt.Sprintf("%s and %s hold the same effect count after every attempt both make", na, nb)
	}
	if oa.Effects != ob.Effects && shared == 0 {
		s += fmt.Sprintf(": %s ends with %s, %s with %s", ha.Name, effects(oa.Effects), hb.Name, effects(ob.Effects))
	} else if oa.Effects != ob.Effects {
		s += fmt.Sprintf("; the ledgers part later: %s ends with %s, %s with %s", ha.Name, effects(oa.Effects), hb.Name, effects(ob.Effects))
		if onlyOne > 0 {
			s += ", one case having made attempts the other did not"
		} else {
			s += ", the difference landing after the last attempt"
		}
	} else {
		s += fmt.Sprintf(" and both end with %s", effects(oa.Effects))
	}
	if p.WordsDiffer > 0 {
		s += fmt.Sprintf("; the agent's words first differ at attempt %d", p.WordsDiffer)
	}
	return endSentence(s)
}

// endSentence closes a sentence with a full stop, unless it already ends
// with a quotation that closes one.
func endSentence(s string) string {
	for _, end := range []string{".”", "?”", "!”"} {
		if strings.HasSuffix(s, end) {
			return s
		}
	}
	return s + "."
}

// verdictWords renders an outcome's verdicts, e.g.
// "refund-1042: duplicate (believes done, 2 effects)".
func verdictWords(o OutcomeCell) []string {
	out := make([]string, len(o.Verdicts))
	for i, v := range o.Verdicts {
		out[i] = fmt.Sprintf("%s: %s (believes %s, %s)", v.Intent, v.Verdict, v.Belief, effects(v.Effects))
	}
	return out
}

// Ranked is the pairs in the order a reader needs them: the pairs whose
// ledgers part under the same words first, the lesson of the lab; among
// them and among the rest, first the pairs of one mission whose settings
// differ in one thing, since they isolate what that setting does, then
// the other pairs of one mission, then pairs of different missions; then
// the earliest divergence. The text, the Markdown and the lab all list
// the pairs in this order.
func (cmp Comparison) Ranked() []Pair {
	pairs := append([]Pair(nil), cmp.Pairs...)
	rank := func(p Pair) int {
		a, b := cmp.Cases[p.A], cmp.Cases[p.B]
		switch {
		case a.Mission != b.Mission:
			return 2
		case settingsApart(a.Settings, b.Settings) == 1:
			return 0
		}
		return 1
	}
	sort.SliceStable(pairs, func(i, j int) bool {
		di, dj := pairs[i].Diverge, pairs[j].Diverge
		if (di > 0) != (dj > 0) {
			return di > 0
		}
		ri, rj := rank(pairs[i]), rank(pairs[j])
		if ri != rj {
			return ri < rj
		}
		return di > 0 && di < dj
	})
	return pairs
}

// settingsApart counts the settings in which a and b differ.
func settingsApart(a, b missions.Settings) int {
	n := 0
	for _, f := range missions.AllSettings {
		if a.Words(f) != b.Words(f) {
			n++
		}
	}
	return n
}
