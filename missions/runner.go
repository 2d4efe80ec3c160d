package missions

// The runner: it drives a mission's schedule through the world table and
// the ledger, hands the caller its turns, read-backs and restarts, and
// keeps what happened as the case's events.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"

	"github.com/replaylab/replaylab/internal/jsontext"
	"github.com/replaylab/replaylab/ledger"
)

// Runner is the simulated world: it plays a mission's schedule, meeting
// each send with its fixture's world and the ledger, and hands the caller
// its turns. It is a pure state machine: Step moves it on, Case reads it.
type Runner struct {
	m      *Mission
	s      Settings
	led    *ledger.Ledger
	caller Caller

	step    int // schedule steps done; len(schedule)+1 once settled
	attempt int // sends so far, across the mission
	reads   int // the caller's reads so far: the next meets Reads[reads]
	// lagged is how far behind the last read showed the ledger, for the
	// words of its event: the caller cannot tell, a person reading can.
	lagged int
	down   bool
	// ahead counts, per intent, the turns still ahead in the schedule;
	// offered, the turns the whole schedule offers.
	ahead, offered []int
	index          map[string]int
	lastIntent     int
	// attempts holds, per schedule step, the place of the intent it
	// offers a send for (-1 for a step that offers none, or several):
	// made once, with the mission, since a long mission looks it up at
	// every step.
	attempts []int32
	// fixtures holds, per schedule step, the code of its fixture, and
	// curFixture that of the turn's.
	fixtures   []uint8
	curFixture uint8
	// keys mints the keys of the run's seed, for its callers.
	keys *keyMint
	// turns is offered by intent id, as the caller takes it.
	turns map[string]int
	// digests holds, per schedule step (and per together part), the digest
	// of its payload override, computed once.
	digests map[int]string
	cur     *Step
	tally   tally

	quiet bool
	// log holds every event so far, as records; words is what makes
	// events of them when they are read.
	log   eventLog
	words Words
	// marks are saved states to rewind to, in the order of their steps,
	// every markEvery steps where the run was moved back and sparser
	// elsewhere (see mark), kept once Seek is used (a plain run keeps
	// none).
	marks     []mark
	markEvery int
	// reached is the furthest step the runner has run.
	reached int
	marking bool
	changes []ledger.Change
	objs    []ledger.Object
	views   []ObjectView
}

// NewRunner prepares a run of m under s. Neither is modified.
func NewRunner(m *Mission, s Settings) (*Runner, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("mission %s: %w", m.ID, err)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("mission %s: %w", m.ID, err)
	}
	led, err := m.newLedger(s)
	if err != nil {
		return nil, fmt.Errorf("mission %s: %w", m.ID, err)
	}
	offered := offeredAttempts(m.Schedule)
	r := &Runner{m: m, turns: offered, index: make(map[string]int, len(m.Intents))}
	for i, in := range m.Intents {
		r.index[in.ID] = i
	}
	r.attempts, r.fixtures = make([]int32, len(m.Schedule)), make([]uint8, len(m.Schedule))
	for i, st := range m.Schedule {
		r.fixtures[i] = fixtureNames.code(st.Fixture)
		r.attempts[i] = -1
		if st.Attempt != "" {
			r.attempts[i] = int32(r.index[st.Attempt])
		}
		r.addDigest(stepRef(i, 0), st)
		for j, t := range st.Together {
			r.addDigest(stepRef(i, j+1), t)
		}
	}
	r.start(s, led)
	return r, nil
}

// Under prepares a run of the same mission under other settings. What
// comes of the mission alone (its check, its digests, the turns it
// offers) is shared with r, not made again, which is what a driver that
// toggles a setting on a long mission waits for.
func (r *Runner) Under(s Settings) (*Runner, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("mission %s: %w", r.m.ID, err)
	}
	led, err := r.m.newLedger(s)
	if err != nil {
		return nil, fmt.Errorf("mission %s: %w", r.m.ID, err)
	}
	// The keys of a seed are the same in every run, so a run under
	// other settings formats none of them again; runners that share a
	// mint are for one goroutine.
	n := &Runner{m: r.m, turns: r.turns, index: r.index, attempts: r.attempts, fixtures: r.fixtures, digests: r.digests, keys: r.keys}
	n.start(s, led)
	return n, nil
}

// start sets the runner before its first step under s, on led.
func (r *Runner) start(s Settings, led *ledger.Ledger) {
	m := r.m
	if r.keys == nil || r.keys.seed != s.Seed {
		r.keys = newKeyMint(s.Seed)
	}
	r.s, r.led, r.caller = s, led, newCaller(m, s, r.turns, r.keys)
	r.words = Words{Mission: m, Settings: s}
	// Rewinding replays at most markEvery steps from a mark where the
	// run was moved back before, and fewer than markSparse*markEvery the
	// first time (see mark); at most about sixteen marks are kept, so a
	// long mission's marks stay small.
	r.markEvery = max(64, (len(m.Schedule)+15)/16)
	// How many events a run makes depends on its settings (one a step
	// for a caller that holds, four for one that resends and sees its
	// keys pruned): the first few thousand are room enough to say, and
	// the room then grows to what the run so far foretells (grow).
	r.log = eventLog{}
	r.log.grow(min(3*len(m.Schedule)+6, firstEvents))
	k := len(m.Intents)
	counts := make([]int, 3*k)
	r.offered, r.ahead, r.tally.live = counts[:k:k], counts[k:2*k:2*k], counts[2*k:]
	for i, in := range m.Intents {
		r.offered[i] = r.turns[in.ID]
	}
	copy(r.ahead, r.offered)
}

func stepRef(step, part int) int { return step*(MaxWorkers+1) + part }

func (r *Runner) addDigest(ref int, st Step) {
	if len(st.Payload) == 0 || st.Attempt == "" {
		return
	}
	if r.digests == nil {
		r.digests = map[int]string{}
	}
	in := r.m.Intents[r.index[st.Attempt]]
	r.digests[ref] = Digest(in.Op, in.Principal, mergePayload(in.Payload, st.Payload))
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

// Settings are the settings the runner runs under.
func (r *Runner) Settings() Settings { return r.s }

// Steps is how many times Step can move the runner: one per schedule step,
// plus one for the settling of the clock after the schedule ends.
func (r *Runner) Steps() int { return len(r.m.Schedule) + 1 }

// Done reports whether the run has ended.
func (r *Runner) Done() bool { return r.step >= r.Steps() }

// Position is how many steps have run.
func (r *Runner) Position() int { return r.step }

// mark is the runner's state after a step, to rewind to.
type mark struct {
	step, attempt, reads int
	down                 bool
	ahead                []int
	led                  *ledger.Mark
	caller               Caller
	// recs, texts and extras are the lengths of the event log's parts.
	recs, texts, extras int
	tally               tally
}

func (r *Runner) save() mark {
	return mark{step: r.step, attempt: r.attempt, reads: r.reads, down: r.down, ahead: append([]int{}, r.ahead...),
		led: r.led.Mark(), caller: r.caller.Clone(), recs: len(r.log.recs), texts: len(r.log.texts), extras: len(r.log.extras),
		tally: tally{live: append([]int{}, r.tally.live...), succeeded: r.tally.succeeded}}
}

func (r *Runner) load(k mark) {
	r.step, r.attempt, r.reads, r.down = k.step, k.attempt, k.reads, k.down
	r.ahead = append(r.ahead[:0], k.ahead...)
	r.led.Rewind(k.led)
	r.caller.CopyFrom(k.caller)
	r.log.truncate(k.recs, k.texts, k.extras)
	r.tally.copyFrom(&k.tally)
}

// Seek moves the runner to position pos (0 to Steps): forward by
// stepping, back by rewinding to the nearest mark before pos and stepping
// from there, so no move back costs more than markEvery steps where the
// run was moved back before, and markSparse times that the first time. A
// Case taken earlier keeps what it showed.
func (r *Runner) Seek(pos int) {
	pos = max(0, min(pos, r.Steps()))
	r.marking = true
	if pos < r.step {
		k := len(r.marks) - 1
		for k >= 0 && r.marks[k].step > pos {
			k--
		}
		if k >= 0 {
			r.load(r.marks[k])
		} else {
			r.reset()
		}
	}
	for r.step < pos && r.Step() {
	}
}

// markSparse is how many marks apart the marks are that a run makes on
// ground it has not covered before.
const markSparse = 4

// mark saves the state before the next step, to rewind to, unless a mark
// holds it already. The first time the runner passes a place it keeps
// only one mark of every markSparse: a driver that runs a long mission
// to its end under new settings (a toggle) copies the ledger a few times,
// not sixteen. Where it is moved back, the steps it replays fill in the
// marks between, so stepping back there again replays no more than
// markEvery steps.
func (r *Runner) mark() {
	k := sort.Search(len(r.marks), func(k int) bool { return r.marks[k].step >= r.step })
	if k < len(r.marks) && r.marks[k].step == r.step {
		return
	}
	if r.step >= r.reached && (r.step/r.markEvery)%markSparse != 0 {
		return
	}
	r.marks = slices.Insert(r.marks, k, r.save())
}

// reset puts the runner back before its first step.
func (r *Runner) reset() {
	r.led.Reset()
	r.caller = newCaller(r.m, r.s, r.turns, r.keys)
	r.step, r.attempt, r.reads, r.down = 0, 0, 0, false
	copy(r.ahead, r.offered)
	clear(r.tally.live)
	r.tally.succeeded = 0
	r.log.truncate(0, 0, 0)
}

// Step runs the next schedule step and reports whether one ran.
func (r *Runner) Step() bool {
	if r.Done() {
		return false
	}
	if r.marking && r.step%r.markEvery == 0 {
		r.mark()
	}
	r.step++
	r.reached = max(r.reached, r.step)
	if r.step > len(r.m.Schedule) {
		r.settle()
		return true
	}
	st := &r.m.Schedule[r.step-1]
	if r.down && !st.Restart {
		r.restart(whyComesBack)
	}
	if i := r.attempts[r.step-1]; i >= 0 {
		// The step offers one send, as most do.
		r.turn(st, int(i), r.fixtures[r.step-1], stepRef(r.step-1, 0), 0)
		r.tick(1)
		return true
	}
	switch st.Kind() {
	case StepTogether:
		for i := range st.Together {
			t := &st.Together[i]
			r.turn(t, r.index[t.Attempt], fixtureNames.code(t.Fixture), stepRef(r.step-1, i+1), i+1)
		}
		r.tick(1)
	case StepWait:
		r.emit(&Event{Kind: EventWait, Why: Why{Code: whyWait, N: st.Wait}})
		r.tick(st.Wait)
	case StepRead:
		r.caller.Read(r, r.index[st.Read])
		r.tick(1)
	case StepRestart:
		r.restart(whyRestarted)
		r.tick(1)
	}
	return true
}

// turn hands the caller its chance to send for the step's intent, the
// i-th, whose fixture has the code fixture.
func (r *Runner) turn(st *Step, i int, fixture uint8, ref, worker int) {
	r.ahead[i]--
	// Most of what the step records is about this intent.
	r.cur, r.curFixture, r.lastIntent = st, fixture, i
	t := Turn{Worker: worker, Payload: st.Payload, Ahead: r.ahead[i]}
	if len(st.Payload) > 0 {
		t.Digest = r.digests[ref]
	}
	r.caller.Turn(r, i, t)
}

// tick moves the clock and records what the provider did meanwhile.
func (r *Runner) tick(n int) {
	r.changes = r.led.AdvanceInto(r.changes[:0], n)
	for _, ch := range r.changes {
		if r.quiet {
			switch ch.Kind {
			case ledger.LateCommit:
				r.tally.created(r.intentIndex(ch.Intent), ch.Status)
			case ledger.Resolved:
				r.tally.resolved(r.intentIndex(ch.Intent), ch.Status)
			}
			continue
		}
		y := changeWhy(ch.Kind, ch.Object, ch.Key, ch.Status)
		rec := record{tick: int32(ch.Tick), effects: int32(ch.Effects), provider: providerCode(string(ch.Kind)),
			why: y.Code, obj: int32(y.Obj), whyStatus: y.Status}
		r.setText(&rec, ch.Key, y.A)
		i := r.intentIndex(ch.Intent)
		switch ch.Kind {
		case ledger.LateCommit:
			rec.kind = kindCommit
			r.tally.created(i, ch.Status)
		case ledger.Resolved:
			rec.kind = kindResolve
			r.tally.resolved(i, ch.Status)
		case ledger.Pruned:
			rec.kind = kindPrune
		}
		r.put(rec, i)
	}
}

// settle runs the clock until nothing is executing or pending, so late
// commits and pending objects land, then closes the caller's books.
func (r *Runner) settle() {
	for guard := 0; guard < 10000 && r.led.Busy(); guard++ {
		r.tick(1)
	}
	r.caller.Finish(r)
}

// restart brings the caller process back with what it kept durable.
func (r *Runner) restart(why WhyCode) {
	r.down = false
	r.emit(&Event{Kind: EventRestart, Why: Why{Code: why}})
	r.caller.Restarted(r)
}

// Now is the current tick (Wire).
func (r *Runner) Now() int { return r.led.Now() }

// Profile is the provider's documented contract and, in ticks, how long
// it keeps keys (Wire).
func (r *Runner) Profile() (*ledger.Profile, int) { return r.led.Config().Profile, r.m.Retention }

// Recording reports whether events and evidence are kept (Wire).
func (r *Runner) Recording() bool { return !r.quiet }

// Send meets one request with the current step's fixture (Wire): the
// world table says whether it reaches the provider, how the provider runs
// it, and what becomes of the reply.
func (r *Runner) Send(i int, key string, t Turn) Reply {
	st := r.cur
	in := r.caller.Intent(i)
	digest, payload := in.Digest, in.Payload
	if len(st.Payload) > 0 {
		digest = t.Digest
		if !r.quiet {
			payload = NormalizePayload(mergePayload(in.Intent.Payload, st.Payload))
		}
	}
	r.attempt++
	w := worldOf(st.Fixture)
	rep := Reply{Attempt: r.attempt}
	if !w.Reaches {
		if !r.quiet {
			r.putAttempt(i, key, t, record{provider: providerNotReached, observed: observedTimeout, why: whyDropped})
		}
		return rep
	}
	ex := w.Execution(*st)
	if len(r.m.Captured) > 0 {
		ex.Refund = r.m.charge(*in.Intent, st.Payload)
	}
	res := r.led.Submit(ledger.Request{Intent: in.Intent.ID, Key: key, Digest: digest, Payload: payload}, ex)
	resp := res.Response
	if res.Action == ledger.Committed {
		r.tally.created(i, r.led.ObjectStatus(resp.Object))
	}
	switch {
	case w.Reply == CallerCrash:
		rep.Crashed = true
		r.down = true
	case !w.Delivers(res):
		// Nothing comes back before the caller's timeout.
	default:
		rep.Heard = true
		rep.Code = resp.Code
		rep.Error = res.ErrorType()
		rep.ErrorCode = res.ErrorCode(r.led.Config().Profile)
		rep.Replayed = res.Action == ledger.Replayed
		rep.Object = r.view(resp.Object, resp.Status)
	}
	if !r.quiet {
		// The case records what the provider answered, heard or not.
		r.putAttempt(i, key, t, record{provider: providerCode(string(res.Action)), observed: observedCode(rep.Observation(r.led.Config().Profile)),
			// The provider's codes are HTTP's, three digits (see ledger).
			why: whyProvider, flags: flagResp, respCode: int16(resp.Code), obj: int32(resp.Object), respStatus: resp.Status})
	}
	return rep
}

// putAttempt records the current send for intent i, rec holding what
// the provider and the wire did with it.
func (r *Runner) putAttempt(i int, key string, t Turn, rec record) {
	rec.kind, rec.tick, rec.effects = kindAttempt, int32(r.led.Now()), int32(r.led.Effects())
	rec.attempt, rec.worker = int32(r.attempt), uint8(t.Worker)
	if key != "" && t.minted != 0 {
		// The key is kept by its number: the seed's keys are kept
		// once, and a driver compares numbers, not texts.
		rec.text, rec.flags = t.minted, rec.flags|flagKey|flagMinted
	} else {
		r.setText(&rec, key, "")
	}
	rec.fixture = r.curFixture
	r.put(rec, i)
}

// view is the object as a response body shows it, with the status the
// response gives.
func (r *Runner) view(id ledger.ObjectID, status ledger.Status) ObjectView {
	o, ok := r.led.Object(id)
	if !ok {
		return ObjectView{}
	}
	return ObjectView{ID: id, Intent: o.Intent, Payload: o.Payload, Digest: o.Digest, Status: status}
}

// ReadBack lists the objects linked to intent, as a client's list call
// returns them (Wire). A caller's read meets the mission's next read
// fault; a read for a person's evidence meets none.
func (r *Runner) ReadBack(intent string, forPerson bool) ([]ObjectView, Observation) {
	world := ReadStep{}.World()
	if !forPerson {
		if r.reads < len(r.m.Reads) {
			world = r.m.Reads[r.reads].World()
		}
		r.reads++
	}
	r.lagged = world.Lag
	r.views = r.views[:0]
	switch {
	case !world.Answered:
		return r.views, ObservedTimeout
	case world.Code != ledger.CodeOK:
		return r.views, ObservedError
	}
	r.objs = r.led.FindInto(r.objs[:0], intent)
	for _, o := range r.objs {
		if o, ok := world.Sees(o, r.led.Now()); ok {
			r.views = append(r.views, ObjectView{ID: o.ID, Intent: o.Intent, Payload: o.Payload, Digest: o.Digest, Status: o.Status})
		}
	}
	return r.views, ObservedSuccess
}

// Log records an event the caller made (Wire).
func (r *Runner) Log(ev Event) {
	if ev.Kind == EventRead && ev.Why.Code == whyRead && ev.Why.Obs == "" && r.lagged > 0 {
		// Said in the event's words, never to the caller.
		ev.Why.N = r.lagged
	}
	r.emit(&ev)
}

// Classified marks the class the caller gave the last send (Wire).
func (r *Runner) Classified(c Class) {
	if r.quiet {
		return
	}
	recs := r.log.recs
	for j := len(recs) - 1; j >= 0; j-- {
		if recs[j].kind == kindAttempt {
			recs[j].class = classNames.code(c)
			return
		}
	}
}

// The codes of the words the runner writes itself.
var (
	kindAttempt        = kindNames.code(EventAttempt)
	kindCommit         = kindNames.code(EventCommit)
	kindResolve        = kindNames.code(EventResolve)
	kindPrune          = kindNames.code(EventPrune)
	providerNotReached = providerNames.code("not_reached")
	observedTimeout    = observedNames.code(ObservedTimeout)
)

// Say attaches the agent's words to the last event about intent i (Wire).
// The event is one of this step's: the words go with what the caller just
// did. A record of an earlier step is never changed, as a log or a mark
// taken since reads it as it was; words with no event of the step about
// their intent are not kept (no caller says anything before it logs).
func (r *Runner) Say(i int, s Said) {
	if r.quiet {
		return
	}
	recs := r.log.recs
	for j := len(recs) - 1; j >= 0 && int(recs[j].step) == r.step; j-- {
		rec := &recs[j]
		if int(rec.intent) != i+1 {
			continue
		}
		r.said(rec, s)
		return
	}
}

func (r *Runner) emit(ev *Event) {
	ev.Tick = r.led.Now()
	r.emitAt(ev, r.led.Effects())
}

// emitAt records an event with the ledger's effect count right after it,
// and the caller's belief about the event's intent.
func (r *Runner) emitAt(ev *Event, effects int) {
	if r.quiet {
		return
	}
	rec := record{
		tick: int32(ev.Tick), attempt: int32(ev.Attempt), effects: int32(effects), worker: uint8(ev.Worker),
		kind: kindNames.code(ev.Kind), fixture: fixtureNames.code(ev.Fixture),
		provider: providerNames.code(ev.Provider), observed: observedNames.code(ev.Observed),
		class: classNames.code(ev.Class), checkpoint: checkpointNames.code(ev.Checkpoint),
		belief: beliefNames.code(ev.Belief),
	}
	y := &ev.Why
	r.keepWhy(&rec, ev.Key, y)
	if ev.Response != nil {
		rec.flags |= flagResp
		rec.respCode, rec.obj, rec.respStatus = int16(ev.Response.Code), int32(ev.Response.Object), ev.Response.Status
		if y.Obj != 0 {
			r.extraOf(&rec).obj = int(y.Obj)
		}
	}
	r.said(&rec, ev.Saying)
	i := -1
	if ev.Intent != "" {
		i = r.intentIndex(ev.Intent)
	}
	r.put(rec, i)
}

// LogIntent records an event about intent i made of its kind, worker,
// checkpoint, class and reason, as Log would (Wire).
func (r *Runner) LogIntent(i int, kind EventKind, worker int, cp Checkpoint, class Class, why Why) {
	if r.quiet {
		return
	}
	rec := record{
		tick: int32(r.led.Now()), effects: int32(r.led.Effects()), worker: uint8(worker),
		kind: kindCode(kind), class: classNames.code(class), checkpoint: checkpointCode(cp),
	}
	r.keepWhy(&rec, "", &why)
	r.put(rec, i)
}

// keepWhy keeps in rec the event's key and its reason y: its codes, its
// object, its text and what it rarely carries.
func (r *Runner) keepWhy(rec *record, key string, y *Why) {
	rec.obj, rec.why, rec.sub, rec.tail = int32(y.Obj), y.Code, y.Sub, y.Tail
	rec.whyObs, rec.whyStatus = observedCode(y.Obs), y.Status
	if key == "" && y.A != "" && y.minted != 0 {
		rec.text, rec.flags = y.minted, rec.flags|flagA|flagMinted
	} else {
		r.setText(rec, key, y.A)
	}
	if y.B != "" || y.Found != nil || y.N != 0 {
		x := r.extraOf(rec)
		x.b, x.found, x.n = y.B, y.Found, y.N
	}
}

// said keeps in rec what the agent says with its event: the code in the
// record, the object where it is not the record's own, the payload it
// names. What is said is kept only with its code: words with no code are
// none, whatever object they name.
func (r *Runner) said(rec *record, s Said) {
	rec.say = s.Code
	switch {
	case s.Code != sayNothing && int32(s.Obj) != rec.obj:
		x := r.extraOf(rec)
		x.sayObj, x.hasSayObj = int32(s.Obj), true
	case rec.extra != 0:
		r.log.extras[rec.extra-1].hasSayObj = false
	}
	switch {
	case rec.extra != 0:
		r.log.extras[rec.extra-1].payload = s.Payload
	case s.Payload != nil:
		r.extraOf(rec).payload = s.Payload
	}
}

// setText keeps the event's key and its Why's A in rec: in its text, or,
// where they differ, A in its extra.
func (r *Runner) setText(rec *record, key, a string) {
	switch {
	case key != "":
		rec.text, rec.flags = r.log.text(key), rec.flags|flagKey
		switch {
		case a == key:
			rec.flags |= flagA
		case a != "":
			r.extraOf(rec).a = a
		}
	case a != "":
		rec.text, rec.flags = r.log.text(a), rec.flags|flagA
	}
}

// extraOf is rec's extra, kept now if it has none. It stays good until
// the next one is kept.
func (r *Runner) extraOf(rec *record) *extra {
	if rec.extra == 0 {
		rec.extra = r.log.keep(extra{})
	}
	return &r.log.extras[rec.extra-1]
}

// put records rec, made at the current step, about intent i (or none,
// -1), with the caller's belief about it.
func (r *Runner) put(rec record, i int) {
	rec.step = int32(r.step)
	if i >= 0 {
		rec.intent = uint16(i + 1)
		rec.belief = beliefCode(r.caller.Belief(i))
	}
	if len(r.log.recs) == cap(r.log.recs) {
		r.grow()
	}
	r.log.recs = append(r.log.recs, rec)
}

// intentIndex is the place of the intent named id, or -1. The events of
// a step mostly name one intent, so the last one found is tried first.
func (r *Runner) intentIndex(id string) int {
	if id == "" {
		return -1
	}
	if k := r.lastIntent; k < len(r.m.Intents) && r.m.Intents[k].ID == id {
		return k
	}
	i, ok := r.index[id]
	if !ok {
		return -1
	}
	r.lastIntent = i
	return i
}

// firstEvents is the room a runner starts with for a long mission's
// events.
const firstEvents = 4096

// grow makes room for the events the rest of the run will likely make, at
// the rate its steps so far made them and an eighth more: a long run
// copies its events once or twice, not at every quarter of growth as
// append would, and holds little room it never uses.
func (r *Runner) grow() {
	n := len(r.log.recs)
	want := n * r.Steps() / max(1, r.step)
	r.log.grow(max(want+want/8, n+n/4) + 64)
	// The ledger's objects and the run's texts grow at their own rates,
	// foretold the same way.
	objs := r.led.Objects() * r.Steps() / max(1, r.step)
	r.led.Reserve(objs + objs/8)
	if texts := len(r.log.texts) * r.Steps() / max(1, r.step); texts > cap(r.log.texts) {
		r.log.texts = slices.Grow(r.log.texts, texts+texts/8-len(r.log.texts))
	}
}

// Case returns the record of the run so far, whole: every event with its
// words, in memory of its own.
func (r *Runner) Case() *Case {
	c := r.build(r.led.Snapshot())
	c.Events = r.eventLog().All()
	return c
}

// Logged is Case with the events left in the runner's records, read
// through Log: a driver keeps the whole run (a long one makes tens of
// thousands of events) and makes whole events only of those it shows.
// Its ledger and its log read the same however the runner moves (the
// ledger shares what the runner's never writes again; see ledger.Kept),
// and it must not be changed. Whole makes it a Case.
func (r *Runner) Logged() *Case { return r.live(r.led.Kept()) }

// View is Case for a driver that shows the run and moves on (the lab): the
// ledger's objects are shared rather than copied, and the events are read
// from the runner's own records through Log, with no Events made, so it
// costs what the step added, not what the run holds. Its ledger stays
// true until the runner moves; its log, always.
func (r *Runner) View() *Case { return r.live(r.led.View()) }

// live is the case of the run so far on snap, its events read from the
// runner's records.
func (r *Runner) live(snap ledger.Snapshot) *Case {
	c := r.build(snap)
	l := r.eventLog()
	c.live = &l
	return c
}

// eventLog is the run's events so far, read from the runner's records.
// It shares them, read only: the runner only appends to them, and what
// it replays after a rewind is what was there.
func (r *Runner) eventLog() EventLog {
	l := &r.log
	return EventLog{recs: l.recs[:len(l.recs):len(l.recs)], src: &logSource{
		texts:  l.texts[:len(l.texts):len(l.texts)],
		extras: l.extras[:len(l.extras):len(l.extras)],
		store:  l.store,
		mint:   r.keys,
		words:  r.words,
	}}
}

// build is the case of the run so far on snap, without its events.
func (r *Runner) build(snap ledger.Snapshot) *Case {
	c := &Case{
		Mission:  *r.m,
		Settings: r.s,
		Ledger:   snap,
		Outcome:  Outcome{Effects: snap.Effects, Intended: len(r.m.Intents), Succeeded: r.tally.succeeded, Verdicts: make([]IntentVerdict, 0, len(r.m.Intents))},
	}
	for i := range r.m.Intents {
		in := r.caller.Intent(i)
		live := r.tally.live[i]
		c.Outcome.Verdicts = append(c.Outcome.Verdicts, IntentVerdict{
			Intent: in.Intent.ID, Verdict: Judge(in.Belief, live), Effects: live, Belief: in.Belief,
		})
		if in.Belief == BelievesEscalated {
			c.Outcome.Evidence = append(c.Outcome.Evidence, r.words.Evidence(in))
		}
	}
	return c
}

// tally counts, as the run goes, each intent's objects that stand (all
// but those that ended failed) and the objects that succeeded: the
// verdicts' ledger side, without reading the whole ledger.
type tally struct {
	live      []int
	succeeded int
}

func (t *tally) copyFrom(src *tally) {
	t.live = append(t.live[:0], src.live...)
	t.succeeded = src.succeeded
}

// created counts a new object of intent i in status st.
func (t *tally) created(i int, st ledger.Status) {
	t.live[i]++
	if st == ledger.Succeeded {
		t.succeeded++
	}
}

// resolved counts a pending object of intent i reaching st.
func (t *tally) resolved(i int, st ledger.Status) {
	switch st {
	case ledger.Succeeded:
		t.succeeded++
	case ledger.Failed:
		t.live[i]--
	}
}

// Judge compares the caller's belief with the ledger's truth.
func Judge(b Belief, effects int) Verdict {
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

// Digest binds operation type, principal and normalized payload: the first
// 8 bytes, in hex, of the SHA-256 of the JSON array [op, principal,
// payload], the payload's fields sorted as encoding/json sorts them. JSON
// quotes every part, so no two different requests share an encoding.
func Digest(op, principal string, payload map[string]string) string {
	var buf [512]byte
	b := append(buf[:0], '[')
	b = jsontext.AppendString(b, op)
	b = append(b, ',')
	b = jsontext.AppendString(b, principal)
	b = append(b, ',')
	if payload == nil {
		b = append(b, "null"...)
	} else {
		var keyBuf [16]string
		keys := keyBuf[:0]
		for k := range payload {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsontext.AppendString(b, k)
			b = append(b, ':')
			b = jsontext.AppendString(b, payload[k])
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	sum := sha256.Sum256(b)
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
