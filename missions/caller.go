package missions

import "github.com/replaylab/replaylab/ledger"

// IntentState is a caller's durable record of one intent: what survives a
// restart of the caller process.
type IntentState struct {
	Intent  *Intent
	Digest  string
	Payload string
	// Key is the key minted when the intent was recorded; minted, 1 +
	// its number (see callerBase.mintKey).
	Key    string
	minted int32
	// hashKey is the key a hash of the intent's payload gives.
	hashKey string
	Budget  int
	Sent    int

	Belief     Belief
	Checkpoint Checkpoint
	Class      Class

	// FirstSent is the tick of the first send; -1 before.
	FirstSent int
	// ReplayedError: a same-key retry got the saved error back again.
	ReplayedError bool
	// InFlight: the last answer was the provider's documented in-flight
	// answer, told apart from a server error: wait, then resend under
	// the same key.
	InFlight bool
	// Rekeyed counts the keys minted after the first because the
	// provider made a failed key final.
	Rekeyed  int
	evidence evidence
}

// evidence is what the caller keeps for a person, in structured form; the
// words come at the end (see render).
type evidence struct {
	attempts []EvidenceAttempt
	reads    []EvidenceRead
	objects  []EvidenceObject
	key      string
	reason   Why
}

// callerBase is the durable state both policies keep, and the moves they
// share.
type callerBase struct {
	settings Settings
	intents  []IntentState
	// keys mints the intent's keys; shared by copies (see keyMint).
	keys *keyMint
	// mints is how many per-intent keys this caller has minted.
	mints int
}

func (c *callerBase) Belief(i int) Belief       { return c.intents[i].Belief }
func (c *callerBase) Intent(i int) *IntentState { return &c.intents[i] }
func (c *callerBase) appendBase(b []byte) []byte {
	b = appendU(b, uint64(c.mints))
	for i := range c.intents {
		in := &c.intents[i]
		b = append(b, beliefIndex(in.Belief), checkpointIndex(in.Checkpoint), classIndex(in.Class))
		b = appendU(b, uint64(in.Sent))
		b = appendU(b, uint64(in.FirstSent+1))
		var flags byte
		if in.ReplayedError {
			flags |= 1
		}
		if in.InFlight {
			flags |= 2
		}
		b = append(b, flags)
		if in.Rekeyed > 0 {
			b = appendU(b, uint64(in.minted))
		}
	}
	return b
}

func (c *callerBase) copyBase(src *callerBase) {
	c.settings, c.keys, c.mints = src.settings, src.keys, src.mints
	c.intents = append(c.intents[:0], src.intents...)
	for i := range c.intents {
		// Evidence is kept only while recording. Its lists are only
		// ever appended to (the objects replaced whole), so a copy
		// shares them up to their length: capped there, an append on
		// either side makes its own, and a long run's marks do not each
		// copy every attempt heard.
		e := &c.intents[i].evidence
		e.attempts = e.attempts[:len(e.attempts):len(e.attempts)]
		e.reads = e.reads[:len(e.reads):len(e.reads)]
		e.objects = e.objects[:len(e.objects):len(e.objects)]
	}
}

// cloneBatch makes n copies of c whose records of intents share one
// allocation: for a driver that keeps many callers (the explorer).
func cloneBatch(c Caller, n int) []Caller {
	out := make([]Caller, n)
	bases := make([]*callerBase, n)
	var src *callerBase
	switch c := c.(type) {
	case *naiveCaller:
		cs := make([]naiveCaller, n)
		for i := range cs {
			out[i], bases[i] = &cs[i], &cs[i].callerBase
		}
		src = &c.callerBase
	case *guardedCaller:
		cs := make([]guardedCaller, n)
		for i := range cs {
			out[i], bases[i] = &cs[i], &cs[i].callerBase
		}
		src = &c.callerBase
	default:
		for i := range out {
			out[i] = c.Clone()
		}
		return out
	}
	k := len(src.intents)
	slab := make([]IntentState, n*k)
	for i, b := range bases {
		b.intents = slab[i*k : i*k : (i+1)*k]
		b.copyBase(src)
	}
	return out
}

func appendU(b []byte, u uint64) []byte {
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

func beliefIndex(b Belief) byte {
	switch b {
	case BelievesDone:
		return 1
	case BelievesFailed:
		return 2
	case BelievesPending:
		return 3
	case BelievesUnknown:
		return 4
	case BelievesEscalated:
		return 5
	}
	return 0
}

func checkpointIndex(c Checkpoint) byte {
	for i, cp := range []Checkpoint{Planned, Approved, Submitted, Committed, Reconciled, Delivered, FailedCheckpoint, UnknownState, Escalated} {
		if cp == c {
			return byte(i + 1)
		}
	}
	return 0
}

func classIndex(c Class) byte {
	switch c {
	case KnownFailureBeforeExecution:
		return 1
	case RecordedNotTerminal:
		return 2
	case KnownTerminal:
		return 3
	case Unknown:
		return 4
	}
	return 0
}

// NewCaller returns the caller for s.Policy, with a durable record of each
// of m's intents and the number of turns the schedule plans for each.
func NewCaller(m *Mission, s Settings) Caller {
	return newCaller(m, s, offeredAttempts(m.Schedule), nil)
}

// newCaller is NewCaller with the turns the schedule offers counted, and
// the keys of s's seed minted so far by keys, when it is not nil.
func newCaller(m *Mission, s Settings, offered map[string]int, keys *keyMint) Caller {
	if keys == nil {
		keys = newKeyMint(s.Seed)
	}
	base := callerBase{settings: s, keys: keys}
	base.intents = make([]IntentState, len(m.Intents))
	for i := range m.Intents {
		in := &m.Intents[i]
		st := &base.intents[i]
		*st = IntentState{
			Intent:     in,
			Payload:    NormalizePayload(in.Payload),
			Digest:     Digest(in.Op, in.Principal, in.Payload),
			Belief:     BelievesFailed,
			Checkpoint: Planned,
			FirstSent:  -1,
			Budget:     offered[in.ID],
		}
		if s.MaxAttempts > 0 {
			st.Budget = s.MaxAttempts
		}
		st.hashKey = payloadHashKey(st.Digest)
		// The key is minted once, when the intent is recorded.
		st.Key, st.minted = base.mintKey(st.Digest)
	}
	if s.Policy == Guarded {
		return &guardedCaller{callerBase: base}
	}
	return &naiveCaller{callerBase: base}
}

// mintKey makes a key: the next from the seeded generator for per-intent
// keys, from the payload digest for payload-hash keys. minted is 1 + the
// key's number among the seed's keys (see keyMint.number), 0 for a key
// not minted.
func (c *callerBase) mintKey(digest string) (key string, minted int32) {
	if c.settings.KeySource == KeyPayloadHash {
		return payloadHashKey(digest), 0
	}
	key, n := c.keys.nth(c.mints)
	c.mints++
	return key, int32(n) + 1
}

// attemptKey is the key for a new send: the one minted with the intent when
// keys are stable, a fresh one otherwise, or the payload's hash; and
// minted, as mintKey gives it.
func (c *callerBase) attemptKey(w Wire, in *IntentState, t Turn) (key string, minted int32) {
	digest, hashKey := in.Digest, in.hashKey
	if len(t.Payload) > 0 {
		digest = t.Digest
		hashKey = payloadHashKey(digest)
	}
	if c.settings.KeySource == KeyPayloadHash {
		return hashKey, 0
	}
	if c.settings.StableKeys {
		return in.Key, in.minted
	}
	return c.mintKey(digest)
}

// payloadHashKey is the key a hash of the payload gives: the wrong way to
// make keys, since two intended actions alike share it.
func payloadHashKey(digest string) string { return "ph_" + digest[:10] }

// budgetLeft says whether the caller may still send for the intent.
func (c *callerBase) budgetLeft(w Wire, in *IntentState) (Why, bool) {
	if in.Sent >= in.Budget {
		return Why{Code: whyBudget, N: in.Budget}, false
	}
	if c.settings.Deadline > 0 && w.Now() >= c.settings.Deadline {
		return Why{Code: whyDeadline, N: c.settings.Deadline}, false
	}
	return Why{}, true
}

// sendTurn is the send both policies make once they decide to: within the
// budget (else the turn is held), with the key the settings give, recorded
// as submitted. It reports false when the budget held it back.
func (c *callerBase) sendTurn(w Wire, i int, t Turn) (Reply, bool) {
	in := &c.intents[i]
	if why, ok := c.budgetLeft(w, in); !ok {
		c.hold(w, i, t.Worker, why)
		return Reply{}, false
	}
	key, minted := c.attemptKey(w, in, t)
	t.minted = minted
	c.submit(w, i, key, minted)
	return c.send(w, i, key, t), true
}

// retriesAhead says whether the caller expects another try: budget left and
// a turn still ahead in the schedule.
func retriesAhead(in *IntentState, t Turn) bool { return in.Sent < in.Budget && t.Ahead > 0 }

func (c *callerBase) hold(w Wire, i, worker int, why Why) {
	in := &c.intents[i]
	if w.Recording() {
		w.LogIntent(i, EventHold, worker, in.Checkpoint, "", why)
	}
}

// setCheckpoint records a change of the intent's durable state.
func (c *callerBase) setCheckpoint(w Wire, i int, cp Checkpoint, why Why) {
	in := &c.intents[i]
	if in.Checkpoint == cp {
		return
	}
	in.Checkpoint = cp
	if w.Recording() {
		w.LogIntent(i, EventCheckpoint, 0, cp, in.Class, why)
	}
}

// submit records, before a send, that the intent is approved and
// submitted, with the key the send will carry.
func (c *callerBase) submit(w Wire, i int, key string, minted int32) {
	in := &c.intents[i]
	if in.Checkpoint == Planned {
		c.setCheckpoint(w, i, Approved, Why{Code: whyApproved})
	}
	in.Checkpoint = Submitted
	if !w.Recording() {
		return
	}
	why := Why{Code: whySubmitted, A: key, minted: minted}
	if prof, _ := w.Profile(); prof.Keyless() {
		why = Why{Code: whySubmittedNoKey}
	}
	w.LogIntent(i, EventCheckpoint, 0, Submitted, in.Class, why)
}

// send puts one attempt on the wire and keeps what was heard as evidence.
func (c *callerBase) send(w Wire, i int, key string, t Turn) Reply {
	in := &c.intents[i]
	in.Sent++
	if in.FirstSent < 0 {
		in.FirstSent = w.Now()
	}
	if prof, _ := w.Profile(); prof.Keyless() {
		key = "" // the provider accepts no key, so none is sent
	}
	rep := w.Send(i, key, t)
	// The evidence is for a person, and only the guarded caller ever
	// hands an intent to one.
	if w.Recording() && c.settings.Policy == Guarded {
		payload := in.Payload
		if len(t.Payload) > 0 {
			payload = NormalizePayload(mergePayload(in.Intent.Payload, t.Payload))
		}
		heard := EvidenceAttempt{Attempt: rep.Attempt, Tick: w.Now(), Key: key, Payload: payload, Observed: rep.Observation(c.profile(w))}
		if rep.Heard && !rep.Crashed {
			// The evidence holds what the caller heard: a timeout is a
			// record of not knowing, not of what the provider did.
			resp := rep.Response()
			heard.Response = &resp
		}
		in.evidence.attempts = append(in.evidence.attempts, heard)
	}
	return rep
}

// readBack lists the intent's objects and logs the read, not yet judged:
// the event is returned for the caller to complete and log.
func (c *callerBase) readBack(w Wire, i int, forPerson bool) ([]ObjectView, Event) {
	in := &c.intents[i]
	// What ReadBack returns holds until the next read-back.
	found, obs := w.ReadBack(in.Intent.ID, forPerson)
	ev := Event{Kind: EventRead, Intent: in.Intent.ID, Why: Why{Code: whyRead}}
	if forPerson {
		ev.Why.Code = whyReadForPerson
	}
	if obs != ObservedSuccess {
		// A read that failed or never answered: the caller learns
		// nothing from it, and says so.
		ev.Why.Obs = obs
		return nil, ev
	}
	if w.Recording() {
		read := EvidenceRead{Tick: w.Now(), Found: make([]EvidenceObject, 0, len(found))}
		for _, o := range found {
			read.Found = append(read.Found, EvidenceObject{Object: o.ID, Status: o.Status})
		}
		in.evidence.reads = append(in.evidence.reads, read)
		ev.Why.Found = read.Found
	}
	return found, ev
}

func (c *callerBase) deliver(w Wire, i int, obj ledger.ObjectID) {
	in := &c.intents[i]
	in.Belief = BelievesDone
	in.Class = KnownTerminal
	c.setCheckpoint(w, i, Delivered, Why{Code: whyDelivered, Obj: obj})
	w.Say(i, Said{Code: sayDone, Obj: obj})
}

// profile is the provider's documented contract, as the wire gives it.
func (c *callerBase) profile(w Wire) *ledger.Profile {
	p, _ := w.Profile()
	return p
}
