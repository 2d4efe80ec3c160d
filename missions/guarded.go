package missions

import (
	"fmt"

	"github.com/replaylab/replaylab/ledger"
)

// The guarded policy is the executor and reconciler from the test matrix:
// it classifies every attempt, never resends while the outcome is unknown or
// pending except with the same key inside the safe retry window, reads the
// ledger to reconcile, and hands what it cannot settle to a person.

// safeWindow is how long after the first send a same-key retry is safe: the
// provider's retention minus a margin of a fifth of it (at least one tick).
func (r *Runner) safeWindow() int {
	ret := r.led.Config().Retention
	margin := max(1, ret/5)
	return ret - margin
}

// setCheckpoint records a change of the intent's durable state as an event.
func (r *Runner) setCheckpoint(in *intentState, cp Checkpoint, note string) {
	if in.checkpoint == cp {
		return
	}
	in.checkpoint = cp
	r.emit(Event{Kind: EventCheckpoint, Intent: in.intent.ID, Checkpoint: cp, Class: in.class, Note: note})
}

func (r *Runner) guardedAttempt(in *intentState, st Step, worker int) {
	switch in.checkpoint {
	case Delivered:
		r.hold(in, worker, "delivered; the executor blocks any further send")
		return
	case Escalated:
		r.hold(in, worker, "escalated; a person decides, the executor sends nothing")
		return
	case FailedCheckpoint:
		if in.class == KnownTerminal {
			r.hold(in, worker, "failed after execution; a new refund would be a new intent with a new key")
			return
		}
	}
	if in.class == RecordedNotTerminal {
		// Recorded, not terminal: do not send again, poll the object.
		r.emit(Event{Kind: EventHold, Intent: in.intent.ID, Worker: worker, Class: in.class, Checkpoint: in.checkpoint,
			Note: in.intent.ID + ": recorded but still pending; polling the object instead of sending"})
		r.readBack(in)
		return
	}
	if in.class == Unknown {
		if why, ok := r.sameKeyRetry(in); !ok {
			r.reconcileOne(in, worker, why)
			return
		}
	}
	if reason, ok := r.budgetLeft(in); !ok {
		r.hold(in, worker, reason)
		return
	}
	key := r.attemptKey(in, st)
	r.submit(in, key)
	ev := r.send(in, st, worker, key)
	if ev.Observed == ObservedNothing {
		in.class = Unknown
		r.crash(ev)
		return
	}
	r.classify(in, &ev)
	r.emit(ev)
	r.afterClass(in, ev)
}

// sameKeyRetry says whether resending an unknown intent is safe now.
func (r *Runner) sameKeyRetry(in *intentState) (string, bool) {
	switch {
	case r.s.Contract == ledger.None:
		return "the provider has no idempotency contract, so no resend is safe", false
	case r.s.KeySource == KeyPayloadHash:
		return "keys come from a hash of the payload, which another intended action can share, so a resend could be taken for it", false
	case !r.s.StableKeys:
		return "each attempt carries a fresh key, so a resend could be a second operation", false
	case in.replayedError:
		return "a same-key retry only replays the saved error", false
	case r.led.Now()-in.firstSent >= r.safeWindow():
		return fmt.Sprintf("past the safe retry window (%d ticks after the first send)", r.safeWindow()), false
	}
	return "", true
}

// classify sorts an attempt into one of the four classes.
func (r *Runner) classify(in *intentState, ev *Event) {
	prev := in.class
	switch ev.Observed {
	case ObservedSuccess:
		in.class = KnownTerminal
	case ObservedPending:
		in.class = RecordedNotTerminal
	case ObservedError:
		if ev.Response != nil && ev.Response.Status == ledger.Failed {
			// The object exists and reached the documented state failed.
			in.class = KnownTerminal
		} else if ev.Provider == string(ledger.Rejected) {
			in.class = KnownFailureBeforeExecution
		} else {
			in.class = Unknown
			if prev == Unknown && ev.Provider == string(ledger.Replayed) {
				in.replayedError = true
			}
		}
	default: // timeout, conflict, mismatch
		in.class = Unknown
	}
	if ev.Response != nil && ev.Response.Object != 0 && r.foreign(in, ev.Response.Object) != "" {
		// An answer about an object that is not this intent's settles
		// nothing about this intent.
		in.class = Unknown
	}
	ev.Class = in.class
}

// afterClass acts on the class: checkpoints, the user's message, escalation.
func (r *Runner) afterClass(in *intentState, ev Event) {
	say := ""
	switch {
	case ev.Observed == ObservedMismatch:
		r.escalate(in, "the same key came back with different parameters: a person must decide which refund was meant")
		return
	case ev.Response != nil && ev.Response.Object != 0 && r.foreign(in, ev.Response.Object) != "":
		// Reporting it as done would invent an effect, or the wrong one.
		r.escalate(in, r.foreign(in, ev.Response.Object))
		return
	case in.class == KnownTerminal && ev.Observed == ObservedError:
		r.failedAfterExecution(in, ev.Response.Object)
		return
	case in.class == KnownTerminal:
		r.setCheckpoint(in, Committed, fmt.Sprintf("the provider confirms %s", ev.Response.Object))
		r.deliver(in, ev.Response.Object)
		return
	case in.class == RecordedNotTerminal:
		r.setCheckpoint(in, Committed, fmt.Sprintf("%s is recorded but still pending", ev.Response.Object))
		in.belief = BelievesPending
		say = fmt.Sprintf("The %s is recorded (%s) but still pending. I won't send it again; I'll wait for it to finish.", in.label(), ev.Response.Object)
	case in.class == KnownFailureBeforeExecution:
		r.setCheckpoint(in, FailedCheckpoint, "rejected before execution; nothing was saved, so the same action may be retried")
		in.belief = BelievesFailed
		if r.retriesAhead(in) {
			say = fmt.Sprintf("The provider rejected the %s before running it, so nothing happened and sending it again is safe.", in.label())
		} else {
			say = fmt.Sprintf("The provider rejected the %s before running it, so nothing happened.", in.label())
		}
	case r.s.Contract == ledger.None:
		r.setCheckpoint(in, UnknownState, "outcome unknown")
		r.readBack(in)
		r.escalate(in, noContract)
		return
	default:
		r.setCheckpoint(in, UnknownState, "outcome unknown: "+string(ev.Observed))
		in.belief = BelievesUnknown
		if ev.Observed == ObservedConflict {
			say = fmt.Sprintf("The %s is still being processed. I'll wait and check rather than send a new one.", in.label())
		} else {
			say = fmt.Sprintf("I don't know yet whether the %s went through. I'm checking before doing anything else.", in.label())
		}
	}
	r.say(in, say)
}

// say attaches the agent's words to the last event about the intent.
func (r *Runner) say(in *intentState, words string) {
	if words == "" {
		return
	}
	for i := len(r.events) - 1; i >= 0; i-- {
		if r.events[i].Intent == in.intent.ID {
			r.events[i].Say = words
			return
		}
	}
}

// noContract is why an unknown outcome goes to a person when the provider
// takes no key.
const noContract = "the provider has no idempotency contract: automatic retries are barred, so a person must confirm what happened"

// foreign says why an object the provider named is not this intent's
// result, or "" when it is: it must be linked to the intent by the metadata
// the caller attached, and carry the intent's own parameters (target and
// amount included).
func (r *Runner) foreign(in *intentState, id ledger.ObjectID) string {
	o, ok := r.led.Object(id)
	switch {
	case !ok:
		return fmt.Sprintf("the provider named %s, which the ledger does not hold", id)
	case o.Intent != in.intent.ID:
		return fmt.Sprintf("the provider answered with %s, which belongs to another intent: the key merged two intended actions", id)
	case o.Digest != in.digest:
		return fmt.Sprintf("%s carries other parameters (%s) than the intent (%s): a person must decide whether it is the refund that was meant", id, o.Payload, in.payload)
	}
	return ""
}

// failedAfterExecution records a known failure after execution: the object
// reached the terminal state failed.
func (r *Runner) failedAfterExecution(in *intentState, obj ledger.ObjectID) {
	in.class = KnownTerminal
	in.belief = BelievesFailed
	r.setCheckpoint(in, FailedCheckpoint, fmt.Sprintf("%s ended failed after execution", obj))
	r.say(in, fmt.Sprintf("The %s ran but ended failed (%s), so nothing was refunded. A new refund would be a new request with its own key.", in.label(), obj))
}

func (r *Runner) deliver(in *intentState, obj ledger.ObjectID) {
	in.belief = BelievesDone
	in.class = KnownTerminal
	r.setCheckpoint(in, Delivered, fmt.Sprintf("the result (%s) is reported to the user", obj))
	r.say(in, fmt.Sprintf("Done: the %s went through (%s).", in.label(), obj))
}

// reconcileOne reads the ledger instead of sending, and settles what the
// read-back can settle.
func (r *Runner) reconcileOne(in *intentState, worker int, why string) {
	r.emit(Event{Kind: EventHold, Intent: in.intent.ID, Worker: worker, Class: in.class, Checkpoint: in.checkpoint,
		Note: fmt.Sprintf("%s: no resend, %s; reconciling instead", in.intent.ID, why)})
	r.readBack(in)
}

// judgeRead settles an intent from a read-back, where the read-back can.
func (r *Runner) judgeRead(in *intentState, found []ledger.Object, ev *Event) {
	if in.checkpoint == Delivered || in.checkpoint == Escalated || in.checkpoint == Planned {
		return
	}
	if in.class == KnownFailureBeforeExecution && len(found) == 0 {
		return
	}
	if r.s.Contract == ledger.None && in.class == Unknown {
		// Without a key contract retries are barred once the outcome is
		// unknown: the read-back is evidence for a person, not a verdict.
		ev.Class = in.class
		ev.Note += "; with no key contract this is evidence for a person, not a settlement"
		return
	}
	switch {
	case len(found) == 1 && r.foreign(in, found[0].ID) != "":
		r.emit(*ev)
		*ev = Event{}
		r.escalate(in, r.foreign(in, found[0].ID))
	case len(found) > 1:
		r.emit(*ev)
		*ev = Event{}
		r.escalate(in, fmt.Sprintf("the read-back found %d objects for one intent", len(found)))
	case len(found) == 1 && found[0].Status == ledger.Succeeded:
		r.emit(*ev)
		*ev = Event{}
		in.class = KnownTerminal
		r.setCheckpoint(in, Reconciled, fmt.Sprintf("the read-back confirms %s succeeded", found[0].ID))
		r.deliver(in, found[0].ID)
	case len(found) == 1 && found[0].Status == ledger.Failed:
		r.emit(*ev)
		*ev = Event{}
		r.failedAfterExecution(in, found[0].ID)
	case len(found) == 1:
		in.class = RecordedNotTerminal
		in.belief = BelievesPending
		ev.Class = in.class
	default:
		// An empty read-back is a snapshot: it shows nothing while the
		// original could still commit, so the intent stays unknown.
		ev.Class = in.class
		ev.Note += "; an empty read-back does not prove failure"
	}
}

// reconcileAll is what a restarted caller does before sending anything:
// read back every intent that is not settled.
func (r *Runner) reconcileAll() {
	for _, in := range r.intents {
		switch in.checkpoint {
		case Submitted, Committed, UnknownState:
			in.class = Unknown
			if in.checkpoint == Committed {
				in.class = RecordedNotTerminal
			}
			r.readBack(in)
		}
	}
}

// guardedFinish reconciles every open intent once the clock has settled and
// escalates what the read-back cannot settle.
func (r *Runner) guardedFinish() {
	for _, in := range r.intents {
		switch in.checkpoint {
		case Submitted, Committed, UnknownState:
		default:
			continue
		}
		found := r.readBack(in)
		switch in.checkpoint {
		case Delivered, Escalated, FailedCheckpoint:
			continue
		}
		reason := "reconciliation could not settle the outcome before the run ended"
		if len(found) == 0 {
			reason = "the read-back finds no object for it, and nothing proves the original cannot still commit"
		}
		if why, ok := r.sameKeyRetry(in); !ok && len(found) == 0 {
			reason += "; no resend was safe: " + why
		}
		r.escalate(in, reason)
	}
}

// escalate hands the intent to a person with the evidence bundle.
func (r *Runner) escalate(in *intentState, reason string) {
	in.belief = BelievesEscalated
	// The key a person looks up at the provider: the last one sent, or the
	// intent's own when nothing was sent.
	in.evidence.Key = in.key
	if n := len(in.evidence.Attempts); n > 0 {
		in.evidence.Key = in.evidence.Attempts[n-1].Key
	}
	if r.s.Contract == ledger.None {
		in.evidence.Key = ""
	}
	in.evidence.Reason = reason
	// The objects a person is handed are the ones a read-back found: read
	// now unless the last read-back is from this very tick.
	reads := in.evidence.Reads
	if len(reads) == 0 || reads[len(reads)-1].Tick != r.led.Now() {
		ev := r.record(in, r.led.Find(in.intent.ID), "read-back for "+in.intent.ID+", for the person it goes to")
		ev.Class, ev.Checkpoint = in.class, in.checkpoint
		r.emit(ev)
		reads = in.evidence.Reads
	}
	in.evidence.Objects = append([]EvidenceObject{}, reads[len(reads)-1].Found...)
	in.checkpoint = Escalated
	r.emit(Event{Kind: EventEscalate, Intent: in.intent.ID, Class: in.class, Checkpoint: Escalated, Note: "escalated: " + reason,
		Say: fmt.Sprintf("I've passed the %s to a person to check, with everything I know. I won't retry it myself.", in.label())})
}
