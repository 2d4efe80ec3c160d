package missions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/replaylab/replaylab/ledger"
)

// Runner replays a mission against a fresh ledger one schedule step at a
// time. It is a pure state machine: Step moves it on, Case reads it.
type Runner struct {
	m   *Mission
	s   Settings
	led *ledger.Ledger
	rng *rand.Rand

	step    int // schedule steps done; len(schedule)+1 once settled
	attempt int // sends so far, across the mission
	events  []Event
	intents []*intentState
	byID    map[string]*intentState
	down    bool // the caller process died and has not restarted
}

// intentState is the caller's record of one intent.
type intentState struct {
	intent  *Intent
	digest  string
	payload string
	key     string // the key minted when the intent was recorded
	budget  int    // sends allowed
	offered int    // attempt steps still ahead in the schedule
	sent    int    // sends so far

	belief     Belief
	checkpoint Checkpoint
	class      Class

	firstSent int // tick of the first send; -1 before
	lastObj   ledger.ObjectID
	evidence  EvidenceBundle
	// replayedError: a same-key retry got the saved error back again.
	replayedError bool
}

// NewRunner prepares a run of m under s. Neither is modified.
func NewRunner(m *Mission, s Settings) (*Runner, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("mission %s: %w", m.ID, err)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("mission %s: %w", m.ID, err)
	}
	led, err := ledger.New(ledger.Config{Contract: s.Contract, Retention: m.Retention})
	if err != nil {
		return nil, fmt.Errorf("mission %s: %w", m.ID, err)
	}
	r := &Runner{
		m:    m,
		s:    s,
		led:  led,
		rng:  rand.New(rand.NewPCG(s.Seed, 0x5eed)),
		byID: make(map[string]*intentState, len(m.Intents)),
	}
	offered := offeredAttempts(m.Schedule)
	for i := range m.Intents {
		in := &m.Intents[i]
		st := &intentState{
			intent:     in,
			payload:    NormalizePayload(in.Payload),
			digest:     Digest(in.Op, in.Principal, in.Payload),
			belief:     BelievesFailed,
			checkpoint: Planned,
			firstSent:  -1,
			offered:    offered[in.ID],
		}
		st.budget = st.offered
		if s.MaxAttempts > 0 {
			st.budget = s.MaxAttempts
		}
		// The key is minted once, when the intent is recorded.
		st.key = r.mintKey(st, st.digest)
		st.evidence = EvidenceBundle{Intent: in.ID, Attempts: []EvidenceAttempt{}, Reads: []EvidenceRead{}, Objects: []EvidenceObject{}}
		r.intents = append(r.intents, st)
		r.byID[in.ID] = st
	}
	return r, nil
}

func offeredAttempts(steps []Step) map[string]int {
	n := make(map[string]int)
	for _, st := range steps {
		if st.Attempt != "" {
			n[st.Attempt]++
		}
		for _, t := range st.Together {
			n[t.Attempt]++
		}
	}
	return n
}

// Run replays the whole mission and returns its case.
func Run(m *Mission, s Settings) (*Case, error) {
	r, err := NewRunner(m, s)
	if err != nil {
		return nil, err
	}
	for r.Step() {
	}
	return r.Case(), nil
}

// Steps is how many times Step can move the runner: one per schedule step,
// plus one for the settling of the clock after the schedule ends.
func (r *Runner) Steps() int { return len(r.m.Schedule) + 1 }

// Done reports whether the run has ended.
func (r *Runner) Done() bool { return r.step >= r.Steps() }

// Position is how many steps have run.
func (r *Runner) Position() int { return r.step }

// Step runs the next schedule step and reports whether one ran.
func (r *Runner) Step() bool {
	if r.Done() {
		return false
	}
	r.step++
	if r.step > len(r.m.Schedule) {
		r.settle()
		return true
	}
	st := r.m.Schedule[r.step-1]
	if r.down && !st.Restart {
		r.restart("the caller process comes back up")
	}
	switch st.Kind() {
	case StepAttempt:
		r.attemptStep(st, 0)
		r.tick(1)
	case StepTogether:
		for i, t := range st.Together {
			r.attemptStep(t, i+1)
		}
		r.tick(1)
	case StepWait:
		r.emit(Event{Kind: EventWait, Note: fmt.Sprintf("the caller waits %d ticks", st.Wait)})
		r.tick(st.Wait)
	case StepRead:
		r.readBack(r.byID[st.Read])
		r.tick(1)
	case StepRestart:
		r.restart("the caller process is restarted")
		r.tick(1)
	}
	return true
}

// tick moves the clock and records what the provider did meanwhile.
func (r *Runner) tick(n int) {
	for _, ch := range r.led.Advance(n) {
		ev := Event{Intent: ch.Intent, Key: ch.Key, Provider: string(ch.Kind)}
		ev.Tick = ch.Tick
		switch ch.Kind {
		case ledger.LateCommit:
			ev.Kind = EventCommit
			ev.Note = fmt.Sprintf("the request the caller stopped waiting for commits: %s", ch.Object)
		case ledger.Resolved:
			ev.Kind = EventResolve
			ev.Note = fmt.Sprintf("%s turns %s", ch.Object, ch.Status)
		case ledger.Pruned:
			ev.Kind = EventPrune
			ev.Note = fmt.Sprintf("retention ends: the record for key %s is pruned", ch.Key)
		}
		r.emitAt(ev, ch.Effects)
	}
}

// settle runs the clock until nothing is executing or pending, so late
// commits and pending objects land, then closes the caller's books.
func (r *Runner) settle() {
	for guard := 0; guard < 10000 && r.led.Busy(); guard++ {
		r.tick(1)
	}
	r.finish()
}

// attemptStep is the caller's turn to send for an intent.
func (r *Runner) attemptStep(st Step, worker int) {
	in := r.byID[st.Attempt]
	in.offered--
	switch r.s.Policy {
	case Guarded:
		r.guardedAttempt(in, st, worker)
	default:
		r.naiveAttempt(in, st, worker)
	}
}

func (r *Runner) naiveAttempt(in *intentState, st Step, worker int) {
	if in.belief == BelievesDone {
		r.hold(in, worker, "already done; nothing is sent")
		return
	}
	if reason, ok := r.budgetLeft(in); !ok {
		r.hold(in, worker, reason)
		return
	}
	key := r.attemptKey(in, st)
	r.submit(in, key)
	ev := r.send(in, st, worker, key)
	if ev.Observed == ObservedNothing {
		r.crash(ev)
		return
	}
	r.emit(ev)
	if ev.Observed == ObservedSuccess {
		r.setCheckpoint(in, Committed, fmt.Sprintf("the provider answers with %s", ev.Response.Object))
		r.deliver(in, ev.Response.Object)
		if len(st.Payload) > 0 {
			// The words name what was sent, not what the intent said.
			r.say(in, fmt.Sprintf("Done: the %s went through (%s), sent with %s.", in.label(), ev.Response.Object, NormalizePayload(st.Payload)))
		}
		return
	}
	// The loop writes down "failed" for anything but a success, whatever
	// the provider actually did.
	in.belief = BelievesFailed
	r.setCheckpoint(in, FailedCheckpoint, "recorded as failed: "+string(ev.Observed))
	if r.retriesAhead(in) {
		r.say(in, fmt.Sprintf("Sorry, the %s failed. I'll try again.", in.label()))
	} else {
		r.say(in, fmt.Sprintf("Sorry, the %s failed, and I could not complete it.", in.label()))
	}
}

// submit records, before a send, that the intent is approved and
// submitted, with the key the send will carry: every send is a submission
// of its own.
func (r *Runner) submit(in *intentState, key string) {
	if in.checkpoint == Planned {
		r.setCheckpoint(in, Approved, "the call is approved to run")
	}
	note := "with key " + key
	if r.s.Contract == ledger.None {
		note = "without a key: the provider takes none"
	}
	in.checkpoint = Submitted
	r.emit(Event{Kind: EventCheckpoint, Intent: in.intent.ID, Checkpoint: Submitted, Class: in.class, Note: note})
}

// budgetLeft says whether the caller may still send for the intent.
func (r *Runner) budgetLeft(in *intentState) (string, bool) {
	if in.sent >= in.budget {
		return fmt.Sprintf("the budget of %d attempts is spent", in.budget), false
	}
	if r.s.Deadline > 0 && r.led.Now() >= r.s.Deadline {
		return fmt.Sprintf("the deadline (tick %d) has passed", r.s.Deadline), false
	}
	return "", true
}

// retriesAhead says whether the caller expects another try: budget left and
// an attempt still ahead in the schedule.
func (r *Runner) retriesAhead(in *intentState) bool {
	return in.sent < in.budget && in.offered > 0
}

func (r *Runner) hold(in *intentState, worker int, why string) {
	r.emit(Event{Kind: EventHold, Intent: in.intent.ID, Worker: worker, Checkpoint: in.checkpoint,
		Note: fmt.Sprintf("%s: %s", in.intent.ID, why)})
}

// attemptKey is the key for a new send: the one minted with the intent when
// keys are stable, a fresh one otherwise, or the payload's hash.
func (r *Runner) attemptKey(in *intentState, st Step) string {
	digest := in.digest
	if len(st.Payload) > 0 {
		digest = Digest(in.intent.Op, in.intent.Principal, mergePayload(in.intent.Payload, st.Payload))
	}
	if r.s.KeySource == KeyPayloadHash {
		return r.mintKey(in, digest)
	}
	if r.s.StableKeys {
		return in.key
	}
	return r.mintKey(in, digest)
}

// mintKey makes a key: from the seeded generator for per-intent keys, from
// the payload digest for payload-hash keys.
func (r *Runner) mintKey(in *intentState, digest string) string {
	if r.s.KeySource == KeyPayloadHash {
		return "ph_" + digest[:10]
	}
	return fmt.Sprintf("ik_%010x", r.rng.Uint64()>>24)
}

// send puts one attempt on the wire and returns its event, not yet emitted.
func (r *Runner) send(in *intentState, st Step, worker int, key string) Event {
	payload := in.intent.Payload
	digest := in.digest
	if len(st.Payload) > 0 {
		payload = mergePayload(payload, st.Payload)
		digest = Digest(in.intent.Op, in.intent.Principal, payload)
	}
	r.attempt++
	in.sent++
	if in.firstSent < 0 {
		in.firstSent = r.led.Now()
	}
	ev := Event{Kind: EventAttempt, Intent: in.intent.ID, Attempt: r.attempt, Worker: worker, Key: key, Fixture: st.Fixture}
	if r.s.Contract == ledger.None {
		// The provider accepts no key, so none is sent.
		ev.Key = ""
	}
	req := ledger.Request{Intent: in.intent.ID, Key: ev.Key, Digest: digest, Payload: NormalizePayload(payload)}
	var res ledger.Result
	reached := true
	switch st.Fixture {
	case TimeoutBeforeCommit:
		reached = false
	case FailureBeforeCommit:
		res = r.led.Submit(req, ledger.Execution{Kind: ledger.Reject})
	case ServerErrorAfterCommit:
		res = r.led.Submit(req, ledger.Execution{Kind: ledger.CommitServerError})
	case LateCommit:
		res = r.led.Submit(req, ledger.Execution{Kind: ledger.CommitLater, Delay: st.Delay})
	case PendingFixture:
		res = r.led.Submit(req, ledger.Execution{Kind: ledger.CommitPending, Delay: st.Delay, Terminal: st.Resolve})
	default: // success, timeout_after_commit, crash_after_send
		res = r.led.Submit(req, ledger.Execution{Kind: ledger.Commit})
	}
	if !reached {
		ev.Provider = "not_reached"
		ev.Observed = ObservedTimeout
		ev.Note = "the request is dropped on the way; the provider never sees it"
	} else {
		ev.Provider = string(res.Action)
		resp := res.Response
		ev.Response = &resp
		ev.Observed = observe(st.Fixture, res)
		ev.Note = r.providerNote(res)
		if res.Response.Object != 0 {
			in.lastObj = res.Response.Object
		}
	}
	heard := EvidenceAttempt{
		Attempt: ev.Attempt, Tick: r.led.Now(), Key: ev.Key, Payload: req.Payload,
		Observed: ev.Observed, Error: errorText(ev),
	}
	if ev.Observed != ObservedTimeout && ev.Observed != ObservedNothing {
		// The evidence holds what the caller heard: a timeout is a record
		// of not knowing, not of what the provider did.
		resp := res.Response
		heard.Response = &resp
	}
	in.evidence.Attempts = append(in.evidence.Attempts, heard)
	return ev
}

// observe is what the caller sees of an attempt, given the fixture's
// transport and the provider's answer.
func observe(f Fixture, res ledger.Result) Observation {
	switch f {
	case TimeoutAfterCommit:
		return ObservedTimeout
	case CrashAfterSend:
		return ObservedNothing
	}
	switch res.Action {
	case ledger.Executing:
		return ObservedTimeout
	case ledger.Conflict:
		return ObservedConflict
	case ledger.Mismatch:
		return ObservedMismatch
	}
	switch {
	case res.Response.Code != ledger.CodeOK, res.Response.Status == ledger.Failed:
		return ObservedError
	case res.Response.Status == ledger.Pending:
		return ObservedPending
	}
	return ObservedSuccess
}

func (r *Runner) providerNote(res ledger.Result) string {
	obj := res.Response.Object
	switch res.Action {
	case ledger.Rejected:
		return "the provider rejects the request before executing it; nothing is saved"
	case ledger.Committed:
		if res.Response.Code == ledger.CodeServerError {
			return fmt.Sprintf("the provider commits %s but saves a 500 as the response", obj)
		}
		if res.Response.Status == ledger.Pending {
			return fmt.Sprintf("the provider creates %s in pending", obj)
		}
		return fmt.Sprintf("the provider commits %s", obj)
	case ledger.Executing:
		return "the provider is still executing when the caller stops waiting"
	case ledger.Replayed:
		if r.s.Contract == ledger.V2 && obj != 0 {
			return fmt.Sprintf("the key is known: the provider returns the updated response, %s %s; no new effect", obj, res.Response.Status)
		}
		if obj != 0 {
			return fmt.Sprintf("the key is known: the provider replays the saved %d for %s; no new effect", res.Response.Code, obj)
		}
		return fmt.Sprintf("the key is known: the provider replays the saved %d; no new effect", res.Response.Code)
	case ledger.Completed:
		return fmt.Sprintf("the key is known: the provider finishes what the earlier attempt left open and returns the updated response for %s; no new effect", obj)
	case ledger.Conflict:
		return "the same key is still executing: the provider answers 409 conflict and saves nothing; this send was not executed"
	case ledger.Mismatch:
		return "the key was saved with a different payload: the provider rejects the request"
	}
	return string(res.Action)
}

func errorText(ev Event) string {
	switch ev.Observed {
	case ObservedSuccess, ObservedPending:
		return ""
	case ObservedTimeout:
		return "timeout"
	case ObservedNothing:
		return "caller crashed before recording the reply"
	}
	if ev.Response != nil {
		return fmt.Sprintf("%s (%d)", ev.Observed, ev.Response.Code)
	}
	return string(ev.Observed)
}

// crash records an attempt whose reply died with the caller process.
func (r *Runner) crash(ev Event) {
	ev.Note += "; the caller process dies before recording the reply"
	r.emit(ev)
	r.down = true
}

// restart brings the caller process back. What it kept is what was
// durable: intents, their keys and their checkpoints. The naive agent's
// conversation ends with the send, so it believes nothing happened.
func (r *Runner) restart(why string) {
	r.down = false
	r.emit(Event{Kind: EventRestart, Note: why})
	if r.s.Policy == Guarded {
		r.reconcileAll()
	}
}

// readBack is the caller reading the ledger for objects linked to an
// intent; the guarded caller settles what the read-back can settle.
func (r *Runner) readBack(in *intentState) []ledger.Object {
	found := r.led.Find(in.intent.ID)
	ev := r.record(in, found, "read-back for "+in.intent.ID)
	if r.s.Policy == Guarded {
		r.judgeRead(in, found, &ev)
	}
	ev.Checkpoint = in.checkpoint
	if ev.Kind != "" {
		r.emit(ev)
	}
	return found
}

// record keeps a read-back in the intent's evidence and returns its event,
// not yet emitted.
func (r *Runner) record(in *intentState, found []ledger.Object, what string) Event {
	read := EvidenceRead{Tick: r.led.Now(), Found: []EvidenceObject{}}
	for _, o := range found {
		read.Found = append(read.Found, EvidenceObject{Object: o.ID, Status: o.Status})
	}
	read.Summary = describeFound(found)
	in.evidence.Reads = append(in.evidence.Reads, read)
	return Event{Kind: EventRead, Intent: in.intent.ID, Note: what + ": " + read.Summary}
}

func describeFound(found []ledger.Object) string {
	if len(found) == 0 {
		return "no objects"
	}
	s := ""
	for i, o := range found {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %s", o.ID, o.Status)
	}
	return s
}

// finish closes the books when the run ends.
func (r *Runner) finish() {
	if r.s.Policy == Guarded {
		r.guardedFinish()
	}
}

func (r *Runner) emit(ev Event) {
	ev.Tick = r.led.Now()
	r.emitAt(ev, r.led.Effects())
}

// emitAt records an event with the ledger's effect count right after it.
func (r *Runner) emitAt(ev Event, effects int) {
	ev.Seq = len(r.events) + 1
	ev.Step = r.step
	ev.Effects = effects
	r.events = append(r.events, ev)
}

func (in *intentState) label() string {
	if in.intent.Label != "" {
		return in.intent.Label
	}
	return in.intent.Op + " " + in.intent.ID
}

// Case returns the record of the run so far.
func (r *Runner) Case() *Case {
	snap := r.led.Snapshot()
	c := &Case{
		Mission:  *r.m,
		Settings: r.s,
		Events:   append([]Event{}, r.events...),
		Ledger:   snap,
		Outcome:  Outcome{Effects: snap.Effects, Intended: len(r.intents), Verdicts: []IntentVerdict{}},
	}
	for _, o := range snap.Objects {
		if o.Status == ledger.Succeeded {
			c.Outcome.Succeeded++
		}
	}
	for _, in := range r.intents {
		live := 0
		for _, o := range snap.Objects {
			if o.Intent == in.intent.ID && o.Status != ledger.Failed {
				live++
			}
		}
		c.Outcome.Verdicts = append(c.Outcome.Verdicts, IntentVerdict{
			Intent: in.intent.ID, Verdict: judge(in.belief, live), Effects: live, Belief: in.belief,
		})
		if in.belief == BelievesEscalated {
			c.Outcome.Evidence = append(c.Outcome.Evidence, in.evidence)
		}
	}
	return c
}

// judge compares the caller's belief with the ledger's truth.
func judge(b Belief, effects int) Verdict {
	switch {
	case b == BelievesEscalated:
		return EscalatedV
	case effects > 1:
		return Duplicate
	case b == BelievesDone && effects == 1:
		return ExactlyOnce
	case b == BelievesDone:
		return Phantom
	case effects == 0:
		return FailedCleanly
	}
	return HiddenEffect
}

// Digest binds operation type, principal and normalized payload.
func Digest(op, principal string, payload map[string]string) string {
	// JSON quotes every part and sorts the payload's fields, so no two
	// different requests share an encoding.
	// Strings and a map of strings always encode, so there is no error.
	enc, _ := json.Marshal([]any{op, principal, payload})
	sum := sha256.Sum256(enc)
	return hex.EncodeToString(sum[:8])
}

func mergePayload(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
