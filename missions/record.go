package missions

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"

	"github.com/replaylab/replaylab/ledger"
)

// record is an event as the runner keeps it while it runs: the facts in
// small numbers, no words, and nothing the garbage collector must follow.
// A long run makes tens of thousands of events and a driver draws a
// screenful, so an Event, words and all, is made from its record only
// when it is read (EventLog.At, Case).
type record struct {
	tick, step, attempt, effects int32
	// obj is the object the event names: its response's, when it has
	// one (flagResp), else its Why's Obj. What else an event names, and
	// rarely, is in its extra.
	obj int32
	// text is 1 + the place in the run's texts of the event's key
	// (flagKey) or its Why's A (flagA), or both when they are the same,
	// 0 for neither; for a key the run's seed minted (flagMinted), 1 +
	// its number. extra is 1 + the place of what few events carry, 0 for
	// none.
	text, extra int32
	respCode    int16
	// intent is 1 + the intent's place in the mission, 0 for none.
	intent uint16
	worker uint8
	// The event's words, each as its place in its list of names (0 for
	// none; see names).
	kind, fixture, provider, observed, class, checkpoint, belief uint8
	why, sub, tail                                               WhyCode
	whyObs                                                       uint8
	say                                                          SayCode
	whyStatus, respStatus                                        ledger.Status
	flags                                                        uint8
}

// A record's flags.
const (
	flagResp   uint8 = 1 << iota // the event has a response; obj is its object
	flagKey                      // text is the event's key
	flagA                        // text is the Why's A
	flagMinted                   // text is a minted key's number, not a place in the texts
)

// extra is what an event rarely carries, kept beside the records.
type extra struct {
	b       string
	found   []EvidenceObject
	payload map[string]string
	// a is the Why's A where the text holds another (the key).
	a string
	// n is the Why's N; obj its Obj where obj holds the response's.
	n, obj int
	// sayObj is the Said's Obj where it is not the record's obj.
	sayObj    int32
	hasSayObj bool
}

// The names an event's words take, in the order their codes count them
// from 1.
var (
	kindNames = newNames(EventAttempt, EventHold, EventRead, EventWait, EventRestart,
		EventCommit, EventResolve, EventPrune, EventCheckpoint, EventEscalate)
	providerNames = newNames(string(ledger.Rejected), string(ledger.Committed), string(ledger.Executing),
		string(ledger.Replayed), string(ledger.Completed), string(ledger.Conflict), string(ledger.Mismatch),
		"not_reached", string(ledger.LateCommit), string(ledger.Resolved), string(ledger.Pruned),
		string(ledger.KeyRequired), string(ledger.KeyFailed), string(ledger.OverLimit))
	fixtureNames    = newNames(Fixtures...)
	observedNames   = newNames(ObservedSuccess, ObservedError, ObservedTimeout, ObservedConflict, ObservedMismatch, ObservedPending, ObservedNothing)
	classNames      = newNames(KnownFailureBeforeExecution, RecordedNotTerminal, KnownTerminal, Unknown)
	checkpointNames = newNames(Planned, Approved, Submitted, Committed, Reconciled, Delivered, FailedCheckpoint, UnknownState, Escalated)
	beliefNames     = newNames(BelievesDone, BelievesFailed, BelievesPending, BelievesUnknown, BelievesEscalated)
)

// names numbers a list of words from 1 (0 is none), and finds a word's
// number with one comparison: every event the runner records turns
// several words into numbers, so a search through the list would cost a
// long run more than its ledger does.
type names[T ~string] struct {
	list []T
	// byHash holds each word's number at the place its hash gives; no
	// two words of a list share one.
	byHash [256]uint8
}

func newNames[T ~string](list ...T) *names[T] {
	n := &names[T]{list: list}
	for i, w := range list {
		h := nameHash(w)
		if n.byHash[h] != 0 {
			panic(fmt.Sprintf("missions: %q and %q share a hash", list[n.byHash[h]-1], w))
		}
		n.byHash[h] = uint8(i + 1)
	}
	return n
}

func nameHash[T ~string](w T) uint8 {
	k := len(w)
	return uint8(k + int(w[0]) + int(w[k-1])*8 + int(w[k/2])*3)
}

// code is w's number: 0 for none, else 1 + its place. The engine only
// writes the words listed, so one outside them is a bug in the engine,
// not bad input. Most words an event leaves empty, and that case costs no
// call.
func (n *names[T]) code(w T) uint8 {
	if w == "" {
		return 0
	}
	return n.find(w)
}

func (n *names[T]) find(w T) uint8 {
	if c := n.byHash[nameHash(w)]; c != 0 && n.list[c-1] == w {
		return c
	}
	panic(fmt.Sprintf("missions: an event names %q, which is not among %q", w, n.list))
}

// The codes of the words the engine writes most, a few a step, found by
// comparison with the words themselves, which costs a long run a third
// of what names.code does; any other word goes to names.code.
var (
	beliefFailed     = beliefNames.code(BelievesFailed)
	beliefDone       = beliefNames.code(BelievesDone)
	kindCheckpoint   = kindNames.code(EventCheckpoint)
	kindHold         = kindNames.code(EventHold)
	cpSubmitted      = checkpointNames.code(Submitted)
	cpFailed         = checkpointNames.code(FailedCheckpoint)
	cpApproved       = checkpointNames.code(Approved)
	obsTimeout       = observedNames.code(ObservedTimeout)
	obsError         = observedNames.code(ObservedError)
	obsSuccess       = observedNames.code(ObservedSuccess)
	providerExecutes = providerNames.code(string(ledger.Executing))
	providerCommits  = providerNames.code(string(ledger.Committed))
	providerRejects  = providerNames.code(string(ledger.Rejected))
	providerReplays  = providerNames.code(string(ledger.Replayed))
	providerPrunes   = providerNames.code(string(ledger.Pruned))
	providerLands    = providerNames.code(string(ledger.LateCommit))
)

func beliefCode(b Belief) uint8 {
	switch b {
	case BelievesFailed:
		return beliefFailed
	case BelievesDone:
		return beliefDone
	}
	return beliefNames.code(b)
}

func kindCode(k EventKind) uint8 {
	switch k {
	case EventCheckpoint:
		return kindCheckpoint
	case EventHold:
		return kindHold
	}
	return kindNames.code(k)
}

func checkpointCode(cp Checkpoint) uint8 {
	switch cp {
	case Submitted:
		return cpSubmitted
	case FailedCheckpoint:
		return cpFailed
	case Approved:
		return cpApproved
	}
	return checkpointNames.code(cp)
}

func observedCode(o Observation) uint8 {
	switch o {
	case "":
		return 0
	case ObservedTimeout:
		return obsTimeout
	case ObservedError:
		return obsError
	case ObservedSuccess:
		return obsSuccess
	}
	return observedNames.code(o)
}

func providerCode(p string) uint8 {
	switch p {
	case string(ledger.Executing):
		return providerExecutes
	case string(ledger.Committed):
		return providerCommits
	case string(ledger.Rejected):
		return providerRejects
	case string(ledger.Replayed):
		return providerReplays
	case string(ledger.Pruned):
		return providerPrunes
	case string(ledger.LateCommit):
		return providerLands
	}
	return providerNames.code(p)
}

// name is the word numbered c.
func (n *names[T]) name(c uint8) T {
	if c == 0 {
		return ""
	}
	return n.list[c-1]
}

// eventLog is the event store of a run: its records and the texts and
// extras they point into. The runner appends to it and, rewinding,
// truncates it and appends the very same again, so a shorter view of it
// taken earlier reads the same all along.
type eventLog struct {
	recs   []record
	texts  []string
	extras []extra
	// store holds the memory of a long run's records (see recStore); nil
	// for a short run, whose records are few.
	store *recStore
}

// recStore holds the memory of a long run's records for the runner and
// every log read from it, which all keep the store. Once none is left,
// the memory goes to the next long run, which neither waits for fresh
// memory nor clears it: a driver that toggles a setting on a long
// mission makes one such run after another, each several megabytes.
type recStore struct{ buf *recBuf }

// recBuf is the records' memory as the store last grew it, apart from
// the store, so that it outlives it.
type recBuf struct{ recs []record }

// freeRecords holds the memory of long runs' records no runner or log
// reads any more: the last few, for the next long runs. Unlike a
// sync.Pool, it keeps them across collections, which a driver that
// toggles a long mission makes between its runs. What it keeps is
// bounded: keptFree runs' records, each within what the largest mission
// the limits allow makes (a few megabytes).
var freeRecords struct {
	sync.Mutex
	bufs []*recBuf
}

// keptFree is how many long runs' memory freeRecords keeps.
const keptFree = 4

// free gives b's memory to the next long runs, in place of the smallest
// kept where there is no room for more.
func free(b *recBuf) {
	f := &freeRecords
	f.Lock()
	defer f.Unlock()
	if len(f.bufs) < keptFree {
		f.bufs = append(f.bufs, b)
		return
	}
	small := 0
	for i, k := range f.bufs {
		if cap(k.recs) < cap(f.bufs[small].recs) {
			small = i
		}
	}
	if cap(b.recs) > cap(f.bufs[small].recs) {
		f.bufs[small] = b
	}
}

// takeFree takes the smallest memory kept with room for n records, if
// any has room.
func takeFree(n int) ([]record, bool) {
	f := &freeRecords
	f.Lock()
	defer f.Unlock()
	best := -1
	for i, k := range f.bufs {
		if cap(k.recs) >= n && (best < 0 || cap(k.recs) < cap(f.bufs[best].recs)) {
			best = i
		}
	}
	if best < 0 {
		return nil, false
	}
	recs := f.bufs[best].recs
	f.bufs = slices.Delete(f.bufs, best, best+1)
	return recs[:0], true
}

// longRun is the number of events past which a run's records are kept in
// a store: a long run foretells how many it will make once it has made
// that many (see Runner.grow), and takes memory for them then.
const longRun = 4096

// newRecStore is a store with room for n records.
func newRecStore(n int) *recStore {
	b := &recBuf{recs: takeRecords(n)}
	s := &recStore{buf: b}
	runtime.AddCleanup(s, free, b)
	return s
}

// takeRecords is room for n records: freed memory where some has room
// enough, else new.
func takeRecords(n int) []record {
	if recs, ok := takeFree(n); ok {
		// Every record the new run reads it writes first.
		return recs
	}
	return make([]record, 0, n)
}

// grow makes room for n records in all, keeping those held.
func (l *eventLog) grow(n int) {
	if n <= cap(l.recs) {
		return
	}
	if l.store == nil {
		if n <= longRun {
			l.recs = slices.Grow(l.recs, n-len(l.recs))
			return
		}
		l.store = newRecStore(n)
	} else {
		l.store.buf.recs = takeRecords(n)
	}
	// A log read before keeps the memory it read: the store now holds
	// the new.
	l.recs = append(l.store.buf.recs, l.recs...)
	l.store.buf.recs = l.recs
}

// text keeps s among the run's texts and returns its reference; the text
// just kept is kept once, however many events in a row name it.
func (l *eventLog) text(s string) int32 {
	if s == "" {
		return 0
	}
	if n := len(l.texts); n > 0 && l.texts[n-1] == s {
		return int32(n)
	}
	if len(l.texts) == cap(l.texts) {
		// Doubled, not grown by a quarter as append would: a long run
		// keeps tens of thousands of keys.
		l.texts = slices.Grow(l.texts, max(len(l.texts), 64))
	}
	l.texts = append(l.texts, s)
	return int32(len(l.texts))
}

// keep keeps x beside the records and returns its reference.
func (l *eventLog) keep(x extra) int32 {
	l.extras = append(l.extras, x)
	return int32(len(l.extras))
}

// truncate cuts the log back to the lengths a mark saved. What lies
// beyond stays as it was: a longer view taken earlier still reads it, and
// stepping on writes the very same there again.
func (l *eventLog) truncate(recs, texts, extras int) {
	l.recs, l.texts, l.extras = l.recs[:recs], l.texts[:texts], l.extras[:extras]
}

// EventLog is a run's events, read by place: a driver that shows a long
// run makes whole events (words and all) only of the ones it draws, and
// asks the others only what it scans them for. It reads the same however
// the runner that made it moves on or back. A case read from a file, or
// made whole, has a log over its events.
//
// It is small, so that reading it by value costs nothing: the records it
// reads, and the rest behind a pointer. The rest keeps the store that
// holds the records' memory (see recStore): every read of the records
// keeps the rest alive until it is done, so that the memory cannot go to
// another run meanwhile.
type EventLog struct {
	recs  []record
	src   *logSource
	whole bool
}

// logSource is what a log's records point into, and the words that make
// events of them; or, for a log over whole events, the events.
type logSource struct {
	texts  []string
	extras []extra
	// store keeps the records' memory from another run while the log
	// reads it.
	store *recStore
	mint  *keyMint
	words Words
	evs   []Event
}

// Len is the number of events.
func (l EventLog) Len() int {
	if l.whole {
		return len(l.src.evs)
	}
	return len(l.recs)
}

// At is event i, whole, with its words.
func (l EventLog) At(i int) Event {
	if l.whole {
		return l.src.evs[i]
	}
	ev := l.fact(i)
	l.src.words.Render(&ev)
	return ev
}

// All is every event, whole, in a slice of its own.
func (l EventLog) All() []Event {
	if l.whole {
		return slices.Clone(l.src.evs)
	}
	out := make([]Event, len(l.recs))
	for i := range out {
		out[i] = l.fact(i)
		l.src.words.Render(&out[i])
	}
	return out
}

// Kind is event i's kind.
func (l EventLog) Kind(i int) EventKind {
	if l.whole {
		return l.src.evs[i].Kind
	}
	v := l.recs[i].kind
	runtime.KeepAlive(l.src)
	return kindNames.name(v)
}

// Step is the step that made event i.
func (l EventLog) Step(i int) int {
	if l.whole {
		return l.src.evs[i].Step
	}
	v := l.recs[i].step
	runtime.KeepAlive(l.src)
	return int(v)
}

// Tick is the tick of event i.
func (l EventLog) Tick(i int) int {
	if l.whole {
		return l.src.evs[i].Tick
	}
	v := l.recs[i].tick
	runtime.KeepAlive(l.src)
	return int(v)
}

// Attempt is event i's attempt number, 0 for an event that sends nothing.
func (l EventLog) Attempt(i int) int {
	if l.whole {
		return l.src.evs[i].Attempt
	}
	v := l.recs[i].attempt
	runtime.KeepAlive(l.src)
	return int(v)
}

// Worker is the worker of event i.
func (l EventLog) Worker(i int) int {
	if l.whole {
		return l.src.evs[i].Worker
	}
	v := l.recs[i].worker
	runtime.KeepAlive(l.src)
	return int(v)
}

// Effects is the ledger's effect count right after event i.
func (l EventLog) Effects(i int) int {
	if l.whole {
		return l.src.evs[i].Effects
	}
	v := l.recs[i].effects
	runtime.KeepAlive(l.src)
	return int(v)
}

// Key is the key event i carries, if any.
func (l EventLog) Key(i int) string {
	if l.whole {
		return l.src.evs[i].Key
	}
	rec := l.recs[i]
	runtime.KeepAlive(l.src)
	if rec.flags&flagKey != 0 {
		return l.src.text(&rec)
	}
	return ""
}

// Minted is the number of the key event i carries among the keys its
// run's seed mints, for a key the engine minted: the same key, the same
// number, so a driver that letters tens of thousands of keys compares
// numbers, not texts. A log over whole events, and a key of another
// source (a payload's hash), have none.
func (l EventLog) Minted(i int) (int, bool) {
	if l.whole {
		return 0, false
	}
	rec := l.recs[i]
	runtime.KeepAlive(l.src)
	if rec.flags&(flagKey|flagMinted) == flagKey|flagMinted {
		return int(rec.text) - 1, true
	}
	return 0, false
}

// MintedNumber is key's number among the keys the seed of l's run mints,
// as Minted gives it, if the engine minted it.
func (l EventLog) MintedNumber(key string) (int, bool) {
	if l.whole || l.src == nil || l.src.mint == nil {
		return 0, false
	}
	return l.src.mint.number(key)
}

// Says reports whether the agent said something at event i.
func (l EventLog) Says(i int) bool {
	if l.whole {
		return l.src.evs[i].Say != ""
	}
	v := l.recs[i].say
	runtime.KeepAlive(l.src)
	return v != sayNothing
}

// NextSaid is the first event from i on at which the agent says
// something, or Len where none does: a driver that lists what was said in
// a long run passes over the rest at the cost of a comparison each.
func (l EventLog) NextSaid(i int) int {
	if l.whole {
		for ; i < len(l.src.evs); i++ {
			if l.src.evs[i].Say != "" {
				return i
			}
		}
		return i
	}
	defer runtime.KeepAlive(l.src)
	for ; i < len(l.recs); i++ {
		if l.recs[i].say != sayNothing {
			return i
		}
	}
	return i
}

// NextAttempt is the first event from i on that is a send, or Len where
// none is, at the cost of a comparison an event.
func (l EventLog) NextAttempt(i int) int {
	if l.whole {
		for ; i < len(l.src.evs); i++ {
			if l.src.evs[i].Kind == EventAttempt {
				return i
			}
		}
		return i
	}
	defer runtime.KeepAlive(l.src)
	for ; i < len(l.recs); i++ {
		if l.recs[i].kind == kindAttempt {
			return i
		}
	}
	return i
}

// AppendOthers appends to dst the places of the events from i on that
// are not of kind k, and returns it: the rows a driver shows with one
// kind of event hidden, at the cost of a comparison an event.
func (l EventLog) AppendOthers(dst []int, i int, k EventKind) []int {
	if l.whole {
		for ; i < len(l.src.evs); i++ {
			if l.src.evs[i].Kind != k {
				dst = append(dst, i)
			}
		}
		return dst
	}
	defer runtime.KeepAlive(l.src)
	c := kindNames.code(k)
	for ; i < len(l.recs); i++ {
		if l.recs[i].kind != c {
			dst = append(dst, i)
		}
	}
	return dst
}

// MostEffects is the highest effect count of the events from i on, 0 for
// none.
func (l EventLog) MostEffects(i int) int {
	most := 0
	if l.whole {
		for _, ev := range l.src.evs[min(i, len(l.src.evs)):] {
			most = max(most, ev.Effects)
		}
		return most
	}
	for _, rec := range l.recs[min(i, len(l.recs)):] {
		most = max(most, int(rec.effects))
	}
	runtime.KeepAlive(l.src)
	return most
}

// text is the text rec keeps: a key the seed minted, or one of the
// run's texts.
func (s *logSource) text(rec *record) string {
	switch {
	case rec.text == 0:
		return ""
	case rec.flags&flagMinted != 0:
		return s.mint.keys[rec.text-1]
	}
	return s.texts[rec.text-1]
}

// fact is event i without its words.
func (l EventLog) fact(i int) Event {
	rec := &l.recs[i]
	ev := Event{
		Seq: i + 1, Tick: int(rec.tick), Step: int(rec.step), Kind: kindNames.name(rec.kind), Fixture: fixtureNames.name(rec.fixture),
		Attempt: int(rec.attempt), Worker: int(rec.worker),
		Provider: providerNames.name(rec.provider), Observed: observedNames.name(rec.observed),
		Class: classNames.name(rec.class), Checkpoint: checkpointNames.name(rec.checkpoint),
		Belief: beliefNames.name(rec.belief), Effects: int(rec.effects),
		Why:    Why{Code: rec.why, Obs: observedNames.name(rec.whyObs), Status: rec.whyStatus, Sub: rec.sub, Tail: rec.tail},
		Saying: Said{Code: rec.say},
	}
	if rec.say != sayNothing {
		ev.Saying.Obj = ledger.ObjectID(rec.obj)
	}
	text := l.src.text(rec)
	if rec.flags&flagKey != 0 {
		ev.Key = text
	}
	if rec.flags&flagA != 0 {
		ev.Why.A = text
	}
	if rec.flags&flagResp != 0 {
		ev.Response = &ledger.Response{Code: int(rec.respCode), Object: ledger.ObjectID(rec.obj), Status: rec.respStatus}
	} else {
		ev.Why.Obj = ledger.ObjectID(rec.obj)
	}
	if rec.intent != 0 {
		ev.Intent = l.src.words.Mission.Intents[rec.intent-1].ID
	}
	if rec.extra != 0 {
		x := &l.src.extras[rec.extra-1]
		ev.Why.B, ev.Why.Found, ev.Saying.Payload, ev.Why.N = x.b, x.found, x.payload, x.n
		if x.a != "" {
			ev.Why.A = x.a
		}
		if rec.flags&flagResp != 0 {
			ev.Why.Obj = ledger.ObjectID(x.obj)
		}
		if x.hasSayObj && rec.say != sayNothing {
			ev.Saying.Obj = ledger.ObjectID(x.sayObj)
		}
	}
	runtime.KeepAlive(l.src)
	return ev
}

// Log is the case's events, read by place: the runner's own records for a
// case a runner shows (View), or the case's Events.
func (c *Case) Log() EventLog {
	if c.live != nil {
		return *c.live
	}
	return EventLog{src: &logSource{evs: c.Events}, whole: true}
}

// Live reports whether c reads its events from a runner's records
// (Runner.View, Runner.Logged): its Events are empty, and Log or Whole
// has them.
func (c *Case) Live() bool { return c.live != nil }

// Whole is c with every event made whole, in memory of its own, and no
// log of a runner's: what a driver keeps or writes away from the runner.
func (c *Case) Whole() *Case {
	w := *c
	w.Events, w.live = c.Log().All(), nil
	return &w
}

// Shares reports whether l and o are logs of the same run, one perhaps
// stepped on or moved back from the other: they read the same storage
// from its start.
func (l EventLog) Shares(o EventLog) bool {
	if l.whole != o.whole {
		return false
	}
	if l.whole {
		return len(l.src.evs) > 0 && len(o.src.evs) > 0 && &l.src.evs[0] == &o.src.evs[0]
	}
	return len(l.recs) > 0 && len(o.recs) > 0 && &l.recs[0] == &o.recs[0]
}

// SameEvents reports whether a and b hold the same events.
func SameEvents(a, b EventLog) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if !reflect.DeepEqual(a.At(i), b.At(i)) {
			return false
		}
	}
	return true
}
