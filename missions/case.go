package missions

import "github.com/replaylab/replaylab/ledger"

// Case is the full record of one mission run under one set of settings:
// the inputs, every event, the final ledger and the verdicts. Running the
// same mission with the same settings gives an identical Case.
type Case struct {
	Mission  Mission  `json:"mission"`
	Settings Settings `json:"settings"`
	// Provider is the profile the run played, carried whole for every
	// profile but the first three (v1, v2, none), which their names give:
	// a case run under a user's own file replays anywhere. A reader
	// takes it as the settings' profile.
	Provider *ledger.Profile `json:"provider,omitempty"`
	Events   []Event         `json:"events"`
	Ledger   ledger.Snapshot `json:"ledger"`
	Outcome  Outcome         `json:"outcome"`
	// Version is the case format version the case was read from (1, 2
	// or 3), or 0 for a case this build made. A version 1 case has no
	// beliefs and a thinner ledger, and versions 1 and 2 answer a
	// mismatch 422; see export.AsVersion.
	Version int `json:"-"`
	// live is the runner's log of a case it shows (Runner.View), which
	// has no Events; see Log.
	live *EventLog
}

// EventKind names an Event.
type EventKind string

// Event kinds.
const (
	// EventAttempt is one send of a request for an intent.
	EventAttempt EventKind = "attempt"
	// EventHold is a step where the caller chose not to send.
	EventHold EventKind = "hold"
	// EventRead is a read-back of the ledger by the caller.
	EventRead EventKind = "read"
	// EventWait is the clock moving on while the caller waits.
	EventWait EventKind = "wait"
	// EventRestart is the caller process starting again.
	EventRestart EventKind = "restart"
	// EventCommit is an executing request committing after its caller
	// stopped waiting.
	EventCommit EventKind = "commit"
	// EventResolve is a pending object reaching its terminal state.
	EventResolve EventKind = "resolve"
	// EventPrune is an idempotency record expiring.
	EventPrune EventKind = "prune"
	// EventCheckpoint is a change of an intent's recorded state.
	EventCheckpoint EventKind = "checkpoint"
	// EventEscalate is an intent handed to a person with the evidence.
	EventEscalate EventKind = "escalate"
)

// Observation is what the caller saw of an attempt.
type Observation string

// Observations.
const (
	ObservedSuccess  Observation = "success"
	ObservedError    Observation = "error"
	ObservedTimeout  Observation = "timeout"
	ObservedConflict Observation = "conflict"
	ObservedMismatch Observation = "mismatch"
	ObservedPending  Observation = "pending"
	// ObservedNothing: the caller process died before recording the reply.
	ObservedNothing Observation = "nothing"
)

// Event is one thing that happened during a run, in order.
type Event struct {
	Seq  int `json:"seq"`
	Tick int `json:"tick"`
	// Step is the 1-based schedule step that produced the event; the step
	// after the last is the settling of the clock once the schedule ends.
	Step int       `json:"step"`
	Kind EventKind `json:"kind"`
	// Intent is the intent the event concerns, if any.
	Intent string `json:"intent,omitempty"`
	// Attempt numbers the sends of the whole mission, from 1.
	Attempt int `json:"attempt,omitempty"`
	// Worker is which of two concurrent workers sent, in a together step.
	Worker  int     `json:"worker,omitempty"`
	Key     string  `json:"key,omitempty"`
	Fixture Fixture `json:"fixture,omitempty"`
	// Provider is what the provider did: a ledger action, "not_reached"
	// when the request was dropped on the way, or the provider's own
	// change (late_commit, resolved, pruned).
	Provider string `json:"provider,omitempty"`
	// Response is what the provider answered, heard or not.
	Response *ledger.Response `json:"response,omitempty"`
	Observed Observation      `json:"observed,omitempty"`
	// Class is the caller's classification of the intent after this event.
	Class Class `json:"class,omitempty"`
	// Checkpoint is the intent's recorded state after the event.
	Checkpoint Checkpoint `json:"checkpoint,omitempty"`
	// Belief is what the caller believes of the intent after the event.
	Belief Belief `json:"belief,omitempty"`
	// Effects is the ledger's effect count after the event.
	Effects int `json:"effects"`
	// Say is what the agent told the user at this point, if anything.
	Say string `json:"say,omitempty"`
	// Note says in one sentence what happened.
	Note string `json:"note"`

	// Why and Saying are what Note and Say are made from: the engine
	// fills them, Words renders them. A case read from a file has the
	// words and not these.
	Why    Why  `json:"-"`
	Saying Said `json:"-"`
}

// Class is the caller's classification of an attempt's outcome.
type Class string

// Classes. Anything not positively one of the first three is Unknown.
const (
	KnownFailureBeforeExecution Class = "known_failure_before_execution"
	RecordedNotTerminal         Class = "recorded_not_terminal"
	KnownTerminal               Class = "known_terminal"
	Unknown                     Class = "unknown"
)

// Checkpoint is an intent's recorded state.
type Checkpoint string

// Checkpoints, in the order an intent normally moves through them.
const (
	Planned    Checkpoint = "planned"
	Approved   Checkpoint = "approved"
	Submitted  Checkpoint = "submitted"
	Committed  Checkpoint = "committed"
	Reconciled Checkpoint = "reconciled"
	Delivered  Checkpoint = "delivered"
	// Failed is a known failure, before or after execution.
	FailedCheckpoint Checkpoint = "failed"
	UnknownState     Checkpoint = "unknown"
	Escalated        Checkpoint = "escalated"
)

// Belief is what the caller believes became of an intent.
type Belief string

// Beliefs.
const (
	BelievesDone      Belief = "done"
	BelievesFailed    Belief = "failed"
	BelievesPending   Belief = "pending"
	BelievesUnknown   Belief = "unknown"
	BelievesEscalated Belief = "escalated"
)

// Verdict compares ledger truth with the caller's belief for one intent.
type Verdict string

// Verdicts.
const (
	ExactlyOnce   Verdict = "exactly_once"
	FailedCleanly Verdict = "failed_cleanly"
	Duplicate     Verdict = "duplicate"
	HiddenEffect  Verdict = "hidden_effect"
	Phantom       Verdict = "phantom"
	EscalatedV    Verdict = "escalated"
)

// Verdicts lists every verdict.
var Verdicts = []Verdict{ExactlyOnce, FailedCleanly, Duplicate, HiddenEffect, Phantom, EscalatedV}

// ParseVerdict reads a verdict name.
func ParseVerdict(s string) (Verdict, error) { return parseWord(s, "verdict", Verdicts) }

// Outcome sums up a run.
type Outcome struct {
	// Effects is how many effects the ledger holds.
	Effects int `json:"effects"`
	// Intended is how many effects the caller meant: one per intent.
	Intended int `json:"intended"`
	// Succeeded is how many effects reached a successful terminal state.
	Succeeded int              `json:"succeeded"`
	Verdicts  []IntentVerdict  `json:"verdicts"`
	Evidence  []EvidenceBundle `json:"evidence,omitempty"`
}

// IntentVerdict is the verdict for one intent.
type IntentVerdict struct {
	Intent  string  `json:"intent"`
	Verdict Verdict `json:"verdict"`
	// Effects counts the intent's effects that did not end failed.
	Effects int    `json:"effects"`
	Belief  Belief `json:"belief"`
}

// EvidenceBundle is what a person gets when an intent is escalated.
type EvidenceBundle struct {
	Intent   string            `json:"intent"`
	Key      string            `json:"key,omitempty"`
	Reason   string            `json:"reason"`
	Attempts []EvidenceAttempt `json:"attempts"`
	Reads    []EvidenceRead    `json:"reads"`
	Objects  []EvidenceObject  `json:"objects"`
}

// EvidenceAttempt is one send, as the caller recorded it.
type EvidenceAttempt struct {
	Attempt  int         `json:"attempt"`
	Tick     int         `json:"tick"`
	Key      string      `json:"key,omitempty"`
	Payload  string      `json:"payload"`
	Observed Observation `json:"observed"`
	Error    string      `json:"error,omitempty"`
	// Response is what the caller heard; absent when it heard nothing (a
	// timeout, or a crash before the reply was recorded).
	Response *ledger.Response `json:"response,omitempty"`
}

// EvidenceRead is one read-back and what it found.
type EvidenceRead struct {
	Tick    int              `json:"tick"`
	Found   []EvidenceObject `json:"found"`
	Summary string           `json:"summary"`
}

// EvidenceObject is a provider object id with its status.
type EvidenceObject struct {
	Object ledger.ObjectID `json:"object"`
	Status ledger.Status   `json:"status"`
}
