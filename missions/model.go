// Package missions holds the mission model, the mission file format and its
// validation, the embedded catalog, and the runner that replays a mission
// against a ledger under caller settings and returns a Case.
//
// Like the ledger, the runner is pure: no I/O, no clock, no global
// randomness. The same mission, settings and seed give the same Case.
package missions

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
)

// Fixture is what the network and the provider do with one attempt.
type Fixture string

// The fixtures.
const (
	FailureBeforeCommit    Fixture = "failure_before_commit"
	TimeoutAfterCommit     Fixture = "timeout_after_commit"
	Success                Fixture = "success"
	TimeoutBeforeCommit    Fixture = "timeout_before_commit"
	ServerErrorAfterCommit Fixture = "server_error_after_commit"
	LateCommit             Fixture = "late_commit"
	PendingFixture         Fixture = "pending"
	CrashAfterSend         Fixture = "crash_after_send"
)

// Fixtures lists every fixture in the order the docs present them.
var Fixtures = []Fixture{
	FailureBeforeCommit, TimeoutAfterCommit, Success, TimeoutBeforeCommit,
	ServerErrorAfterCommit, LateCommit, PendingFixture, CrashAfterSend,
}

// Policy is how the caller decides what to do after an attempt.
type Policy string

// Caller policies.
const (
	// Naive is the agent loop: anything but a success reads as failed and
	// is retried until the budget ends.
	Naive Policy = "naive"
	// Guarded classifies first, never resends while the outcome is unknown
	// or pending except with the same key inside the safe retry window,
	// reconciles by reading the ledger and escalates what it cannot settle.
	Guarded Policy = "guarded"
)

// Policies lists every policy a simulated caller plays.
var Policies = []Policy{Naive, Guarded}

// RealClient is the policy of a case made from a serve session: the
// caller was a real client over HTTP, not one of the simulated ones. No
// run takes it.
const RealClient Policy = "client"

// KeySource is where idempotency keys come from.
type KeySource string

// Key sources.
const (
	// KeyPerIntent mints the key from the intent, once (the right way).
	KeyPerIntent KeySource = "intent"
	// KeyPayloadHash derives the key from a hash of the payload (the wrong
	// way: two intended actions with equal payloads collide).
	KeyPayloadHash KeySource = "payload_hash"
)

// KeySources lists every key source.
var KeySources = []KeySource{KeyPerIntent, KeyPayloadHash}

// ParseFixture reads a fixture name.
func ParseFixture(s string) (Fixture, error) { return parseWord(s, "fixture", Fixtures) }

// ParsePolicy reads a policy name.
func ParsePolicy(s string) (Policy, error) { return parseWord(s, "policy", Policies) }

// ParseKeySource reads a key source name.
func ParseKeySource(s string) (KeySource, error) { return parseWord(s, "key source", KeySources) }

// ParseOnOff reads a stable-keys switch: on or off, as written, and no
// other word for them.
func ParseOnOff(s string) (bool, error) {
	switch s {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	meant := map[string]string{"true": "on", "yes": "on", "1": "on", "on": "on", "false": "off", "no": "off", "0": "off", "off": "off"}[strings.ToLower(s)]
	if meant != "" {
		return false, fmt.Errorf("unknown switch value %q; did you mean %s? (accepted: on, off)", s, meant)
	}
	return false, fmt.Errorf("unknown switch value %q (accepted: on, off)", s)
}

// OnOff renders a switch the way the command line spells it.
func OnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func parseWord[T ~string](s, what string, words []T) (T, error) {
	for _, w := range words {
		if string(w) == s {
			return w, nil
		}
	}
	if best := termtext.Closest(s, words); best != "" {
		return "", fmt.Errorf("unknown %s %q; did you mean %s? (accepted: %s)", what, s, best, termtext.JoinWords(words))
	}
	return "", fmt.Errorf("unknown %s %q (accepted: %s)", what, s, termtext.JoinWords(words))
}

// Mission is one scripted scenario. It is data: the catalog and user files
// share one format.
type Mission struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Goal is the teaching goal: what the mission shows.
	Goal string `json:"goal"`
	// Contract names the provider profile the mission runs under unless
	// the settings override it: a built-in's case name (v1, v2, none, or
	// an id such as checkout). A mission file says provider: (or, for the
	// first three, contract:).
	Contract ledger.Contract `json:"contract"`
	// Captured holds, per charge, the amount captured ("45.00"): refunds
	// of an intent whose payload names the charge (charge: ch_1042) are
	// capped by it. Without it, refunds have no limit.
	Captured map[string]string `json:"captured,omitempty"`
	// Retention is how many ticks the provider keeps idempotency records.
	Retention int `json:"retention"`
	// KeySource is where keys come from unless the settings override it.
	KeySource KeySource `json:"key_source"`
	Intents   []Intent  `json:"intents"`
	Schedule  []Step    `json:"schedule"`
	// Reads are the faults the caller's reads meet, in order: the first
	// read (a list, a refund by id) meets the first, and so on; reads past
	// the list are answered as the ledger stands.
	Reads []ReadStep `json:"reads,omitempty"`
	// Expect lists the outcomes the mission promises under the settings it
	// contrasts. They double as tests.
	Expect []Expectation `json:"expect"`
	// Edited, when set, says the schedule was changed from another
	// mission's in the lab (f): a case carries it, a mission file never.
	Edited *Edited `json:"edited,omitempty"`
	// Source is where the mission was read from; not part of the case.
	Source string `json:"-"`
}

// Intent is one logical operation the caller means to perform once.
type Intent struct {
	ID        string            `json:"id"`
	Op        string            `json:"op"`
	Principal string            `json:"principal"`
	Payload   map[string]string `json:"payload"`
	// Label is how the agent names the intent to the user,
	// e.g. "refund of 45.00 on order 1042".
	Label string `json:"label"`
	Line  int    `json:"-"`
}

// Step is one line of the schedule. Exactly one of Attempt, Wait, Read,
// Restart and Together is set.
type Step struct {
	// Attempt is the intent the caller may send for at this step. If the
	// caller's policy sends, the attempt meets Fixture.
	Attempt string  `json:"attempt,omitempty"`
	Fixture Fixture `json:"fixture,omitempty"`
	// Delay is, for late_commit, the ticks until the commit lands and, for
	// pending, the ticks until the object reaches Resolve.
	Delay   int           `json:"delay,omitempty"`
	Resolve ledger.Status `json:"resolve,omitempty"`
	// Payload overrides payload fields for this attempt only, as when the
	// model re-issues a call with different arguments.
	Payload map[string]string `json:"payload,omitempty"`
	// Wait advances the clock by this many ticks.
	Wait int `json:"wait,omitempty"`
	// Read is the intent the caller reads back from the ledger.
	Read string `json:"read,omitempty"`
	// Restart, when true, kills and restarts the caller process.
	Restart bool `json:"restart,omitempty"`
	// Together holds attempts two workers send at the same tick.
	Together []Step `json:"together,omitempty"`
	Line     int    `json:"-"`
}

// StepKind names what a Step does.
type StepKind string

// Step kinds.
const (
	StepAttempt  StepKind = "attempt"
	StepWait     StepKind = "wait"
	StepRead     StepKind = "read"
	StepRestart  StepKind = "restart"
	StepTogether StepKind = "together"
)

// Kind says what the step does.
func (s Step) Kind() StepKind {
	switch {
	case s.Attempt != "":
		return StepAttempt
	case s.Wait > 0:
		return StepWait
	case s.Read != "":
		return StepRead
	case s.Restart:
		return StepRestart
	case len(s.Together) > 0:
		return StepTogether
	}
	return ""
}

// Terms is what an attempt step adds to its fixture, in a line: the delay
// and how a pending object resolves, " (+3 → succeeded)", and a payload
// override, " with {…}"; "" when it adds nothing.
func (s Step) Terms() string {
	out := s.DelayTerms()
	if len(s.Payload) > 0 {
		out += " with " + NormalizePayload(s.Payload)
	}
	return out
}

// DelayTerms is the delay of a late commit or a pending object and how the
// object resolves, " (+3 → succeeded)"; "" without a delay.
func (s Step) DelayTerms() string {
	if s.Delay <= 0 {
		return ""
	}
	out := fmt.Sprintf(" (+%d", s.Delay)
	if s.Resolve != 0 {
		out += " → " + s.Resolve.String()
	}
	return out + ")"
}

// String renders the step in one short line, for schedules on screen.
func (s Step) String() string {
	return s.Phrase(func(a Step) string { return fmt.Sprintf("attempt %s → %s", a.Attempt, a.Fixture) + a.Terms() })
}

// Phrase is the one wording of a step in a line: a wait, a read-back and a
// restart in fixed words, sends made together joined after "together:",
// and each attempt as the view that calls it words an attempt.
func (s Step) Phrase(attempt func(Step) string) string {
	switch s.Kind() {
	case StepAttempt:
		return attempt(s)
	case StepWait:
		return "wait " + termtext.Plural(s.Wait, "tick")
	case StepRead:
		return "read back " + s.Read
	case StepRestart:
		return "restart the caller"
	case StepTogether:
		parts := make([]string, len(s.Together))
		for i, t := range s.Together {
			parts[i] = t.Phrase(attempt)
		}
		return "together: " + strings.Join(parts, " | ")
	}
	return "(empty step)"
}

// Expectation is an outcome the mission promises under some settings.
type Expectation struct {
	When      Overrides          `json:"when"`
	Effects   int                `json:"effects"`
	Succeeded *int               `json:"succeeded,omitempty"`
	Verdicts  map[string]Verdict `json:"verdicts,omitempty"`
	Line      int                `json:"-"`
}

// Under names the settings the expectation holds under, as flags, or
// "defaults" when it names none.
func (e Expectation) Under() string {
	if w := e.When.String(); w != "" {
		return w
	}
	return "defaults"
}

// VerdictsInOrder lists the expectation's verdicts in the order of the
// mission's intents, leaving out intents it says nothing about.
func (e Expectation) VerdictsInOrder(intents []Intent) []Verdict {
	var vs []Verdict
	for _, in := range intents {
		if v, ok := e.Verdicts[in.ID]; ok {
			vs = append(vs, v)
		}
	}
	return vs
}

// The flags that give a run's settings, in one spelling for every command
// and every output that names them.
const (
	FlagStableKeys  = "stable-keys"
	FlagPolicy      = "policy"
	FlagContract    = "contract"
	FlagProvider    = "provider"
	FlagKeySource   = "key-source"
	FlagSeed        = "seed"
	FlagMaxAttempts = "max-attempts"
	FlagDeadline    = "deadline"
)

// SettingFlags are the flags of the settings a mission contrasts, in the
// order every output gives them.
var SettingFlags = []string{FlagStableKeys, FlagPolicy, FlagContract, FlagKeySource}

// ChargeField is the payload field that names the charge a refund takes
// from, for the captured amounts.
const ChargeField = "charge"

// Overrides are settings chosen on top of a mission's defaults; nil fields
// keep the default.
type Overrides struct {
	StableKeys *bool            `json:"stable_keys,omitempty"`
	Policy     *Policy          `json:"policy,omitempty"`
	Contract   *ledger.Contract `json:"contract,omitempty"`
	KeySource  *KeySource       `json:"key_source,omitempty"`
	// Profile is, with Contract, a profile of the user's own (from a
	// file), which no name gives.
	Profile *ledger.Profile `json:"-"`
}

// String renders the overrides as command-line flags, space-separated.
func (o Overrides) String() string { return strings.Join(o.Flags(), " ") }

// Flags renders the overrides that are set as the command line's flags,
// in the one spelling every output uses: --name=value.
func (o Overrides) Flags() []string {
	var out []string
	if o.StableKeys != nil {
		out = append(out, asFlag(FlagStableKeys, OnOff(*o.StableKeys)))
	}
	if o.Policy != nil {
		out = append(out, asFlag(FlagPolicy, string(*o.Policy)))
	}
	if o.Contract != nil {
		out = append(out, providerFlag(*o.Contract))
	}
	if o.KeySource != nil {
		out = append(out, asFlag(FlagKeySource, string(*o.KeySource)))
	}
	return out
}

// Flags renders s as the flags of `replaylab run` that give it for the
// mission m: the caller's keys and policy and the provider's contract
// always; the key source where it is not m's own, the seed where it is
// not the default, and the budget where one is set. The one place a
// setting becomes a flag, for write-ups, validate and the explorer.
func (s Settings) Flags(m *Mission) []string {
	o := Overrides{StableKeys: &s.StableKeys, Policy: &s.Policy, Contract: &s.Contract}
	own := KeyPerIntent
	if m != nil && m.KeySource != "" {
		own = m.KeySource
	}
	if s.KeySource != "" && s.KeySource != own {
		o.KeySource = &s.KeySource
	}
	out := o.Flags()
	if s.Seed != DefaultSeed {
		out = append(out, asFlag(FlagSeed, strconv.FormatUint(s.Seed, 10)))
	}
	if s.MaxAttempts != 0 {
		out = append(out, asFlag(FlagMaxAttempts, strconv.Itoa(s.MaxAttempts)))
	}
	if s.Deadline != 0 {
		out = append(out, asFlag(FlagDeadline, strconv.Itoa(s.Deadline)))
	}
	return out
}

func asFlag(name, value string) string { return "--" + name + "=" + value }

// Settings are everything the caller and provider run under.
type Settings struct {
	StableKeys bool            `json:"stable_keys"`
	Policy     Policy          `json:"policy"`
	Contract   ledger.Contract `json:"contract"`
	KeySource  KeySource       `json:"key_source"`
	Seed       uint64          `json:"seed"`
	// Profile is the provider's profile when it is not the built-in the
	// name gives: a user's own file, or one a case carries. A case
	// writes it beside the settings, never inside them.
	Profile *ledger.Profile `json:"-"`
	// MaxAttempts is the caller's budget of sends per intent; 0 means the
	// number of attempts the schedule offers for that intent.
	MaxAttempts int `json:"max_attempts"`
	// Deadline is the tick after which the caller sends nothing; 0 means
	// no deadline.
	Deadline int `json:"deadline"`
}

// DefaultSeed is the seed when none is given.
const DefaultSeed = 1

// Settings returns the mission's default settings with o applied.
func (m *Mission) Settings(o Overrides) Settings {
	s := Settings{
		StableKeys: true,
		Policy:     Naive,
		Contract:   m.Contract,
		KeySource:  m.KeySource,
		Seed:       DefaultSeed,
	}
	if s.Contract == "" {
		s.Contract = ledger.V1
	}
	if s.KeySource == "" {
		s.KeySource = KeyPerIntent
	}
	if o.StableKeys != nil {
		s.StableKeys = *o.StableKeys
	}
	if o.Policy != nil {
		s.Policy = *o.Policy
	}
	if o.Contract != nil {
		s.Contract, s.Profile = *o.Contract, o.Profile
	}
	if o.KeySource != nil {
		s.KeySource = *o.KeySource
	}
	return s
}

// Validate rejects settings the runner cannot use.
func (s Settings) Validate() error {
	if _, err := ParsePolicy(string(s.Policy)); err != nil {
		return err
	}
	if _, err := s.ProfileOf(); err != nil {
		return err
	}
	if _, err := ParseKeySource(string(s.KeySource)); err != nil {
		return err
	}
	if s.MaxAttempts < 0 || s.MaxAttempts > MaxSteps {
		return fmt.Errorf("max attempts %d: must be from 0 (as many as the schedule offers) to %d", s.MaxAttempts, MaxSteps)
	}
	if s.Deadline < 0 {
		return fmt.Errorf("deadline %d: must be 0 (no deadline) or a tick after 0", s.Deadline)
	}
	return nil
}

// NormalizePayload renders a payload with its fields sorted: the canonical
// form the digest binds.
func NormalizePayload(p map[string]string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(p[k])
	}
	return b.String()
}
