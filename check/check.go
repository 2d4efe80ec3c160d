// Package check finds anomalies in a history from a user's own system: the
// attempts a client made, the reads in which it saw the provider's
// objects, and the records the provider holds (the format, JSON Lines,
// lives in package export). Each anomaly is reported with the lines that
// show it.
//
// A history is read one line at a time and what is kept grows with the
// intents, keys and objects it names, not with its lines. Order: an
// object's records are its status history, and its last record is its
// final status. "Last" and "after" go by the lines' times where both lines
// carry one (an attempt's, a read's or a record's "start"), and by line
// order where they do not, so the same lines shuffled, when all carry
// times, give the same report.
package check

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/memlimit"
	"github.com/replaylab/replaylab/internal/termtext"
)

// Anomaly kinds.
const (
	Duplicate    = "duplicate_effect"
	Unlearned    = "effect_never_learned"
	KeyChanged   = "key_changed"
	KeyReused    = "key_reused_with_other_payload"
	KeyShared    = "key_shared_by_intents"
	OrphanRecord = "record_without_attempt"
	OKNoEffect   = "ok_without_effect"
	KeyNotSent   = "record_under_unsent_key"
	ObjectShared = "object_shared_by_intents"
)

// Kinds lists every anomaly check reports, in the order it explains them.
var Kinds = []string{Duplicate, Unlearned, KeyChanged, KeyReused, KeyShared, OrphanRecord, OKNoEffect, KeyNotSent, ObjectShared}

// Anomaly is one thing the history shows that should not be, with the
// lines that show it. Others, Objects and Keys name, sorted, the other
// intents, the objects and the keys it is about.
type Anomaly struct {
	Kind    string   `json:"kind"`
	Intent  string   `json:"intent"`
	Message string   `json:"message"`
	Lines   []int    `json:"lines"`
	Others  []string `json:"other_intents,omitempty"`
	Objects []string `json:"objects,omitempty"`
	Keys    []string `json:"keys,omitempty"`
}

// Report is what check found.
type Report struct {
	Lines     int       `json:"lines"`
	Attempts  int       `json:"attempts"`
	Reads     int       `json:"reads"`
	Records   int       `json:"records"`
	Intents   int       `json:"intents"`
	Anomalies []Anomaly `json:"anomalies"`
}

// chunked is a growing list kept in fixed-size chunks: growing it never
// copies what it holds, so no old array is left for the collector at the
// size of everything read so far.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

const chunkSize = 1 << 14

func (c *chunked[T]) add(v T) int32 {
	if c.n%chunkSize == 0 {
		c.chunks = append(c.chunks, make([]T, 0, chunkSize))
	}
	last := len(c.chunks) - 1
	c.chunks[last] = append(c.chunks[last], v)
	c.n++
	return int32(c.n - 1)
}

func (c *chunked[T]) at(i int32) *T { return &c.chunks[i/chunkSize][i%chunkSize] }

func (c *chunked[T]) len() int { return c.n }

// pos is where a line stands in the order of events: its time, when it
// carries one (Unix nanoseconds in two halves, so that a pos is 12 bytes),
// and its line number.
type pos struct {
	th   int32 // untimed when the line carries no time
	tl   uint32
	line int32
}

// untimed marks a pos without a time: no time check reads is that early.
const untimed = math.MinInt32

func (p pos) timed() bool  { return p.th != untimed }
func (p pos) nanos() int64 { return int64(p.th)<<32 | int64(p.tl) }

// before says whether a came before b: by time where both carry one, by
// line otherwise.
func (a pos) before(b pos) bool {
	if a.timed() && b.timed() && a.nanos() != b.nanos() {
		return a.nanos() < b.nanos()
	}
	return a.line < b.line
}

// earliest keeps the earlier of *p and q, where *p may be unset.
func earliest(p *pos, q pos) {
	if p.line == 0 || q.before(*p) {
		*p = q
	}
}

const none = -1

// intentState is what check keeps per intent.
type intentState struct {
	first    pos   // the earliest attempt
	ok       pos   // the earliest ok
	unsure   pos   // the earliest fail or info
	key0     int32 // the key of its first attempt read
	attempts int32
	// objects heads the list of objects recorded for the intent, through
	// objectState.next.
	objects int32
	// more: the intent was sent under more than one key; its keys are
	// in checker.intentKeys.
	more bool
	// okNamed: an ok of the intent named an object.
	okNamed bool
}

// intentKey is one key an intent was sent under, beyond the first.
type intentKey struct {
	key           int32
	first, unsure pos
}

// keyState is what check keeps per key that is not empty.
type keyState struct {
	first  pos // the earliest attempt that sent it
	intent int32
	digest int32
	sent   bool
	// more: it was sent with other digests or for other intents; see
	// checker.keyUses.
	more bool
	// rec is the earliest record under the key, recIntent its intent;
	// recMore: records under it name other intents too.
	rec       pos
	recIntent int32
	recMore   bool
}

// keyUse is one (intent, digest) a key was sent with, or one intent a
// record under it names, at its earliest.
type keyUse struct {
	intent, digest int32
	at             pos
	record         bool
}

// objectState is what check keeps per object named by a record or a read.
type objectState struct {
	final   pos // its last record
	intent  int32
	key     int32
	status  uint8
	records int32
	// owner is the intent of its last record.
	owner int32

	next int32
	// shared: its records name more than one intent (see
	// checker.objectIntents).
	shared bool
}

var statuses = []string{"pending", "succeeded", "failed", "canceled"}

func statusOf(s string) uint8 { return uint8(slices.Index(statuses, s)) }

// live: the status is an effect (pending or succeeded).
func live(st uint8) bool { return st <= 1 }

// reads are, for an object a read showed pending or succeeded, the last
// such read by time among those that carry one, and the last by line.
type reads struct{ byTime, byLine pos }

// shownAfter: a read that showed object o live came after began: by time
// where both carry one, by line where either does not.
func (c *checker) shownAfter(o int32, began pos) bool {
	r, ok := c.reads[o]
	if !ok {
		return false
	}
	if r.byTime.line != 0 && began.timed() && !r.byTime.before(began) {
		return true
	}
	return r.byLine.line != 0 && (!r.byLine.timed() || !began.timed()) && r.byLine.line > began.line
}

// okRef is an ok that named an object.
type okRef struct {
	intent, object int32
	at             pos
}

type checker struct {
	intents  chunked[intentState]
	names    *nameSet
	keys     chunked[keyState]
	keyNames *nameSet
	objects  chunked[objectState]
	objNames *nameSet
	digests  *nameSet

	intentKeys    map[int32][]intentKey
	keyUses       map[int32][]keyUse
	objectIntents map[int32][]keyUse
	// useAt and keyAt find an entry of those lists without a search.
	useAt map[useID]int32
	keyAt map[[2]int32]int32
	okAt  map[[2]int32]int32
	reads map[int32]reads
	// firstRec is, for an object with more than one record, its earliest.
	firstRec map[int32]pos
	// quiet: anomalies are being found, not yet put into words.
	quiet bool
	oks   []okRef
}

func (c *checker) intent(s string) int32 {
	id, isNew := c.names.id(s)
	if isNew {
		c.intents.add(intentState{key0: none, objects: none})
	}
	return id
}

func (c *checker) key(s string) int32 {
	id, isNew := c.keyNames.id(s)
	if isNew {
		c.keys.add(keyState{intent: none, digest: none, recIntent: none})
	}
	return id
}

func (c *checker) object(s string) int32 {
	id, isNew := c.objNames.id(s)
	if isNew {
		c.objects.add(objectState{intent: none, key: none, status: 255, next: none})
	}
	return id
}

func (c *checker) digest(s string) int32 {
	if s == "" {
		return none
	}
	id, _ := c.digests.id(s)
	return id
}

// History reads a history from r (named name in messages) and reports its
// anomalies. A line that does not read stops it with an
// *export.HistoryError naming the line.
func History(name string, r io.Reader) (*Report, error) {
	res, err := Check(name, r)
	if err != nil {
		return nil, err
	}
	rep := &Report{Lines: res.Lines, Attempts: res.Attempts, Reads: res.Reads, Records: res.Records, Intents: res.Intents, Anomalies: make([]Anomaly, 0, res.Len())}
	res.Each(func(a Anomaly) bool {
		rep.Anomalies = append(rep.Anomalies, a)
		return true
	})
	return rep, nil
}

// Result is a finished check: the counts, and the anomalies in the order
// of their first lines, each put into words when it is asked for from
// what the check kept, so that a history with a million anomalies is
// never a million messages in memory at once.
type Result struct {
	Lines, Attempts, Reads, Records, Intents int

	c    *checker
	refs []ref
	// keep, when set, says which anomalies to report: it sees each in
	// the check's quiet words (kind, intent, lines; no message).
	keep func(Anomaly) bool
}

// ref is one anomaly found: its subject (a kind and a number), which of
// the subject's anomalies it is, and its first line.
type ref struct {
	line, idx, nth int32
	kind           uint8
}

// Len is how many anomalies the history shows.
func (r *Result) Len() int { return len(r.refs) }

// Each calls fn with each anomaly, in the order of their first lines,
// until fn returns false.
func (r *Result) Each(fn func(Anomaly) bool) {
	var last *ref
	var as []Anomaly
	for j := range r.refs {
		f := &r.refs[j]
		if last == nil || last.kind != f.kind || last.idx != f.idx {
			as, last = r.c.of(f.kind, f.idx), f
		}
		if !fn(as[f.nth]) {
			return
		}
	}
}

// MemoryLimit is the soft limit on the Go heap that LimitMemory sets: a
// history of a million intents keeps about 220 MiB, and without a limit
// the collector lets the heap grow to twice what is kept before it runs.
const MemoryLimit = 256 << 20

// LimitMemory sets the soft limit MemoryLimit on the Go heap for the
// checks that follow, raised, once what a check keeps is well past it, to
// an eighth above that: the collector neither lets the heap double nor, once what is kept
// passes the limit, runs without pause. It returns what puts the old
// limit back. With GOMEMLIMIT set it does nothing: the user chose.
func LimitMemory() (restore func()) { return memlimit.Set(MemoryLimit) }

// Check reads a history from r (named name in messages) and finds its
// anomalies. A line that does not read stops it with an
// *export.HistoryError naming the line.
func Check(name string, r io.Reader) (*Result, error) {
	c := newChecker()
	rep := &Result{c: c}
	hr := export.NewHistoryReader(name, r)
	var l export.HistoryLine
	for {
		n, err := hr.NextBorrowed(&l)
		if n&(1<<16-1) == 0 {
			memlimit.Raise()
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		p := pos{line: int32(n), th: untimed}
		if t, ok := l.Time(); ok {
			p = timedAt(n, t.UnixNano())
		}
		rep.add(&l, p)
	}
	rep.Lines = hr.Lines()
	if err := rep.finish(); err != nil {
		return nil, &export.HistoryError{Name: name, Line: max(rep.Lines, 1), Err: err}
	}
	return rep, nil
}

func newChecker() *checker {
	return &checker{
		names: newNameSet(), keyNames: newNameSet(), objNames: newNameSet(), digests: newNameSet(),
		intentKeys: map[int32][]intentKey{}, keyUses: map[int32][]keyUse{}, objectIntents: map[int32][]keyUse{},
		useAt: map[useID]int32{}, keyAt: map[[2]int32]int32{}, okAt: map[[2]int32]int32{}, reads: map[int32]reads{}, firstRec: map[int32]pos{},
	}
}

// timedAt is the position of line n, which carries the time ns (Unix
// nanoseconds).
func timedAt(n int, ns int64) pos { return pos{line: int32(n), th: int32(ns >> 32), tl: uint32(ns)} }

// untimedAt is the position of line n, which carries no time.
func untimedAt(n int) pos { return pos{line: int32(n), th: untimed} }

// add takes one line of a history, at p.
func (rep *Result) add(l *export.HistoryLine, p pos) {
	c := rep.c
	switch l.Type {
	case export.LineAttempt:
		rep.Attempts++
		c.attempt(l, p)
	case export.LineRead:
		rep.Reads++
		c.read(l, p)
	case export.LineRecord:
		rep.Records++
		c.record(l, p)
	}
}

// finish finds the anomalies of the lines taken. A history that held
// nothing to check is an error.
func (rep *Result) finish() error {
	c := rep.c
	rep.Intents = c.intents.len()
	if rep.Attempts+rep.Reads+rep.Records == 0 {
		return errors.New("the history holds no attempt, read or record: nothing to check")
	}
	// The names are all looked up; what is left is by number.
	c.okAt, c.useAt, c.keyAt = nil, nil, nil
	for _, ns := range []*nameSet{c.names, c.keyNames, c.objNames, c.digests} {
		ns.table = nil
	}
	memlimit.Raise()
	c.link()
	c.quiet = true
	defer func() { c.quiet = false }()
	for kind := range subjects {
		for i := range int32(c.count(kind)) {
			for n, a := range c.of(kind, i) {
				if rep.keep == nil || rep.keep(a) {
					rep.refs = append(rep.refs, ref{line: int32(a.Lines[0]), idx: i, nth: int32(n), kind: kind})
				}
			}
		}
	}
	slices.SortStableFunc(rep.refs, func(a, b ref) int { return cmp.Compare(a.line, b.line) })
	return nil
}

func (c *checker) attempt(l *export.HistoryLine, p pos) {
	i := c.intent(l.Intent)
	in := c.intents.at(i)
	in.attempts++
	unsure := l.Outcome != export.OutcomeOK
	k := c.key(l.Key)
	switch {
	case in.attempts == 1:
		in.key0 = k
	case !in.more && k != in.key0:
		// A second key: from now on the intent keeps a list, starting
		// with what its first key's attempts showed.
		in.more = true
		c.intentKeys[i] = []intentKey{{key: in.key0, first: in.first, unsure: in.unsure}}
		c.keyAt[[2]int32{i, in.key0}] = 0
	}
	if in.more {
		ks := c.intentKeys[i]
		j, ok := c.keyAt[[2]int32{i, k}]
		if !ok {
			ks = append(ks, intentKey{key: k})
			j = int32(len(ks) - 1)
			c.keyAt[[2]int32{i, k}] = j
		}
		earliest(&ks[j].first, p)
		if unsure {
			earliest(&ks[j].unsure, p)
		}
		c.intentKeys[i] = ks
	}
	earliest(&in.first, p)
	if unsure {
		earliest(&in.unsure, p)
	} else {
		earliest(&in.ok, p)
		if l.Object != "" {
			// Each (intent, object) once: the list grows with what the
			// oks name, not with the oks.
			o := c.object(l.Object)
			if j, ok := c.okAt[[2]int32{i, o}]; ok {
				earliest(&c.oks[j].at, p)
			} else {
				c.okAt[[2]int32{i, o}] = int32(len(c.oks))
				c.oks = append(c.oks, okRef{intent: i, object: o, at: p})
			}
			in.okNamed = true
		}
	}
	if l.Key == "" {
		return
	}
	ks := c.keys.at(k)
	d := c.digest(l.Digest)
	if !ks.sent {
		ks.sent, ks.first, ks.intent, ks.digest = true, p, i, d
		return
	}
	if ks.digest == none && d != none && i == ks.intent && !ks.more {
		ks.digest = d // the first digest given stands for the key
	}
	if (d != ks.digest && d != none && ks.digest != none) || i != ks.intent || ks.more {
		ks.more = true
		c.use(false, k, keyUse{intent: i, digest: d, at: p})
		c.use(false, k, keyUse{intent: ks.intent, digest: ks.digest, at: ks.first})
	}
	if p.before(ks.first) {
		ks.first, ks.intent, ks.digest = p, i, d
	}
}

// use notes a use, keeping the earliest of each (intent, digest, kind).
func (c *checker) use(objects bool, k int32, u keyUse) {
	m := c.keyUses
	if objects {
		m = c.objectIntents
	}
	id := useID{of: k, intent: u.intent, digest: u.digest, record: u.record, objects: objects}
	if j, ok := c.useAt[id]; ok {
		earliest(&m[k][j].at, u.at)
		return
	}
	c.useAt[id] = int32(len(m[k]))
	m[k] = append(m[k], u)
}

// useID names one use, to find it again without a search.
type useID struct {
	of, intent, digest int32
	record, objects    bool
}

func (c *checker) read(l *export.HistoryLine, p pos) {
	c.intent(l.Intent)
	o := c.object(l.Object)
	if st := statusOf(l.Status); live(st) {
		r := c.reads[o]
		if p.timed() && (r.byTime.line == 0 || r.byTime.before(p)) {
			r.byTime = p
		}
		if p.line > r.byLine.line {
			r.byLine = p
		}
		c.reads[o] = r
	}
}

func (c *checker) record(l *export.HistoryLine, p pos) {
	i := c.intent(l.Intent)
	oi := c.object(l.Object)
	o := c.objects.at(oi)
	k := int32(none)
	if l.Key != "" {
		k = c.key(l.Key)
	}
	switch {
	case o.records == 0:
		o.intent = i
	case o.records == 1:
		// A second record: from now on its earliest is kept aside (most
		// objects have one record, and keep none).
		c.firstRec[oi] = o.final
	}
	if o.records > 0 && (o.intent != i || o.shared) {
		if !o.shared {
			c.use(true, oi, keyUse{intent: o.intent, digest: none, at: c.firstRec[oi], record: true})
		}
		o.shared = true
		c.use(true, oi, keyUse{intent: i, digest: none, at: p, record: true})
	}
	o.records++
	if o.records > 1 {
		first := c.firstRec[oi]
		earliest(&first, p)
		c.firstRec[oi] = first
	}
	if o.final.line == 0 || o.final.before(p) {
		// The last record is the object's final status, and its intent
		// the object's owner.
		o.final, o.status, o.key, o.owner = p, statusOf(l.Status), k, i
	}
	if k == none {
		return
	}
	ks := c.keys.at(k)
	switch {
	case ks.rec.line == 0:
		ks.rec, ks.recIntent = p, i
	case ks.recIntent != i || ks.recMore:
		if !ks.recMore {
			c.use(false, k, keyUse{intent: ks.recIntent, digest: none, at: ks.rec, record: true})
		}
		ks.recMore = true
		c.use(false, k, keyUse{intent: i, digest: none, at: p, record: true})
		if p.before(ks.rec) {
			ks.rec, ks.recIntent = p, i
		}
	default:
		earliest(&ks.rec, p)
	}
}

// lines are the line numbers of ps, ascending, each once.
func lines(ps ...pos) []int {
	out := make([]int, 0, len(ps))
	for _, p := range ps {
		if p.line != 0 {
			out = append(out, int(p.line))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func keyWords(k string) string {
	if k == "" {
		return "(no key)"
	}
	return strconv.Quote(k)
}

// WriteText writes a report for people, a line at a time: one line per
// anomaly with the lines that show it, then a summary.
func (r *Result) WriteText(w io.Writer, name string) error {
	bw := bufio.NewWriter(w)
	r.Each(func(a Anomaly) bool {
		writeAnomaly(bw, name, a)
		return true
	})
	writeSummary(bw, name, r.Lines, r.Intents, r.Attempts, r.Reads, r.Records, r.Len())
	return bw.Flush()
}

// WriteJSON writes the result as the JSON Report marshals to, indented,
// an anomaly at a time.
func (r *Result) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "{\n  \"lines\": %d,\n  \"attempts\": %d,\n  \"reads\": %d,\n  \"records\": %d,\n  \"intents\": %d,\n  \"anomalies\": [",
		r.Lines, r.Attempts, r.Reads, r.Records, r.Intents)
	var err error
	first := true
	r.Each(func(a Anomaly) bool {
		var b []byte
		if b, err = json.MarshalIndent(a, "    ", "  "); err != nil {
			return false
		}
		if !first {
			bw.WriteString(",")
		}
		first = false
		bw.WriteString("\n    ")
		bw.Write(termtext.EscapeHidden(b))
		return true
	})
	if err != nil {
		return err
	}
	if !first {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	return bw.Flush()
}

func writeAnomaly(w io.Writer, name string, a Anomaly) {
	ls := make([]string, len(a.Lines))
	for i, l := range a.Lines {
		ls[i] = strconv.Itoa(l)
	}
	fmt.Fprintf(w, "%s:%s: %s: %s: %s\n", termtext.CleanLine(name), strings.Join(ls, ","), a.Kind, termtext.CleanLine(a.Intent), termtext.CleanLine(a.Message))
}

func writeSummary(w io.Writer, name string, lines, intents, attempts, reads, records, n int) {
	verdict := "no anomaly"
	switch {
	case n == 1:
		verdict = "1 anomaly"
	case n > 1:
		verdict = strconv.Itoa(n) + " anomalies"
	}
	fmt.Fprintf(w, "%s: %s, %s, %s, %s, %s: %s\n", termtext.CleanLine(name), termtext.Plural(lines, "line"), termtext.Plural(intents, "intent"),
		termtext.Plural(attempts, "attempt"), termtext.Plural(reads, "read"), termtext.Plural(records, "record"), verdict)
}

// unsureUnder is the earliest fail or info attempt of intent i under key
// k, else its earliest of any key.
func (c *checker) unsureUnder(i, k int32) pos {
	in := c.intents.at(i)
	for _, ik := range c.intentKeys[i] {
		if ik.key == k && ik.unsure.line != 0 {
			return ik.unsure
		}
	}
	return in.unsure
}

// firstUnder is the earliest attempt of intent i under key k, else its
// earliest of any key.
func (c *checker) firstUnder(i, k int32) pos {
	for _, ik := range c.intentKeys[i] {
		if ik.key == k && ik.first.line != 0 {
			return ik.first
		}
	}
	return c.intents.at(i).first
}

// anomalies are what the facts show, per intent, per key and per object.
// link gives each recorded object to its last record's intent.
func (c *checker) link() {
	for o := range int32(c.objects.len()) {
		if ob := c.objects.at(o); ob.records > 0 {
			in := c.intents.at(ob.owner)
			ob.intent, ob.next, in.objects = ob.owner, in.objects, o
		}
	}
	slices.SortStableFunc(c.oks, func(a, b okRef) int {
		return cmp.Or(cmp.Compare(a.intent, b.intent), cmp.Compare(a.object, b.object))
	})
}

// liveOf lists intent i's effects, in the order of their last records.
func (c *checker) liveOf(i int32) []int32 {
	var ls []int32
	for o := c.intents.at(i).objects; o != none; o = c.objects.at(o).next {
		if ob := c.objects.at(o); ob.intent == i && live(ob.status) {
			ls = append(ls, o)
		}
	}
	slices.SortFunc(ls, func(a, b int32) int {
		if c.objects.at(a).final.before(c.objects.at(b).final) {
			return -1
		}
		return 1
	})
	return ls
}

// say words a message, unless the check is only finding where its
// anomalies are (quiet), when the words are not wanted yet.
func (c *checker) say(format string, args ...any) string {
	if c.quiet {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

// Subjects of anomalies: what each is about, numbered within its kind.
const (
	subjectIntent uint8 = iota
	subjectOK
	subjectKey
	subjectObject
	subjects
)

// of is the anomalies subject number i of kind shows.
func (c *checker) of(kind uint8, i int32) []Anomaly {
	switch kind {
	case subjectIntent:
		return c.intentAnomalies(i)
	case subjectOK:
		return c.okAnomaly(i)
	case subjectKey:
		return c.keyAnomalies(i)
	}
	return c.objectAnomalies(i)
}

// count is how many subjects of kind there are.
func (c *checker) count(kind uint8) int {
	switch kind {
	case subjectIntent:
		return c.intents.len()
	case subjectOK:
		return len(c.oks)
	case subjectKey:
		return c.keys.len()
	}
	return c.objects.len()
}

// intentAnomalies are what one intent's facts show.
func (c *checker) intentAnomalies(i int32) []Anomaly {
	var out []Anomaly
	{
		in := c.intents.at(i)
		id := c.names.name(i)
		ls := c.liveOf(i)
		if len(ls) > 1 {
			a := Anomaly{Kind: Duplicate, Intent: id}
			var at []pos
			var objs []string
			for _, o := range ls {
				at = append(at, c.objects.at(o).final)
				objs = append(objs, c.objNames.name(o))
			}
			a.Lines, a.Objects = lines(at...), sorted(objs)
			a.Message = c.say("%d effects for one intent: %s", len(ls), listed(objs))
			out = append(out, a)
		}
		if in.attempts == 0 {
			for o := in.objects; o != none; o = c.objects.at(o).next {
				ob := c.objects.at(o)
				if ob.intent != i {
					continue
				}
				out = append(out, Anomaly{Kind: OrphanRecord, Intent: id, Lines: lines(ob.final), Objects: []string{c.objNames.name(o)},
					Message: c.say("the provider holds %s (%s), but the client's history has no attempt for this intent", c.objNames.name(o), statuses[ob.status])})
			}
			return out
		}
		if in.ok.line == 0 && in.unsure.line != 0 {
			// Each effect no read after its attempt showed; one anomaly
			// for the intent names them all.
			var at []pos
			var objs, names []string
			for _, o := range ls {
				ob := c.objects.at(o)
				if c.shownAfter(o, c.firstUnder(i, ob.key)) {
					continue // a read after the attempt began showed it
				}
				if len(at) == 0 {
					at = append(at, c.unsureUnder(i, ob.key))
				}
				at = append(at, ob.final)
				objs = append(objs, c.objNames.name(o)+" ("+statuses[ob.status]+")")
				names = append(names, c.objNames.name(o))
			}
			if len(objs) > 0 {
				out = append(out, Anomaly{Kind: Unlearned, Intent: id, Lines: lines(at...), Objects: sorted(names),
					Message: c.say("the client heard only failures or no answer (fail, info), and no read after its attempt showed it, yet %s took effect", listed(objs))})
			}
		}
		if in.ok.line != 0 && len(ls) == 0 && !in.okNamed {
			out = append(out, Anomaly{Kind: OKNoEffect, Intent: id, Lines: lines(in.ok),
				Message: "the client was told it took effect (ok), but the provider holds no effect for this intent"})
		}
		if in.more {
			ks := slices.Clone(c.intentKeys[i])
			slices.SortFunc(ks, func(a, b intentKey) int {
				if a.first.before(b.first) {
					return -1
				}
				return 1
			})
			var at []pos
			var words, names []string
			for _, k := range ks {
				at = append(at, k.first)
				words = append(words, keyWords(c.keyNames.name(k.key)))
				names = append(names, c.keyNames.name(k.key))
			}
			out = append(out, Anomaly{Kind: KeyChanged, Intent: id, Lines: lines(at...), Keys: sorted(names),
				Message: c.say("one intent sent under %d keys: %s", len(ks), listed(words))})
		}
	}
	return out
}

// okAnomaly: an ok that named an object the provider does not hold as an
// effect of the ok's intent (each (intent, object) is one ok reference).
func (c *checker) okAnomaly(j int32) []Anomaly {
	r := c.oks[j]
	at := r.at
	{
		ls := c.liveOf(r.intent)
		if slices.Contains(ls, r.object) {
			return nil // its own
		}
		id, obj := c.names.name(r.intent), c.objNames.name(r.object)
		a := Anomaly{Kind: OKNoEffect, Intent: id, Lines: lines(at), Objects: []string{obj}}
		own := "it holds no effect for this intent"
		if len(ls) > 0 {
			a.Lines = lines(at, c.objects.at(ls[0]).final)
			a.Objects = sorted([]string{obj, c.objNames.name(ls[0])})
			own = "this intent's own is " + c.objNames.name(ls[0])
		}
		switch o := c.objects.at(r.object); {
		case o.records > 0 && o.intent != r.intent:
			a.Others = []string{c.names.name(o.intent)}
			a.Lines = lines(append([]pos{o.final}, posOf(a.Lines)...)...)
			a.Message = c.say("the client was told of %s (ok), which the provider holds for intent %s; %s", obj, termtext.CleanLine(c.names.name(o.intent)), own)
		case len(ls) > 0:
			a.Message = c.say("the client was told of %s (ok), but the provider holds no such effect for this intent (it holds %s)", obj, c.objNames.name(ls[0]))
		default:
			a.Message = c.say("the client was told of %s (ok), but the provider holds no effect for this intent", obj)
		}
		return []Anomaly{a}
	}
}

// keyAnomalies: a key sent with two payloads, a key sent or recorded for
// two intents, a record under a key no attempt sent.
func (c *checker) keyAnomalies(k int32) []Anomaly {
	var out []Anomaly
	{
		ks := c.keys.at(k)
		name := c.keyNames.name(k)
		if name == "" {
			return nil
		}
		var sent, recs []keyUse
		for _, u := range c.keyUses[k] {
			if u.record {
				recs = append(recs, u)
			} else {
				sent = append(sent, u)
			}
		}
		byTime := func(us []keyUse) {
			slices.SortStableFunc(us, func(a, b keyUse) int {
				if a.at.before(b.at) {
					return -1
				}
				return 1
			})
		}
		byTime(sent)
		byTime(recs)
		if ks.more {
			// The earliest digest given, then the earliest other.
			first, given := sent[0], sent[0]
			if j := slices.IndexFunc(sent, func(u keyUse) bool { return u.digest != none }); j >= 0 {
				given = sent[j]
			}
			if j := slices.IndexFunc(sent, func(u keyUse) bool { return u.digest != given.digest && u.digest != none }); j >= 0 && given.digest != none {
				out = append(out, Anomaly{Kind: KeyReused, Intent: c.names.name(given.intent), Lines: lines(given.at, sent[j].at), Keys: []string{name},
					Others:  others(c, sent, given.intent),
					Message: c.say("key %s sent with payload %s, then with %s", keyWords(name), c.digests.name(given.digest), c.digests.name(sent[j].digest))})
			}
			if j := slices.IndexFunc(sent, func(u keyUse) bool { return u.intent != first.intent }); j >= 0 {
				out = append(out, Anomaly{Kind: KeyShared, Intent: c.names.name(first.intent), Lines: lines(first.at, sent[j].at), Keys: []string{name},
					Others:  others(c, sent, first.intent),
					Message: c.say("key %s sent for intent %s, then for intent %s: the provider takes the second as a repeat of the first", keyWords(name), termtext.CleanLine(c.names.name(first.intent)), termtext.CleanLine(c.names.name(sent[j].intent)))})
			}
		}
		if ks.recMore && !(ks.more && slices.ContainsFunc(sent, func(u keyUse) bool { return u.intent != sent[0].intent })) {
			first := recs[0]
			if j := slices.IndexFunc(recs, func(u keyUse) bool { return u.intent != first.intent }); j >= 0 {
				out = append(out, Anomaly{Kind: KeyShared, Intent: c.names.name(first.intent), Lines: lines(first.at, recs[j].at), Keys: []string{name},
					Others:  others(c, recs, first.intent),
					Message: c.say("the provider recorded key %s for intent %s and for intent %s: one key stands for two intents", keyWords(name), termtext.CleanLine(c.names.name(first.intent)), termtext.CleanLine(c.names.name(recs[j].intent)))})
			}
		}
		if ks.rec.line != 0 && !ks.sent {
			// Each intent that has attempts, and a record under a key
			// none of them sent; an intent without attempts is an
			// orphan record already.
			holders := recs
			if !ks.recMore {
				holders = []keyUse{{intent: ks.recIntent, at: ks.rec}}
			}
			for _, u := range holders {
				if c.intents.at(u.intent).attempts > 0 {
					out = append(out, Anomaly{Kind: KeyNotSent, Intent: c.names.name(u.intent), Lines: lines(u.at), Keys: []string{name},
						Message: c.say("the provider holds a record under key %s, which no attempt in the client's history sent", keyWords(name))})
				}
			}
		}
	}
	return out
}

// objectAnomalies: one object recorded for two intents.
func (c *checker) objectAnomalies(o int32) []Anomaly {
	var out []Anomaly
	{
		// A copy is sorted: every call sees the uses as they were kept.
		us := slices.Clone(c.objectIntents[o])
		if len(us) < 2 {
			return nil
		}
		slices.SortStableFunc(us, func(a, b keyUse) int {
			if a.at.before(b.at) {
				return -1
			}
			return 1
		})
		first := us[0]
		j := slices.IndexFunc(us, func(u keyUse) bool { return u.intent != first.intent })
		if j < 0 {
			return nil
		}
		out = append(out, Anomaly{Kind: ObjectShared, Intent: c.names.name(first.intent), Lines: lines(first.at, us[j].at), Objects: []string{c.objNames.name(o)},
			Others:  others(c, us, first.intent),
			Message: c.say("the provider recorded %s for intent %s and for intent %s: one effect stands for two intents", c.objNames.name(o), termtext.CleanLine(c.names.name(first.intent)), termtext.CleanLine(c.names.name(us[j].intent)))})
	}
	return out
}

// posOf turns line numbers back into positions, for lines().
func posOf(ls []int) []pos {
	out := make([]pos, len(ls))
	for i, l := range ls {
		out[i] = pos{line: int32(l), th: untimed}
	}
	return out
}

// others are the intents of us other than i, sorted, each once.
func others(c *checker, us []keyUse, i int32) []string {
	var out []string
	for _, u := range us {
		if u.intent != i {
			out = append(out, c.names.name(u.intent))
		}
	}
	return slices.Compact(sorted(out))
}

// listed names items, the first few in full: "a, b, c and 12 more".
func listed(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:4], ", ") + fmt.Sprintf(" and %d more", len(items)-4)
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}
