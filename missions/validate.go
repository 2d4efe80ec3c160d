package missions

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/replaylab/replaylab/internal/termtext"
)

// Problem is one thing that keeps a mission from running, with the line of
// its file where it came from one.
type Problem struct {
	// Line is the line in the mission file, or 0 when the mission came
	// from elsewhere (a case file) or the problem has no one place.
	Line int
	// Where names the part of the mission, such as "schedule step 3".
	Where string
	Msg   string
	// Fields are the fields of that part the problem is about ("fixture",
	// "delay", …; for the mission itself its keys, such as "schedule"):
	// a parser that already faulted one of them has said it.
	Fields []string
}

func (p Problem) String() string {
	switch {
	case p.Where != "" && p.Line > 0:
		return fmt.Sprintf("%s (line %d): %s", p.Where, p.Line, p.Msg)
	case p.Where != "":
		return p.Where + ": " + p.Msg
	case p.Line > 0:
		return fmt.Sprintf("line %d: %s", p.Line, p.Msg)
	}
	return p.Msg
}

// Validate checks that a mission can be run, whatever it was read from,
// and reports every problem. It is the one check: the file parser reports
// the same problems, at their lines, and the case reader checks the
// mission a case carries with it.
func (m *Mission) Validate() error {
	var errs []error
	for _, p := range m.Problems() {
		errs = append(errs, errors.New(p.String()))
	}
	return errors.Join(errs...)
}

// Problems lists everything that keeps m from running, in the order of the
// mission's parts.
func (m *Mission) Problems() []Problem {
	v := &validator{m: m}
	v.mission()
	return v.out
}

type validator struct {
	m   *Mission
	out []Problem
}

// place names a part of the mission, made into words only when a problem
// is found there: "intent 2", "schedule step 3", "schedule step 3, worker 1".
type place struct {
	what         string
	index, child int
}

func (p place) String() string {
	switch {
	case p.what == "":
		return ""
	case p.child > 0:
		return fmt.Sprintf("%s %d, worker %d", p.what, p.index, p.child)
	}
	return fmt.Sprintf("%s %d", p.what, p.index)
}

func (v *validator) bad(line int, where place, fields []string, format string, args ...any) {
	v.out = append(v.out, Problem{Line: line, Where: where.String(), Fields: fields, Msg: fmt.Sprintf(format, args...)})
}

// The fields problems are about.
var (
	onID        = []string{"id"}
	onContract  = []string{"contract"}
	onCaptured  = []string{"captured"}
	onRetention = []string{"retention"}
	onKeySource = []string{"key_source"}
	onIntents   = []string{"intents"}
	onSchedule  = []string{"schedule"}
	onStep      = []string{"step"}
	onAttempt   = []string{"attempt"}
	onFixture   = []string{"fixture"}
	onDelay     = []string{"delay"}
	onParams    = []string{"fixture", "delay", "resolve"}
	// A step with no kind may be one whose kind the parser could not read.
	onKind           = []string{"step", "attempt", "wait", "read", "restart", "together"}
	onFixtureDelay   = []string{"fixture", "delay"}
	onFixtureResolve = []string{"fixture", "resolve"}
	// "No attempt" may be an attempt the parser could not read.
	onAttempts = []string{"schedule", "attempts"}
	onPayload  = []string{"payload"}
	onWait     = []string{"wait"}
	onRead     = []string{"read"}
	onReads    = []string{"reads"}
	onTogether = []string{"together"}
	onNothing  = []string(nil)
)

func (v *validator) mission() {
	m := v.m
	if !ValidID(m.ID) {
		v.bad(0, place{}, onID, "mission id %q: use lowercase letters, digits and dashes, starting with a letter or digit, at most 64 characters", m.ID)
	}
	if _, err := ProviderName(string(m.Contract)); err != nil {
		v.bad(0, place{}, onContract, "provider: %v", err)
	} else if name, _ := ProviderName(string(m.Contract)); name != m.Contract {
		v.bad(0, place{}, onContract, "provider %s: a case names it %s", m.Contract, name)
	}
	v.captured()
	if m.Retention < 1 || m.Retention > MaxTicks {
		v.bad(0, place{}, onRetention, "retention %d: must be from 1 to %d ticks", m.Retention, MaxTicks)
	}
	if _, err := ParseKeySource(string(m.KeySource)); err != nil {
		v.bad(0, place{}, onKeySource, "key_source: %v", err)
	}
	if len(m.Intents) == 0 || len(m.Intents) > MaxIntents {
		v.bad(0, place{}, onIntents, "the mission has %d intents; it needs 1 to %d", len(m.Intents), MaxIntents)
	}
	intents := map[string]*Intent{}
	ids := map[string]bool{}
	for i := range m.Intents {
		in := &m.Intents[i]
		where := place{"intent", i + 1, 0}
		if !ValidID(in.ID) {
			v.bad(in.Line, where, onID, "intent id %q: use lowercase letters, digits and dashes", in.ID)
		}
		if prev, dup := intents[in.ID]; dup {
			if prev.Line > 0 {
				v.bad(in.Line, where, onID, "intent id %q is already used on line %d", in.ID, prev.Line)
			} else {
				v.bad(in.Line, where, onID, "intent id %q is used twice", in.ID)
			}
			continue
		}
		intents[in.ID], ids[in.ID] = in, true
	}
	if len(m.Schedule) == 0 || len(m.Schedule) > MaxSteps {
		v.bad(0, place{}, onSchedule, "the schedule has %d steps; it needs 1 to %d", len(m.Schedule), MaxSteps)
	}
	attempts, clock := 0, 0
	for i, st := range m.Schedule {
		where := place{"schedule step", i + 1, 0}
		v.step(st, where, intents, ids, false)
		if st.Kind() == StepAttempt {
			attempts++
		}
		attempts += len(st.Together)
		if clock <= MaxClock {
			clock += stepTicks(st)
			if clock > MaxClock {
				v.bad(st.Line, where, onNothing, "by this step the schedule has run %d ticks; a schedule may span at most %d (a wait moves the clock its ticks, every other step one)", clock, MaxClock)
			}
		}
	}
	if len(m.Reads) > MaxSteps {
		v.bad(0, place{}, onReads, "reads has %d entries; at most %d are allowed", len(m.Reads), MaxSteps)
	}
	for i, r := range m.Reads {
		if err := r.Check(); err != nil {
			v.bad(r.Line, place{"read", i + 1, 0}, onRead, "%v", err)
		}
	}
	if e := m.Edited; e != nil {
		v.edited(e)
	}
	switch {
	case attempts == 0 && len(m.Schedule) > 0:
		v.bad(0, place{}, onAttempts, "the schedule has no attempt: add a step like `- attempt: <intent id>` with a fixture")
	case attempts > MaxSteps:
		v.bad(0, place{}, onSchedule, "the schedule has %d attempts; it may have at most %d", attempts, MaxSteps)
	}
	// An intent no step sends for can only end "failed cleanly", and
	// counts as intended all the same: a step is missing, or names another
	// intent by mistake.
	if attempts > 0 {
		offered := offeredAttempts(m.Schedule)
		for i, in := range m.Intents {
			if offered[in.ID] == 0 && ids[in.ID] && in.ID != "" {
				v.bad(in.Line, place{"intent", i + 1, 0}, onID, "intent %s is never attempted: add a step `- attempt: %s` with a fixture, or remove the intent", in.ID, in.ID)
			}
		}
	}
}

func (v *validator) step(st Step, where place, intents map[string]*Intent, ids map[string]bool, inTogether bool) {
	kinds := 0
	for _, set := range [...]bool{st.Attempt != "", st.Wait != 0, st.Read != "", st.Restart, len(st.Together) > 0} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		v.bad(st.Line, where, onKind, "a step does exactly one thing (accepted: attempt, wait, read, restart, together)")
		return
	}
	if inTogether && st.Kind() != StepAttempt {
		v.bad(st.Line, where, onStep, "a together step holds attempts only; found %s", st.Kind())
		return
	}
	if st.Kind() != StepAttempt && (st.Fixture != "" || st.Delay != 0 || st.Resolve != 0 || len(st.Payload) > 0) {
		v.bad(st.Line, where, onStep, "fixture, delay, resolve and payload belong to attempt steps only")
	}
	switch st.Kind() {
	case StepAttempt:
		in, ok := intents[st.Attempt]
		if !ok {
			v.bad(st.Line, where, onAttempt, "attempt names intent %q, which the mission does not declare (declared: %s)", st.Attempt, sortedKeys(ids))
			return
		}
		v.attempt(st, where, in)
	case StepWait:
		if st.Wait < 1 || st.Wait > MaxTicks {
			v.bad(st.Line, where, onWait, "wait %d: must be from 1 to %d ticks", st.Wait, MaxTicks)
		}
	case StepRead:
		if !ids[st.Read] {
			v.bad(st.Line, where, onRead, "read names intent %q, which the mission does not declare (declared: %s)", st.Read, sortedKeys(ids))
		}
	case StepTogether:
		if len(st.Together) < 2 || len(st.Together) > MaxWorkers {
			v.bad(st.Line, where, onTogether, "together must list from 2 to %d attempts sent at the same tick; this one lists %d", MaxWorkers, len(st.Together))
			return
		}
		for j, t := range st.Together {
			v.step(t, place{where.what, where.index, j + 1}, intents, ids, true)
		}
	}
}

func (v *validator) attempt(st Step, where place, in *Intent) {
	// The payload's fields are checked whatever the fixture says.
	if len(st.Payload) > 0 {
		keys := make([]string, 0, len(st.Payload))
		for k := range st.Payload {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, ok := in.Payload[k]; !ok {
				v.bad(st.Line, where, onPayload, "payload field %q is not in intent %s's payload (fields: %s)", k, in.ID, sortedKeys(in.Payload))
			}
		}
	}
	if st.Fixture == "" {
		v.bad(st.Line, where, onFixture, "attempt %s has no fixture (accepted: %s)", st.Attempt, termtext.JoinWords(Fixtures))
		return
	}
	if _, err := ParseFixture(string(st.Fixture)); err != nil {
		v.bad(st.Line, where, onFixture, "%v", err)
		return
	}
	if st.Delay < 0 || st.Delay > MaxTicks {
		v.bad(st.Line, where, onDelay, "delay %d: must be from 1 to %d ticks", st.Delay, MaxTicks)
	}
	switch st.Fixture {
	case LateCommit:
		if st.Delay == 0 {
			v.bad(st.Line, where, onFixtureDelay, "late_commit needs delay: the ticks until the commit lands")
		}
		if st.Resolve != 0 {
			v.bad(st.Line, where, onFixtureResolve, "resolve belongs to the pending fixture only")
		}
	case PendingFixture:
		if st.Delay == 0 || !st.Resolve.Terminal() {
			v.bad(st.Line, where, onParams, "pending needs delay (ticks until the object is terminal) and resolve (succeeded or failed)")
		}
	default:
		// About the ones set: a delay the parser could not read is not
		// one, and does not hide a resolve that is there.
		fields := []string{"fixture"}
		if st.Delay != 0 {
			fields = append(fields, "delay")
		}
		if st.Resolve != 0 {
			fields = append(fields, "resolve")
		}
		if len(fields) > 1 {
			v.bad(st.Line, where, fields, "delay and resolve belong to late_commit and pending only, not %s", st.Fixture)
		}
	}
}

// stepTicks is how far a step moves the clock: a wait its ticks, any
// other step one. A wait out of range counts as the most a wait may be,
// so a sum of them cannot overflow.
func stepTicks(st Step) int {
	if st.Wait != 0 {
		return max(1, min(st.Wait, MaxTicks))
	}
	return 1
}

// edited holds a mission's record of its edit to its schedule: each step
// named is a lone attempt, in order, once, and meets the fixture the edit
// gave it.
func (v *validator) edited(e *Edited) {
	m, onEdited := v.m, []string{"edited"}
	if !ValidID(e.From) {
		v.bad(0, place{}, onEdited, "edited: from %q is not a mission id", e.From)
	}
	if len(e.Steps) == 0 {
		v.bad(0, place{}, onEdited, "edited: no step is named; a mission with no edit has no \"edited\"")
	}
	last := 0
	for _, s := range e.Steps {
		where := place{"edited step", s.Step, 0}
		switch {
		case s.Step <= last:
			v.bad(0, where, onEdited, "edited: steps are named once each, in order (step %d after step %d)", s.Step, last)
		case s.Step > len(m.Schedule):
			v.bad(0, where, onEdited, "edited: the schedule has %d steps", len(m.Schedule))
		case m.Schedule[s.Step-1].Kind() != StepAttempt:
			v.bad(0, where, onEdited, "edited: only a lone attempt's fixture can be replaced")
		case m.Schedule[s.Step-1].Fixture != s.To:
			v.bad(0, where, onEdited, "edited: the step meets %s, not %s as the edit says", m.Schedule[s.Step-1].Fixture, s.To)
		}
		if _, err := ParseFixture(string(s.From)); err != nil || s.From == s.To {
			v.bad(0, where, onEdited, "edited: from %q must be a fixture other than %s", s.From, s.To)
		}
		last = max(last, s.Step)
	}
}

// captured checks what the mission says was captured: amounts that read
// as amounts, each charge refunded by some intent, and the amount of
// every refund from a captured charge readable.
func (v *validator) captured() {
	m := v.m
	if len(m.Captured) == 0 {
		return
	}
	used := map[string]bool{}
	for i := range m.Intents {
		in := &m.Intents[i]
		ch := in.Payload[ChargeField]
		if _, ok := m.Captured[ch]; !ok {
			continue
		}
		used[ch] = true
		if _, err := ParseAmount(in.Payload["amount"]); err != nil {
			v.bad(in.Line, place{}, onPayload, "intent %s refunds captured charge %s, so its amount must be %v", in.ID, ch, err)
		}
	}
	for _, ch := range sortedNames(m.Captured) {
		if _, err := ParseAmount(m.Captured[ch]); err != nil {
			v.bad(0, place{}, onCaptured, "captured %s: %v", ch, err)
		}
		if !used[ch] {
			v.bad(0, place{}, onCaptured, "captured names charge %s, which no intent's payload names (charge: %s)", ch, ch)
		}
	}
}

func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
