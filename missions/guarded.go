package missions

import "github.com/replaylab/replaylab/ledger"

// guardedCaller is the executor and reconciler from the test matrix: it
// classifies every attempt, never resends while the outcome is unknown or
// pending except with the same key inside the safe retry window, reads the
// ledger to reconcile, and hands what it cannot settle to a person.
type guardedCaller struct{ callerBase }

// safeWindow is how long after the first send a same-key retry is safe: the
// provider's documented retention minus a margin of a fifth of it (at
// least one tick).
func safeWindow(w Wire) int {
	_, ret := w.Profile()
	return ret - max(1, ret/5)
}

func (c *guardedCaller) Turn(w Wire, i int, t Turn) {
	in := &c.intents[i]
	switch in.Checkpoint {
	case Delivered:
		c.hold(w, i, t.Worker, Why{Code: whyHoldDelivered})
		return
	case Escalated:
		c.hold(w, i, t.Worker, Why{Code: whyHoldEscalated})
		return
	case FailedCheckpoint:
		if in.Class == KnownTerminal {
			c.hold(w, i, t.Worker, Why{Code: whyHoldFailedAfter})
			return
		}
	}
	if in.Class == RecordedNotTerminal {
		// Recorded, not terminal: do not send again, poll the object.
		if w.Recording() {
			w.LogIntent(i, EventHold, t.Worker, in.Checkpoint, in.Class, Why{Code: whyPolling})
		}
		c.Read(w, i)
		return
	}
	if in.Class == Unknown {
		if why, ok := c.sameKeyRetry(w, in); !ok {
			if w.Recording() {
				w.LogIntent(i, EventHold, t.Worker, in.Checkpoint, in.Class, Why{Code: whyNoResend, Sub: why.Code, N: why.N})
			}
			c.Read(w, i)
			return
		}
	}
	rep, sent := c.sendTurn(w, i, t)
	if !sent {
		return
	}
	if rep.Crashed {
		in.Class = Unknown
		return
	}
	c.classify(w, in, rep)
	w.Classified(in.Class)
	c.afterClass(w, i, rep, t)
}

// sameKeyRetry says whether resending an unknown intent is safe now, and
// why not when it is not.
func (c *guardedCaller) sameKeyRetry(w Wire, in *IntentState) (Why, bool) {
	p := c.profile(w)
	switch {
	case p.Keyless():
		return Why{Code: whyRetryNoContract}, false
	case c.settings.KeySource == KeyPayloadHash:
		return Why{Code: whyRetryPayloadHash}, false
	case !c.settings.StableKeys:
		return Why{Code: whyRetryFreshKeys}, false
	case in.ReplayedError:
		return Why{Code: whyRetryReplayedError}, false
	case !p.SameKeySafe() && !in.InFlight:
		// The provider frees the key after some answers, so a resend
		// under it could execute a second time.
		return Why{Code: whyRetryNotKept}, false
	case w.Now()-in.FirstSent >= safeWindow(w):
		return Why{Code: whyRetryPastWindow, N: safeWindow(w)}, false
	}
	return Why{}, true
}

// classify sorts an attempt into one of the four classes, from the reply.
func (c *guardedCaller) classify(w Wire, in *IntentState, rep Reply) {
	prev := in.Class
	p := c.profile(w)
	obs := rep.Observation(p)
	// What only a provider that frees keys makes the caller keep (under
	// one that keeps every answer a same-key resend is safe anyway).
	in.InFlight = !p.SameKeySafe() && !p.Keyless() && obs == ObservedConflict
	switch obs {
	case ObservedSuccess:
		in.Class = KnownTerminal
	case ObservedPending:
		in.Class = RecordedNotTerminal
	case ObservedError:
		switch {
		case rep.Object.Status == ledger.Failed:
			// The object exists and reached the documented state failed.
			in.Class = KnownTerminal
		case rep.Code == ledger.CodeBadRequest,
			p.FailedKey != nil && rep.Code == p.FailedKey.Status && rep.ErrorCode == p.FailedKey.Code,
			rep.Code == p.RefundLimit.Status && rep.ErrorCode == p.RefundLimit.Code:
			// A 400 is a request refused before it ran; so are the
			// provider's documented refusals of a final key and of a
			// refund past the capture.
			in.Class = KnownFailureBeforeExecution
		default:
			in.Class = Unknown
			if prev == Unknown && rep.Replayed {
				in.ReplayedError = true
			}
		}
	default: // timeout, conflict, mismatch
		in.Class = Unknown
	}
	if rep.Heard && rep.Object.ID != 0 && foreign(in, rep.Object).Code != 0 {
		// An answer about an object that is not this intent's settles
		// nothing about this intent.
		in.Class = Unknown
	}
}

// afterClass acts on the class: checkpoints, the user's message, escalation.
func (c *guardedCaller) afterClass(w Wire, i int, rep Reply, t Turn) {
	in := &c.intents[i]
	p := c.profile(w)
	obs := rep.Observation(p)
	switch {
	case obs == ObservedMismatch:
		c.escalate(w, i, Why{Code: whyMismatch})
		return
	case rep.Heard && rep.Object.ID != 0 && foreign(in, rep.Object).Code != 0:
		// Reporting it as done would invent an effect, or the wrong one.
		c.escalate(w, i, foreign(in, rep.Object))
		return
	case in.Class == KnownTerminal && obs == ObservedError:
		c.failedAfterExecution(w, i, rep.Object.ID)
		return
	case in.Class == KnownTerminal:
		// What the caller believes changes with what it records: each
		// checkpoint event carries the belief it stands for.
		in.Belief = BelievesDone
		c.setCheckpoint(w, i, Committed, Why{Code: whyConfirms, Obj: rep.Object.ID})
		c.deliver(w, i, rep.Object.ID)
		return
	case in.Class == RecordedNotTerminal:
		in.Belief = BelievesPending
		c.setCheckpoint(w, i, Committed, Why{Code: whyRecordedPending, Obj: rep.Object.ID})
		w.Say(i, Said{Code: sayPending, Obj: rep.Object.ID})
	case in.Class == KnownFailureBeforeExecution && p.FailedKey != nil && c.settings.StableKeys && c.settings.KeySource == KeyPerIntent:
		// The provider made the key final: the corrected request goes
		// under a new key, since nothing executed under the old one.
		in.Belief = BelievesFailed
		in.Key, in.minted = c.mintKey(in.Digest)
		in.Rekeyed++
		c.setCheckpoint(w, i, FailedCheckpoint, Why{Code: whyRejectedFinal, A: in.Key, minted: in.minted})
		if retriesAhead(in, t) {
			w.Say(i, Said{Code: sayRejectedRetry})
		} else {
			w.Say(i, Said{Code: sayRejected})
		}
	case in.Class == KnownFailureBeforeExecution:
		in.Belief = BelievesFailed
		c.setCheckpoint(w, i, FailedCheckpoint, Why{Code: whyRejected})
		if retriesAhead(in, t) {
			w.Say(i, Said{Code: sayRejectedRetry})
		} else {
			w.Say(i, Said{Code: sayRejected})
		}
	default:
		if prof, _ := w.Profile(); prof.Keyless() {
			in.Belief = BelievesUnknown
			c.setCheckpoint(w, i, UnknownState, Why{Code: whyUnknown})
			c.Read(w, i)
			c.escalate(w, i, Why{Code: whyNoContract})
			return
		}
		in.Belief = BelievesUnknown
		c.setCheckpoint(w, i, UnknownState, Why{Code: whyUnknownObs, Obs: obs})
		if obs == ObservedConflict {
			w.Say(i, Said{Code: sayProcessing})
		} else {
			w.Say(i, Said{Code: sayDontKnow})
		}
	}
}

// foreign says why an object the provider named is not this intent's
// result, or a zero Why when it is: it must be linked to the intent by the
// metadata the caller attached, and carry the intent's own parameters
// (target and amount included).
func foreign(in *IntentState, o ObjectView) Why {
	switch {
	case o.Intent != in.Intent.ID:
		return Why{Code: whyForeignIntent, Obj: o.ID}
	case o.Digest != in.Digest:
		return Why{Code: whyForeignParams, Obj: o.ID, A: o.Payload, B: in.Payload}
	}
	return Why{}
}

// failedAfterExecution records a known failure after execution: the object
// reached the terminal state failed.
func (c *guardedCaller) failedAfterExecution(w Wire, i int, obj ledger.ObjectID) {
	in := &c.intents[i]
	in.Class = KnownTerminal
	in.Belief = BelievesFailed
	c.setCheckpoint(w, i, FailedCheckpoint, Why{Code: whyEndedFailed, Obj: obj})
	w.Say(i, Said{Code: sayEndedFailed, Obj: obj})
}

// Read is a read-back; the guarded caller settles what it can settle.
func (c *guardedCaller) Read(w Wire, i int) { c.read(w, i) }

// read reads back and judges, and says how many objects it found: -1
// when the read failed or never answered.
func (c *guardedCaller) read(w Wire, i int) int {
	in := &c.intents[i]
	found, ev := c.readBack(w, i, false)
	if ev.Why.Obs != "" {
		// The read failed or never answered: nothing to judge.
		ev.Class, ev.Checkpoint = in.Class, in.Checkpoint
		w.Log(ev)
		return -1
	}
	n := len(found)
	c.judgeRead(w, i, found, &ev)
	ev.Checkpoint = in.Checkpoint
	if ev.Kind != "" {
		w.Log(ev)
	}
	return n
}

// judgeRead settles an intent from a read-back, where the read-back can.
func (c *guardedCaller) judgeRead(w Wire, i int, found []ObjectView, ev *Event) {
	in := &c.intents[i]
	if in.Checkpoint == Delivered || in.Checkpoint == Escalated || in.Checkpoint == Planned {
		return
	}
	if in.Class == KnownFailureBeforeExecution && len(found) == 0 {
		return
	}
	if prof, _ := w.Profile(); prof.Keyless() && in.Class == Unknown {
		// Without a key contract retries are barred once the outcome is
		// unknown: the read-back is evidence for a person, not a verdict.
		ev.Class = in.Class
		ev.Why.Tail = whyTailEvidenceOnly
		return
	}
	settle := func() {
		w.Log(*ev)
		*ev = Event{}
	}
	switch {
	case len(found) == 1 && foreign(in, found[0]).Code != 0:
		why := foreign(in, found[0])
		settle()
		c.escalate(w, i, why)
	case len(found) > 1:
		n := len(found)
		settle()
		c.escalate(w, i, Why{Code: whyManyObjects, N: n})
	case len(found) == 1 && found[0].Status == ledger.Succeeded:
		id := found[0].ID
		settle()
		in.Class, in.Belief = KnownTerminal, BelievesDone
		c.setCheckpoint(w, i, Reconciled, Why{Code: whyReadConfirms, Obj: id})
		c.deliver(w, i, id)
	case len(found) == 1 && found[0].Status == ledger.Failed:
		id := found[0].ID
		settle()
		c.failedAfterExecution(w, i, id)
	case len(found) == 1:
		in.Class = RecordedNotTerminal
		in.Belief = BelievesPending
		ev.Class = in.Class
	default:
		// An empty read-back is a snapshot: it shows nothing while the
		// original could still commit, so the intent stays unknown.
		ev.Class = in.Class
		ev.Why.Tail = whyTailEmptyNotProof
	}
}

// Restarted is what a restarted caller does before sending anything: read
// back every intent that is not settled.
func (c *guardedCaller) Restarted(w Wire) {
	for i := range c.intents {
		in := &c.intents[i]
		switch in.Checkpoint {
		case Submitted, Committed, UnknownState:
			in.Class = Unknown
			if in.Checkpoint == Committed {
				in.Class = RecordedNotTerminal
			}
			c.read(w, i)
		}
	}
}

// Finish reconciles every open intent once the clock has settled and
// escalates what the read-back cannot settle.
func (c *guardedCaller) Finish(w Wire) {
	for i := range c.intents {
		in := &c.intents[i]
		switch in.Checkpoint {
		case Submitted, Committed, UnknownState:
		default:
			continue
		}
		found := c.read(w, i)
		switch in.Checkpoint {
		case Delivered, Escalated, FailedCheckpoint:
			continue
		}
		reason := Why{Code: whyUnsettled}
		if found < 0 {
			reason.Code = whyReadFailed
		}
		if found == 0 {
			reason.Code = whyNothingFound
			if why, ok := c.sameKeyRetry(w, in); !ok {
				reason.Sub, reason.N = why.Code, why.N
			}
		}
		c.escalate(w, i, reason)
	}
}

// escalate hands the intent to a person with the evidence bundle.
func (c *guardedCaller) escalate(w Wire, i int, reason Why) {
	in := &c.intents[i]
	in.Belief = BelievesEscalated
	if w.Recording() {
		ev := &in.evidence
		// The key a person looks up at the provider: the last one sent,
		// or the intent's own when nothing was sent.
		ev.key = in.Key
		if n := len(ev.attempts); n > 0 {
			ev.key = ev.attempts[n-1].Key
		}
		if prof, _ := w.Profile(); prof.Keyless() {
			ev.key = ""
		}
		ev.reason = reason
		// The objects a person is handed are the ones a read-back found:
		// read now unless the last read-back is from this very tick.
		if len(ev.reads) == 0 || ev.reads[len(ev.reads)-1].Tick != w.Now() {
			_, read := c.readBack(w, i, true)
			read.Class, read.Checkpoint = in.Class, in.Checkpoint
			w.Log(read)
		}
		ev.objects = append([]EvidenceObject{}, ev.reads[len(ev.reads)-1].Found...)
	}
	in.Checkpoint = Escalated
	if w.Recording() {
		w.LogIntent(i, EventEscalate, 0, Escalated, in.Class, reason)
	}
	w.Say(i, Said{Code: sayEscalated})
}

func (c *guardedCaller) AppendState(b []byte) []byte { return c.appendBase(append(b, 'g')) }

func (c *guardedCaller) CopyFrom(src Caller) { c.copyBase(&src.(*guardedCaller).callerBase) }

func (c *guardedCaller) Clone() Caller {
	n := &guardedCaller{}
	n.copyBase(&c.callerBase)
	return n
}
