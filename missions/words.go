package missions

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/providers"
)

// WhyCode names what an event's note says.
type WhyCode uint8

// What a note can say. The engine picks one and fills its fields; Words
// turns it into a sentence.
const (
	whyNone WhyCode = iota
	// the world
	whyWait
	whyLateCommit
	whyResolved
	whyPruned
	whyDropped
	whyProvider
	whyComesBack
	whyRestarted
	// checkpoints
	whyApproved
	whySubmitted
	whySubmittedNoKey
	whyAnswered
	whyRecordedFailed
	whyConfirms
	whyRecordedPending
	whyRejected
	whyUnknown
	whyUnknownObs
	whyEndedFailed
	whyDelivered
	whyReadConfirms
	// holds
	whyAlreadyDone
	whyBudget
	whyDeadline
	whyHoldDelivered
	whyHoldEscalated
	whyHoldFailedAfter
	whyPolling
	whyNoResend
	// why a resend is not safe
	whyRetryNoContract
	whyRetryPayloadHash
	whyRetryFreshKeys
	whyRetryReplayedError
	whyRetryPastWindow
	whyRetryNotKept
	// read-backs
	whyRead
	whyReadForPerson
	whyTailEvidenceOnly
	whyTailEmptyNotProof
	whyRejectedFinal
	// escalations
	whyMismatch
	whyForeignIntent
	whyForeignParams
	whyNoContract
	whyManyObjects
	whyUnsettled
	whyNothingFound
	whyReadFailed
)

// Why is the structured content of a note: a code and what it refers to.
type Why struct {
	Code   WhyCode
	Obj    ledger.ObjectID
	N      int
	Obs    Observation
	Status ledger.Status
	// A and B are texts the sentence quotes (a key, two payloads).
	A, B string
	// Sub is a nested reason (why no resend was safe), with N its number.
	Sub WhyCode
	// Tail adds a clause to a read-back's note.
	Tail WhyCode
	// Found is what a read-back found.
	Found []EvidenceObject
	// minted is, where A is a key the run's seed minted, 1 + its number:
	// the run keeps A by it (see Runner.keepWhy), with no text of its
	// own. Only the caller that chose the key sets it.
	minted int32
}

// SayCode names what the agent tells the user.
type SayCode uint8

// What the agent can say.
const (
	sayNothing SayCode = iota
	sayDone
	sayDoneWith
	saySorryRetry
	saySorryGiveUp
	sayPending
	sayRejectedRetry
	sayRejected
	sayProcessing
	sayDontKnow
	sayEndedFailed
	sayEscalated
)

// Said is the structured content of what the agent says.
type Said struct {
	Code SayCode
	Obj  ledger.ObjectID
	// Payload is, for sayDoneWith, the override that was sent.
	Payload map[string]string
}

// Words turns a run's structured events into English: the one place
// where notes, the agent's words and evidence reasons are written.
type Words struct {
	Mission  *Mission
	Settings Settings
}

// Render fills ev's Note and Say from its Why and Saying.
func (w Words) Render(ev *Event) {
	if ev.Why.Code != whyNone {
		ev.Note = w.note(ev)
	}
	if ev.Saying.Code != sayNothing {
		ev.Say = w.say(ev.Intent, ev.Saying)
	}
}

func (w Words) label(intent string) string {
	for _, in := range w.Mission.Intents {
		if in.ID == intent {
			if in.Label != "" {
				return in.Label
			}
			return in.Op + " " + in.ID
		}
	}
	return intent
}

func (w Words) note(ev *Event) string {
	y := ev.Why
	switch ev.Kind {
	case EventHold:
		return ev.Intent + ": " + w.reason(y)
	case EventEscalate:
		return "escalated: " + w.reason(y)
	case EventRead:
		what := "read-back for " + ev.Intent
		if y.Code == whyReadForPerson {
			what += ", for the person it goes to"
		}
		switch y.Obs {
		case ObservedError:
			return what + ": the provider answered 500, which shows nothing either way"
		case ObservedTimeout:
			return what + ": no answer before the caller's timeout, which shows nothing either way"
		}
		s := what + ": " + describeFound(y.Found)
		if y.N > 0 {
			s += " (a lagging read: it showed the ledger as it was " + termtext.Plural(y.N, "tick") + " earlier)"
		}
		switch y.Tail {
		case whyTailEvidenceOnly:
			s += "; with no key contract this is evidence for a person, not a settlement"
		case whyTailEmptyNotProof:
			s += "; an empty read-back does not prove failure"
		}
		return s
	case EventAttempt:
		if y.Code == whyDropped {
			return "the request is dropped on the way; the provider never sees it"
		}
		s := w.providerNote(ev)
		if ev.Observed == ObservedNothing {
			s += "; the caller process dies before recording the reply"
		}
		return s
	}
	return w.reason(y)
}

// changeWhy is why the provider did something on its own as the clock
// moved: a late commit landing, a pending object resolving, a key pruned.
func changeWhy(kind ledger.ChangeKind, obj ledger.ObjectID, key string, st ledger.Status) Why {
	switch kind {
	case ledger.LateCommit:
		return Why{Code: whyLateCommit, Obj: obj}
	case ledger.Resolved:
		return Why{Code: whyResolved, Obj: obj, Status: st}
	}
	return Why{Code: whyPruned, A: key}
}

// ChangeNote is the note of a change the provider made on its own, in the
// words the runner's own events use: for cases made from elsewhere (a
// serve session).
func ChangeNote(kind ledger.ChangeKind, obj ledger.ObjectID, key string, st ledger.Status) string {
	return Words{}.reason(changeWhy(kind, obj, key, st))
}

// reason is a Why as a clause.
func (w Words) reason(y Why) string {
	switch y.Code {
	case whyWait:
		return "the caller waits " + termtext.Plural(y.N, "tick")
	case whyLateCommit:
		return "the request the caller stopped waiting for commits: " + y.Obj.String()
	case whyResolved:
		return y.Obj.String() + " turns " + y.Status.String()
	case whyPruned:
		return "retention ends: the record for key " + y.A + " is pruned"
	case whyComesBack:
		return "the caller process comes back up"
	case whyRestarted:
		return "the caller process is restarted"
	case whyApproved:
		return "the call is approved to run"
	case whySubmitted:
		return "with key " + y.A
	case whySubmittedNoKey:
		return "without a key: the provider takes none"
	case whyAnswered:
		return "the provider answers with " + y.Obj.String()
	case whyRecordedFailed:
		return "recorded as failed: " + string(y.Obs)
	case whyConfirms:
		return "the provider confirms " + y.Obj.String()
	case whyRecordedPending:
		return y.Obj.String() + " is recorded but still pending"
	case whyRejected:
		return "rejected before execution; nothing was saved, so the same action may be retried"
	case whyUnknown:
		return "outcome unknown"
	case whyUnknownObs:
		return "outcome unknown: " + string(y.Obs)
	case whyEndedFailed:
		return y.Obj.String() + " ended failed after execution"
	case whyDelivered:
		return "the result (" + y.Obj.String() + ") is reported to the user"
	case whyReadConfirms:
		return "the read-back confirms " + y.Obj.String() + " succeeded"
	case whyAlreadyDone:
		return "already done; nothing is sent"
	case whyBudget:
		return "the budget of " + strconv.Itoa(y.N) + " attempts is spent"
	case whyDeadline:
		return "the deadline (tick " + strconv.Itoa(y.N) + ") has passed"
	case whyHoldDelivered:
		return "delivered; the executor blocks any further send"
	case whyHoldEscalated:
		return "escalated; a person decides, the executor sends nothing"
	case whyHoldFailedAfter:
		return "failed after execution; a new refund would be a new intent with a new key"
	case whyPolling:
		return "recorded but still pending; polling the object instead of sending"
	case whyNoResend:
		return "no resend, " + w.reason(Why{Code: y.Sub, N: y.N}) + "; reconciling instead"
	case whyRetryNoContract:
		return "the provider has no idempotency contract, so no resend is safe"
	case whyRetryPayloadHash:
		return "keys come from a hash of the payload, which another intended action can share, so a resend could be taken for it"
	case whyRetryFreshKeys:
		return "each attempt carries a fresh key, so a resend could be a second operation"
	case whyRetryReplayedError:
		return "a same-key retry only replays the saved error"
	case whyRetryNotKept:
		return w.profileWords() + ", so a same-key resend could run again"
	case whyRejectedFinal:
		return "rejected before execution, and the provider makes a failed key final: the corrected request goes under a new key, " + y.A
	case whyRetryPastWindow:
		return "past the safe retry window (" + strconv.Itoa(y.N) + " ticks after the first send)"
	case whyMismatch:
		return "the same key came back with different parameters: a person must decide which refund was meant"
	case whyForeignIntent:
		return "the provider answered with " + y.Obj.String() + ", which belongs to another intent: the key merged two intended actions"
	case whyForeignParams:
		return y.Obj.String() + " carries other parameters (" + y.A + ") than the intent (" + y.B + "): a person must decide whether it is the refund that was meant"
	case whyNoContract:
		return "the provider has no idempotency contract: automatic retries are barred, so a person must confirm what happened"
	case whyManyObjects:
		return "the read-back found " + strconv.Itoa(y.N) + " objects for one intent"
	case whyUnsettled:
		return "reconciliation could not settle the outcome before the run ended"
	case whyReadFailed:
		return "the last read-back failed, so nothing shows whether the refund was made"
	case whyNothingFound:
		s := "the read-back finds no object for it, and nothing proves the original cannot still commit"
		if y.Sub != whyNone {
			s += "; no resend was safe: " + w.reason(Why{Code: y.Sub, N: y.N})
		}
		return s
	}
	return ""
}

// providerNote says what the provider did with a send that reached it:
// in the words the first three profiles always had, and under any other
// in the words of its own profile (its statuses, what it keeps, what a
// repeat returns).
func (w Words) providerNote(ev *Event) string {
	var resp ledger.Response
	if ev.Response != nil {
		resp = *ev.Response
	}
	switch a := ledger.Action(ev.Provider); {
	case !providers.Short(w.Settings.Contract), a == ledger.OverLimit, a == ledger.KeyFailed, a == ledger.KeyRequired, resp.Refused != ledger.NotRefused:
		// Any other profile, and what only profiles brought (a refund
		// past its capture, under v1 too), in the profile's words.
		if p, err := w.Settings.ProfileOf(); err == nil {
			return profileNote(p, a, resp, ev.Provider)
		}
	}
	obj := resp.Object
	switch ledger.Action(ev.Provider) {
	case ledger.Rejected:
		return "the provider rejects the request before executing it; nothing is saved"
	case ledger.Committed:
		if resp.Code == ledger.CodeServerError {
			return "the provider commits " + obj.String() + " but saves a 500 as the response"
		}
		if resp.Status == ledger.Pending {
			return "the provider creates " + obj.String() + " in pending"
		}
		return "the provider commits " + obj.String()
	case ledger.Executing:
		return "the provider is still executing when the caller stops waiting"
	case ledger.Replayed:
		if w.Settings.Contract == ledger.V2 && obj != 0 {
			return "the key is known: the provider returns the updated response, " + obj.String() + " " + resp.Status.String() + "; no new effect"
		}
		if obj != 0 {
			return "the key is known: the provider replays the saved " + strconv.Itoa(resp.Code) + " for " + obj.String() + "; no new effect"
		}
		return "the key is known: the provider replays the saved " + strconv.Itoa(resp.Code) + "; no new effect"
	case ledger.Completed:
		return "the key is known: the provider finishes what the earlier attempt left open and returns the updated response for " + obj.String() + "; no new effect"
	case ledger.Conflict:
		return "the same key is still executing: the provider answers 409 conflict and saves nothing; this send was not executed"
	case ledger.Mismatch:
		return "the key was saved with a different payload: the provider rejects the request"
	}
	return ev.Provider
}

// profileNote is what the provider did, under a profile other than the
// first three.
func profileNote(p *ledger.Profile, a ledger.Action, resp ledger.Response, raw string) string {
	obj := resp.Object
	doc := func() string { return p.RefusalOf(a, resp).String() }
	switch a {
	case ledger.Rejected:
		if p.FailedKey != nil {
			return "the provider rejects the request before executing it, and makes its key final: a later request under that key is refused"
		}
		return "the provider rejects the request before executing it; nothing is saved"
	case ledger.Committed:
		switch {
		case resp.Code == ledger.CodeServerError && p.Saves == ledger.SavesAll:
			return "the provider commits " + obj.String() + " but saves a 500 as the response"
		case resp.Code == ledger.CodeServerError && p.Saves != ledger.SavesNone:
			return "the provider commits " + obj.String() + " but answers 500, which it does not keep: the key is free again"
		case resp.Code == ledger.CodeServerError:
			return "the provider commits " + obj.String() + " but answers 500"
		case resp.Status == ledger.Pending:
			return "the provider creates " + obj.String() + " in pending"
		}
		return "the provider commits " + obj.String()
	case ledger.Executing:
		return "the provider is still executing when the caller stops waiting"
	case ledger.Replayed:
		switch {
		case resp.Refused == ledger.RefusedOverLimit:
			return "the key is known: the provider replays its saved refusal, " + doc() + "; no new effect"
		case obj != 0 && p.Replay == ledger.ReplayCurrent:
			return "the key is known: the provider answers with " + obj.String() + " as it is now, " + resp.Status.String() + "; no new effect"
		case obj != 0 && p.Replay == ledger.ReplayComplete:
			return "the key is known: the provider returns the updated response, " + obj.String() + " " + resp.Status.String() + "; no new effect"
		case obj != 0:
			return "the key is known: the provider replays the saved " + strconv.Itoa(resp.Code) + " for " + obj.String() + "; no new effect"
		}
		return "the key is known: the provider replays the saved " + strconv.Itoa(resp.Code) + "; no new effect"
	case ledger.Completed:
		return "the key is known: the provider finishes what the earlier attempt left open and returns the updated response for " + obj.String() + "; no new effect"
	case ledger.Conflict:
		return "the same key is still executing: the provider answers " + doc() + " and saves nothing; this send was not executed"
	case ledger.Mismatch:
		return "the key was saved with a different payload: the provider refuses the request, " + doc()
	case ledger.KeyFailed:
		return "the key's earlier attempt failed and the provider made the key final: it refuses the request, " + doc() + "; nothing runs"
	case ledger.KeyRequired:
		return "the request carries no key, which the provider requires: it refuses it, " + doc() + "; nothing runs"
	case ledger.OverLimit:
		return "the refund would take more than was captured on the charge: the provider refuses it before it runs, " + doc()
	}
	return raw
}

func (w Words) say(intent string, s Said) string {
	label := w.label(intent)
	switch s.Code {
	case sayDone:
		return "Done: the " + label + " went through (" + s.Obj.String() + ")."
	case sayDoneWith:
		return "Done: the " + label + " went through (" + s.Obj.String() + "), sent with " + NormalizePayload(s.Payload) + "."
	case saySorryRetry:
		return "Sorry, the " + label + " failed. I'll try again."
	case saySorryGiveUp:
		return "Sorry, the " + label + " failed, and I could not complete it."
	case sayPending:
		return "The " + label + " is recorded (" + s.Obj.String() + ") but still pending. I won't send it again; I'll wait for it to finish."
	case sayRejectedRetry:
		return "The provider rejected the " + label + " before running it, so nothing happened and sending it again is safe."
	case sayRejected:
		return "The provider rejected the " + label + " before running it, so nothing happened."
	case sayProcessing:
		return "The " + label + " is still being processed. I'll wait and check rather than send a new one."
	case sayDontKnow:
		return "I don't know yet whether the " + label + " went through. I'm checking before doing anything else."
	case sayEndedFailed:
		return "The " + label + " ran but ended failed (" + s.Obj.String() + "), so nothing was refunded. A new refund would be a new request with its own key."
	case sayEscalated:
		return "I've passed the " + label + " to a person to check, with everything I know. I won't retry it myself."
	}
	return ""
}

func describeFound(found []EvidenceObject) string {
	if len(found) == 0 {
		return "no objects"
	}
	parts := make([]string, len(found))
	for i, o := range found {
		parts[i] = fmt.Sprintf("%s %s", o.Object, o.Status)
	}
	return strings.Join(parts, ", ")
}

// errorText is how an attempt's failure reads in the evidence.
func errorText(a EvidenceAttempt) string {
	switch a.Observed {
	case ObservedSuccess, ObservedPending:
		return ""
	case ObservedTimeout:
		return "timeout"
	case ObservedNothing:
		return "caller crashed before recording the reply"
	}
	if a.Response != nil {
		return fmt.Sprintf("%s (%d)", a.Observed, a.Response.Code)
	}
	return string(a.Observed)
}

// Evidence is the bundle a person gets for an escalated intent, in words.
func (w Words) Evidence(in *IntentState) EvidenceBundle {
	e := &in.evidence
	b := EvidenceBundle{
		Intent:   in.Intent.ID,
		Key:      e.key,
		Reason:   w.reason(e.reason),
		Attempts: make([]EvidenceAttempt, len(e.attempts)),
		Reads:    make([]EvidenceRead, len(e.reads)),
		Objects:  append([]EvidenceObject{}, e.objects...),
	}
	copy(b.Attempts, e.attempts)
	copy(b.Reads, e.reads)
	return b.Worded()
}

// Worded is b with what it says in words made from what it holds: each
// attempt's error, each read's summary. The engine's bundles and those
// made from a provider's records are worded alike.
func (b EvidenceBundle) Worded() EvidenceBundle {
	for i := range b.Attempts {
		b.Attempts[i].Error = errorText(b.Attempts[i])
	}
	for i := range b.Reads {
		b.Reads[i].Summary = describeFound(b.Reads[i].Found)
	}
	return b
}

// Setting names one of the settings a run is made under.
type Setting int

// The settings, in the order they are always named.
const (
	SettingStableKeys Setting = iota
	SettingPolicy
	SettingContract
	SettingKeySource
	SettingSeed
	SettingBudget
	SettingDeadline
)

// AllSettings lists every setting in order.
var AllSettings = []Setting{SettingStableKeys, SettingPolicy, SettingContract, SettingKeySource, SettingSeed, SettingBudget, SettingDeadline}

// Word renders one setting of s as its label and value, e.g. "stable
// keys " and "on": the one place where a setting is put into words.
func (s Settings) Word(f Setting) (label, value string) {
	switch f {
	case SettingStableKeys:
		return "stable keys ", OnOff(s.StableKeys)
	case SettingPolicy:
		if s.Policy == RealClient {
			return "", "your client"
		}
		return "policy ", string(s.Policy)
	case SettingContract:
		if !providers.Short(s.Contract) {
			return "provider ", ProfileTitle(s.Contract)
		}
		return "contract ", string(s.Contract)
	case SettingKeySource:
		return "keys from ", string(s.KeySource)
	case SettingSeed:
		return "seed ", fmt.Sprint(s.Seed)
	case SettingBudget:
		if s.MaxAttempts > 0 {
			return "at most ", termtext.Plural(s.MaxAttempts, "attempt") + " per intent"
		}
		return "", "the schedule's budget"
	case SettingDeadline:
		if s.Deadline > 0 {
			return "deadline ", fmt.Sprintf("tick %d", s.Deadline)
		}
		return "", "no deadline"
	}
	return "", ""
}

// Words renders one setting of s, e.g. "stable keys on".
func (s Settings) Words(f Setting) string {
	l, v := s.Word(f)
	return l + v
}

// SettingsWords names the settings that shape a run, for a sentence:
// "stable keys on, policy naive, contract v1", with the key source where
// keys do not come from the intent.
func SettingsWords(s Settings) string {
	parts := []string{s.Words(SettingStableKeys), s.Words(SettingPolicy), s.Words(SettingContract)}
	if s.KeySource != KeyPerIntent {
		parts = append(parts, s.Words(SettingKeySource))
	}
	return strings.Join(parts, ", ")
}

// Explain says in words what the verdict means for its intent: the one
// place a verdict is put in words, for every screen and output.
func (v IntentVerdict) Explain() string {
	switch v.Verdict {
	case ExactlyOnce:
		return "believes done; exactly one effect of its own stands in the ledger"
	case FailedCleanly:
		return "believes it failed; nothing of its own took effect"
	case Duplicate:
		return fmt.Sprintf("believes %s; the ledger holds %d effects for one intent", v.Belief, v.Effects)
	case HiddenEffect:
		return fmt.Sprintf("believes %s, yet the ledger holds %s", v.Belief, termtext.Plural(v.Effects, "effect"))
	case Phantom:
		return "believes done, but no effect of its own is in the ledger"
	case EscalatedV:
		return fmt.Sprintf("handed to a person with the evidence; the ledger holds %s", termtext.Plural(v.Effects, "effect"))
	}
	return fmt.Sprintf("believes %s; %s", v.Belief, termtext.Plural(v.Effects, "effect"))
}

// FixtureWords says what the network and the provider do with one attempt
// under a fixture, in a learner's words, without saying what the caller
// will observe: the course shows it before it asks.
func FixtureWords(st Step) string {
	switch st.Fixture {
	case FailureBeforeCommit:
		return "the provider refuses it before running anything"
	case TimeoutAfterCommit:
		return "the provider commits it, unless it replays a known key; the reply is lost on the way back"
	case Success:
		return "it reaches the provider, which answers"
	case TimeoutBeforeCommit:
		return "the request is lost on the way to the provider"
	case ServerErrorAfterCommit:
		return "the provider commits it, unless it replays a known key, and answers 500"
	case LateCommit:
		return fmt.Sprintf("the provider is slow: it is still running when the caller stops waiting, and commits %s later", termtext.Plural(st.Delay, "tick"))
	case PendingFixture:
		return fmt.Sprintf("the provider takes it as pending; it ends %s %s later", st.Resolve, termtext.Plural(st.Delay, "tick"))
	case CrashAfterSend:
		return "the provider commits it, unless it replays a known key, and answers; the caller's process dies before it records the answer"
	}
	return string(st.Fixture)
}

// ObservationWords says an observation in a learner's words.
func ObservationWords(o Observation) string {
	switch o {
	case ObservedSuccess:
		return "success, with the refund's id"
	case ObservedError:
		return "an error"
	case ObservedTimeout:
		return "a timeout: no answer in time"
	case ObservedConflict:
		return "a conflict: that key is still running"
	case ObservedMismatch:
		return "a mismatch: that key has other parameters"
	case ObservedPending:
		return "the refund, still pending"
	case ObservedNothing:
		return "nothing: the caller died first"
	}
	return string(o)
}

// BeliefWords says a belief in a learner's words.
func BeliefWords(b Belief) string {
	switch b {
	case BelievesDone:
		return "that it is done"
	case BelievesFailed:
		return "that it failed"
	case BelievesPending:
		return "that it is still pending"
	case BelievesUnknown:
		return "that it does not know yet"
	case BelievesEscalated:
		return "that a person must decide"
	}
	return string(b)
}

// VerdictMeaning says what a verdict means, in a few words.
func VerdictMeaning(v Verdict) string {
	switch v {
	case ExactlyOnce:
		return "believes done, and one effect of its own stands"
	case FailedCleanly:
		return "believes it failed, and nothing took effect"
	case Duplicate:
		return "more effects than intended"
	case HiddenEffect:
		return "believes it failed, yet its effect stands"
	case Phantom:
		return "believes done, but no effect of its own"
	case EscalatedV:
		return "handed to a person with the evidence"
	}
	return string(v)
}

// SettingsSentence says a run's settings in words a learner reads: "stable
// keys on (the retry reuses the key) · naive caller · provider contract
// v1"; short leaves the glosses out, for a narrow screen.
func SettingsSentence(s Settings, short bool) string {
	if short {
		return fmt.Sprintf("%s · %s caller · contract %s", keysWords(s, true), s.Policy, s.Contract)
	}
	return fmt.Sprintf("%s · %s caller · provider contract %s", keysWords(s, false), s.Policy, s.Contract)
}

// keysWords says where a run's keys come from, with a gloss unless short.
func keysWords(s Settings, short bool) string {
	switch {
	case s.Contract == ledger.None && short:
		return "keys ignored"
	case s.Contract == ledger.None:
		return "the provider ignores keys"
	case s.KeySource == KeyPayloadHash && short:
		return "keys from the payload's hash"
	case s.KeySource == KeyPayloadHash:
		return "keys hashed from the payload (alike payloads, one key)"
	case short:
		return "stable keys " + OnOff(s.StableKeys)
	case s.StableKeys:
		return "stable keys on (the retry reuses the key)"
	}
	return "stable keys off (a fresh key per attempt)"
}

// StepWords says a step of m's schedule in a learner's words, what the
// world does and not what the caller will see: the course's schedule.
// (Step.Phrase is the schedule's terse notation.)
func StepWords(m *Mission, st Step) string {
	who := ""
	if len(m.Intents) > 1 && st.Attempt != "" {
		who = " (" + st.Attempt + ")"
	}
	switch st.Kind() {
	case StepAttempt:
		// "if sent": the step is the caller's turn, which a guarded
		// caller may let go by; the words are what a send would meet.
		if len(st.Payload) > 0 {
			return "if sent" + who + " with other parameters: " + FixtureWords(st)
		}
		return "if sent" + who + ": " + FixtureWords(st)
	case StepTogether:
		parts := make([]string, len(st.Together))
		for i, t := range st.Together {
			parts[i] = fmt.Sprintf("worker %d: %s", i+1, FixtureWords(t))
		}
		return fmt.Sprintf("%d workers send at once. %s", len(st.Together), strings.Join(parts, "; "))
	case StepWait:
		return fmt.Sprintf("wait %s", termtext.Plural(st.Wait, "tick"))
	case StepRead:
		return "read back the refunds the provider holds for the order"
	case StepRestart:
		return "the caller restarts from what it recorded"
	}
	return st.String()
}

// profileWords says what in the run's profile makes a same-key resend
// unsafe: which answers it keeps, and whether a repeat in flight runs.
func (w Words) profileWords() string {
	p, err := w.Settings.ProfileOf()
	if err != nil {
		return string(w.Settings.Contract)
	}
	if p.Saves != ledger.SavesAll {
		return p.ID + " keeps " + map[ledger.Saves]string{ledger.SavesNo5xx: "no 5xx answer", ledger.SavesSuccess: "only 2xx answers"}[p.Saves] + " under a key"
	}
	return p.ID + " runs a repeat that comes while the first still runs"
}
