package check

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/memlimit"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/traces"
)

// Resent is the anomaly traces alone can show: a write tool sent again,
// after a call whose outcome was unknown, under another key or with none.
const Resent = "resent_after_unknown"

// concurrentSlack is how far a call may start before the last one ended
// and still be sent after it, not beside it.
const concurrentSlack = 50 * time.Millisecond

// spanKinds are the anomalies spans show without the provider's
// records.
var spanKinds = map[string]bool{KeyChanged: true, KeyReused: true, KeyShared: true}

// Hops: which layer the wire shows sent a resend.
const (
	// HopSameCall: the same tool call id sent again, a retry below the
	// model (the framework's, or an SDK's).
	HopSameCall = "same_call"
	// HopModel: a new tool call id with the same arguments: the model
	// called the tool again.
	HopModel = "model"
	// HopSameArguments: the same arguments again, with no call ids to
	// tell the model's call from a retry below it.
	HopSameArguments = "same_arguments"
	// HopOtherArguments: a call with other arguments.
	HopOtherArguments = "other_arguments"
	// HopUnknown: the spans captured no arguments to compare.
	HopUnknown = "unknown"
)

// TraceAnomaly is an anomaly found in traces, with the spans and the
// provider's records that show it.
type TraceAnomaly struct {
	Kind     string     `json:"kind"`
	Intent   string     `json:"intent"`
	Message  string     `json:"message"`
	Hop      string     `json:"hop,omitempty"`
	Evidence []Evidence `json:"evidence"`
	Others   []string   `json:"other_intents,omitempty"`
	Objects  []string   `json:"objects,omitempty"`
	Keys     []string   `json:"keys,omitempty"`
}

// Evidence is one span or one record behind an anomaly: the file and
// line it is on, and what it says.
type Evidence struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	TraceID string `json:"trace_id,omitempty"`
	SpanID  string `json:"span_id,omitempty"`
	Name    string `json:"name,omitempty"`
	Tool    string `json:"tool,omitempty"`
	CallID  string `json:"call_id,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Key     string `json:"key,omitempty"`
	Object  string `json:"object,omitempty"`
	Status  string `json:"status,omitempty"`
	Intent  string `json:"intent,omitempty"`
	Note    string `json:"note,omitempty"`
}

// TraceResult is a finished check of an agent's traces, joined with the
// provider's records when a records file was given.
type TraceResult struct {
	Name, RecordsName string
	Stats             traces.Stats
	// Writes and Reads count the spans taken as attempts and as reads;
	// Records the provider's refunds read; Intents the intents met.
	Writes, Reads, Records, Intents int
	// Unlinked counts refunds in the records file that name no intent.
	Unlinked int
	// HasMore: the records file's last list page says more follow.
	HasMore bool

	// Unkeyed: no call's captured arguments carried the key field.
	Unkeyed bool

	res      *Result
	t        *traceState
	resends  []resend
	order    []entry
	unlinked map[string]bool
}

// entry is one anomaly in the report's order: a checker's (ref) or a
// resend (resend >= 0).
type entry struct {
	at     int32
	ref    int32
	resend int32
}

type resend struct{ first, again int32 }

type traceState struct {
	file, recName string
	opts          TraceOptions
	seed          maphash.Seed
	strs          *nameSet
	spans         chunked[spanRec]
	// at maps a history line (from 1) to the span it was made from, for
	// the lines below spanLines; records follow.
	at      []int32
	records []recordRef
	// writes are the attempts' spans by intent, then start.
	writes []int32
	// shown are the refunds reads showed, each read's in a run.
	shown chunked[shownRef]
	words map[string]int32
}

type recordRef struct {
	line                   int32
	object, status, intent int32
}

func (t *traceState) str(s string) int32 {
	if s == "" {
		return none
	}
	id, _ := t.strs.id(s)
	return id
}

// word is str for what few spans tell apart (a span's name, its tool,
// a status, an error's words): a small map in front of the set, since
// those come again on nearly every span.
func (t *traceState) word(s string) int32 {
	if id, ok := t.words[s]; ok {
		return id
	}
	id := t.str(s)
	if len(t.words) < 256 {
		t.words[strings.Clone(s)] = id
	}
	return id
}

func (t *traceState) name(i int32) string {
	if i == none {
		return ""
	}
	return t.strs.name(i)
}

// TracesFrom checks the traces f reads (named path), joined with the records at records
// when it is not "". Every span of a write tool is an attempt, every span
// of a read tool a read; a line that does not read, arguments that are
// not JSON, a records file that is not a list of refunds or a session,
// or traces without a span of a write tool are errors.
func TracesFrom(path string, f io.Reader, records string, o TraceOptions, pipeWait time.Duration) (*TraceResult, error) {
	var recs []rawRecord
	var err error
	tr := &TraceResult{Name: path, RecordsName: records}
	if records != "" {
		if recs, tr.HasMore, err = readRecords(records, o.IntentField, pipeWait); err != nil {
			return nil, err
		}
	}
	if err := tr.read(path, f, o); err != nil {
		return nil, err
	}
	tr.join(recs)
	return tr, nil
}

// read takes the tool-call spans of r.
func (tr *TraceResult) read(path string, r io.Reader, o TraceOptions) error {
	t := &traceState{file: path, recName: tr.RecordsName, opts: o, seed: maphash.MakeSeed(), strs: newNameSet(), words: map[string]int32{}}
	tr.t, tr.unlinked = t, map[string]bool{}
	tools := map[string]bool{}
	seen := map[string]bool{}
	for _, w := range o.WriteTools {
		tools[w] = true
	}
	for _, w := range o.ReadTools {
		tools[w] = false
	}
	convs := map[uint8]bool{}
	args := &argReader{o: &o, seed: t.seed}
	st, err := traces.Read(path, r, func(c *traces.Call) error {
		write, ok := tools[c.Tool]
		if !ok {
			if len(seen) < 8 {
				seen[c.Tool] = true
			}
			return nil
		}
		if t.spans.len()&(1<<16-1) == 0 {
			memlimit.Raise()
		}
		s := spanRec{line: int32(c.Line), trace: c.Trace, span: c.Span, parent: c.Parent, conv: convNumber(c.Convention), name: t.word(c.Name), write: write,
			tool: t.word(c.Tool), callID: t.str(c.CallID), at: c.Start, intent: none, key: none, object: none, status: none}
		s.end = c.End
		if !write {
			s.at = c.End
		}
		convs[s.conv] = true
		if c.Args != "" {
			intent, key, hasKey, digest, err := args.read(c.Args)
			if err != nil {
				return &traces.Error{Name: path, Line: c.Line, Field: c.Path(), Err: fmt.Errorf("span %s (%q): %w", c.Span, c.Name, err)}
			}
			s.intent, s.args, s.hasArgs = t.str(intent), digest, true
			if hasKey {
				s.key = t.str(key)
			}
		}
		res := parseResult(c.Result, o.IntentField)
		out, why := outcomeOf(c, &res)
		s.outcome, s.why = out, t.word(why)
		if len(res.refunds) > 0 {
			s.object, s.status = t.str(res.refunds[0].id), t.word(res.refunds[0].status)
		}
		if !write && !c.Failed && !res.isError && len(res.refunds) > 0 {
			s.shownAt, s.shownN = int32(t.shown.len()), int32(len(res.refunds))
			for _, r := range res.refunds {
				t.shown.add(shownRef{object: t.str(r.id), status: t.word(r.status), intent: t.str(r.intent)})
			}
		}
		t.spans.add(s)
		return nil
	})
	tr.Stats = st
	if err != nil {
		return err
	}
	if err := t.dups(); err != nil {
		return err
	}
	if len(convs) > 1 {
		t.layers()
	}
	named, keyed, captured := 0, 0, 0
	for i := range int32(t.spans.len()) {
		s := t.spans.at(i)
		if s.layer || s.dup {
			continue
		}
		if !s.write {
			tr.Reads++
			continue
		}
		tr.Writes++
		if s.hasArgs {
			captured++
		}
		if s.intent != none {
			named++
		}
		if s.key != none {
			keyed++
		}
	}
	if tr.Writes == 0 {
		return &traces.Error{Name: path, Line: max(st.Lines, 1), Err: noWrites(o, seen, st)}
	}
	if captured > 0 && named == 0 {
		return &traces.Error{Name: path, Line: max(st.Lines, 1), Err: fmt.Errorf("no call of %s names its intent in an argument %q (--intent-field), though %s captured their arguments; name the argument that carries the intent", strings.Join(o.WriteTools, ", "), o.IntentField, termtext.Plural(captured, "call"))}
	}
	tr.Unkeyed = captured > 0 && keyed == 0
	return nil
}

// dups finds spans written twice (the same trace and span id): the same
// facts again are one span, an exporter's retried batch or a file given
// twice; other facts under one id are refused, since which is the span
// cannot be told.
func (t *traceState) dups() error {
	idx := make([]int32, t.spans.len())
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		x, y := t.spans.at(a), t.spans.at(b)
		return cmp.Or(bytes.Compare(x.trace[:], y.trace[:]), bytes.Compare(x.span[:], y.span[:]), cmp.Compare(a, b))
	})
	for k := 1; k < len(idx); k++ {
		a, b := t.spans.at(idx[k-1]), t.spans.at(idx[k])
		if a.trace != b.trace || a.span != b.span {
			continue
		}
		same := *b
		same.line, same.dup, same.first = a.line, a.dup, a.first
		if same != *a {
			return &traces.Error{Name: t.file, Line: int(b.line), Err: fmt.Errorf("span %s of trace %s is on line %d too, saying other things: a span id names one span; which of the two is the call cannot be told", hex.EncodeToString(b.span[:]), hex.EncodeToString(b.trace[:]), a.line)}
		}
		b.dup = true
	}
	return nil
}

// noWrites says what the traces held instead of a write tool's span.
func noWrites(o TraceOptions, seen map[string]bool, st traces.Stats) error {
	want := strings.Join(o.WriteTools, ", ")
	if len(seen) == 0 && st.Server > 0 {
		return fmt.Errorf("%w: %s, %d of them server spans: a provider's side of the calls, as serve --record FILE.otlp.jsonl writes it; check reads the spans of the client or agent that made the calls, with the provider's records (a serve session .json, or a refunds list) as the second file", errNoWrite, termtext.Plural(st.Spans, "span"), st.Server)
	}
	if len(seen) == 0 {
		return fmt.Errorf("%w: %s, none a tool call (an execute_tool span, an MCP tools/call client span, a Traceloop tool span or an ai.toolCall span); nothing to check, so no report (not \"no anomaly\")", errNoWrite, termtext.Plural(st.Spans, "span"))
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, strconv.Quote(n))
	}
	slices.Sort(names)
	return fmt.Errorf("%w (%s): the tool calls are of %s; name the write tools with --write-tools", errNoWrite, want, strings.Join(names, ", "))
}

// layers marks each span that has a span of the same tool below it in
// its trace: the lower one is what went on the wire, and takes the call
// id and arguments the upper one knew.
func (t *traceState) layers() {
	type id struct {
		trace [16]byte
		span  [8]byte
	}
	by := map[id]int32{}
	for i := range int32(t.spans.len()) {
		s := t.spans.at(i)
		by[id{s.trace, s.span}] = i
	}
	for i := range int32(t.spans.len()) {
		s := t.spans.at(i)
		j, ok := by[id{s.trace, s.parent}]
		if !ok {
			continue
		}
		up := t.spans.at(j)
		if up.tool != s.tool {
			continue
		}
		up.layer = true
		if s.callID == none {
			s.callID = up.callID
		}
		if !s.hasArgs && up.hasArgs {
			s.intent, s.key, s.args, s.hasArgs = up.intent, up.key, up.args, true
		}
	}
}

// intentOf is the span's intent, or, where its arguments were not
// captured, its trace standing in for one.
func (t *traceState) intentOf(s *spanRec) string {
	if s.intent != none {
		return t.name(s.intent)
	}
	return "(trace " + hex.EncodeToString(s.trace[:]) + ")"
}

// join runs the history check over the spans and the records, and finds
// the resends.
func (tr *TraceResult) join(recs []rawRecord) {
	t := tr.t
	tr.res = &Result{c: newChecker()}
	n := 0
	var l export.HistoryLine
	for i := range int32(t.spans.len()) {
		s := t.spans.at(i)
		if s.layer || s.dup {
			continue
		}
		if s.write {
			n++
			t.at = append(t.at, i)
			s.first = int32(n)
			l = export.HistoryLine{Type: export.LineAttempt, Intent: t.intentOf(s), Key: t.name(s.key), Outcome: outcomeNames[s.outcome], Object: t.name(s.object)}
			if s.hasArgs {
				l.Digest = strconv.FormatUint(s.args, 16)
			}
			tr.res.add(&l, timedAt(n, s.at))
			continue
		}
		for k := range s.shownN {
			sh := t.shown.at(s.shownAt + k)
			n++
			t.at = append(t.at, i)
			if k == 0 {
				s.first = int32(n)
			}
			in := t.name(sh.intent)
			if in == "" {
				in = t.intentOf(s)
			}
			l = export.HistoryLine{Type: export.LineRead, Intent: in, Object: t.name(sh.object), Status: t.name(sh.status)}
			tr.res.add(&l, timedAt(n, s.at))
		}
	}
	for _, r := range recs {
		if r.intent == "" {
			tr.Unlinked++
			if len(tr.unlinked) < 1<<16 {
				tr.unlinked[r.id] = true
			}
			continue
		}
		n++
		t.records = append(t.records, recordRef{line: int32(r.line), object: t.str(r.id), status: t.str(r.status), intent: t.str(r.intent)})
		l = export.HistoryLine{Type: export.LineRecord, Intent: r.intent, Key: r.key, Object: r.id, Status: r.status}
		tr.res.add(&l, untimedAt(n))
		tr.Records++
	}
	tr.res.Lines = n
	// The names are all looked up.
	t.strs.table = nil
	tr.resends = t.resends()
	resent := map[string]bool{}
	for _, r := range tr.resends {
		resent[t.intentOf(t.spans.at(r.first))] = true
	}
	// Without the provider's records only what the spans show is said;
	// and a resend after an unknown outcome says more than the key
	// change it is.
	tr.res.keep = func(a Anomaly) bool {
		return (len(recs) > 0 || spanKinds[a.Kind]) && !(a.Kind == KeyChanged && resent[a.Intent])
	}
	_ = tr.res.finish() // there is at least one attempt
	tr.Intents = tr.res.Intents
	j := int32(0)
	tr.res.Each(func(a Anomaly) bool {
		at := tr.res.refs[j].line
		if ws := t.writesOf(a.Intent); a.Kind == Duplicate && len(ws) > 0 {
			at = t.lineOf(ws[0])
		}
		tr.order = append(tr.order, entry{at: at, ref: j, resend: -1})
		j++
		return true
	})
	for j, r := range tr.resends {
		tr.order = append(tr.order, entry{at: t.lineOf(r.first), ref: -1, resend: int32(j)})
	}
	slices.SortStableFunc(tr.order, func(a, b entry) int { return cmp.Compare(a.at, b.at) })
}

// lineOf is the first history line made from span i.
func (t *traceState) lineOf(i int32) int32 { return t.spans.at(i).first }

// resends finds, per intent, the first write sent after a call whose
// outcome was unknown under another key or with none.
func (t *traceState) resends() []resend {
	var writes []int32
	for _, i := range t.at {
		if s := t.spans.at(i); s.write && (len(writes) == 0 || writes[len(writes)-1] != i) {
			writes = append(writes, i)
		}
	}
	slices.SortStableFunc(writes, func(a, b int32) int {
		x, y := t.spans.at(a), t.spans.at(b)
		return cmp.Or(strings.Compare(t.intentOf(x), t.intentOf(y)), cmp.Compare(x.at, y.at))
	})
	t.writes = writes
	var out []resend
	for lo := 0; lo < len(writes); {
		hi := lo + 1
		in := t.intentOf(t.spans.at(writes[lo]))
		for hi < len(writes) && t.intentOf(t.spans.at(writes[hi])) == in {
			hi++
		}
		unsure := int32(none)
		for _, w := range writes[lo:hi] {
			s := t.spans.at(w)
			if unsure != none {
				u := t.spans.at(unsure)
				// Sent after the first's outcome was unknown: one sent
				// while the first was still out is a concurrent send.
				// The slack is for clocks: OpenTelemetry JS starts a span
				// at a millisecond and ends it at a nanosecond, and two
				// processes' clocks differ a little.
				if (s.key == none || s.key != u.key) && s.at >= u.end-int64(concurrentSlack) {
					out = append(out, resend{first: unsure, again: w})
					break
				}
			}
			if unsure == none && s.outcome == outInfo {
				unsure = w
			}
		}
		lo = hi
	}
	return out
}

// writesOf are the attempts' spans of intent, by start.
func (t *traceState) writesOf(intent string) []int32 {
	lo, _ := slices.BinarySearchFunc(t.writes, intent, func(w int32, in string) int { return strings.Compare(t.intentOf(t.spans.at(w)), in) })
	hi := lo
	for hi < len(t.writes) && t.intentOf(t.spans.at(t.writes[hi])) == intent {
		hi++
	}
	return t.writes[lo:hi]
}

// hop says which layer the wire shows sent b again after a.
func (t *traceState) hop(a, b *spanRec) (string, string) {
	switch {
	case a.callID != none && a.callID == b.callID:
		return HopSameCall, fmt.Sprintf("the same tool call (id %s) sent again: a retry below the model, in the framework or an SDK", strconv.Quote(t.name(a.callID)))
	case !a.hasArgs || !b.hasArgs:
		return HopUnknown, "the spans captured no arguments to tell which layer sent it"
	case a.args != b.args:
		return HopOtherArguments, "a call with other arguments"
	case a.callID != none && b.callID != none:
		return HopModel, fmt.Sprintf("a new tool call (id %s, after %s) with the same arguments: the model called the tool again", strconv.Quote(t.name(b.callID)), strconv.Quote(t.name(a.callID)))
	case a.callID != none || b.callID != none:
		return HopSameArguments, "the same arguments again; one of the two spans carries no tool call id, so the model's own call cannot be told from a retry below it"
	}
	return HopSameArguments, "the same arguments again; the spans carry no tool call id to tell the model's own call from a retry below it"
}

func (tr *TraceResult) resendAnomaly(r resend) TraceAnomaly {
	t := tr.t
	a, b := t.spans.at(r.first), t.spans.at(r.again)
	hop, words := t.hop(a, b)
	under := "with no key"
	if b.key != none {
		under = "under another key"
		if a.key == none {
			under = "under a key the first call did not carry"
		}
	}
	why := t.name(a.why)
	msg := fmt.Sprintf("%s's outcome was unknown (info: %s), and it was sent again %s: %s", t.name(a.tool), cmp.Or(why, "no reply"), under, words)
	ta := TraceAnomaly{Kind: Resent, Intent: t.intentOf(a), Message: msg, Hop: hop, Evidence: []Evidence{t.spanEvidence(a), t.spanEvidence(b)}}
	for _, k := range []int32{a.key, b.key} {
		if k != none && !slices.Contains(ta.Keys, t.name(k)) {
			ta.Keys = append(ta.Keys, t.name(k))
		}
	}
	slices.Sort(ta.Keys)
	return ta
}

func (t *traceState) spanEvidence(s *spanRec) Evidence {
	e := Evidence{File: t.file, Line: int(s.line), TraceID: hex.EncodeToString(s.trace[:]), SpanID: hex.EncodeToString(s.span[:]),
		Tool: t.name(s.tool), CallID: t.name(s.callID), Key: t.name(s.key), Object: t.name(s.object), Status: t.name(s.status), Note: t.name(s.why)}
	e.Name = t.name(s.name)
	if s.write {
		e.Outcome = outcomeNames[s.outcome]
	} else {
		e.Outcome = "read"
	}
	return e
}

// evidence is the span or record behind history line n.
func (tr *TraceResult) evidence(n int) Evidence {
	t := tr.t
	if n >= 1 && n <= len(t.at) {
		return t.spanEvidence(t.spans.at(t.at[n-1]))
	}
	r := t.records[n-len(t.at)-1]
	return Evidence{File: t.recName, Line: int(r.line), Object: t.name(r.object), Status: t.name(r.status), Intent: t.name(r.intent)}
}

// Len is how many anomalies the traces show.
func (tr *TraceResult) Len() int { return len(tr.order) }

// Each calls fn with each anomaly, in the order of the first span or
// record that shows it, until fn returns false.
func (tr *TraceResult) Each(fn func(TraceAnomaly) bool) {
	byRef := map[int32]Anomaly{}
	if len(tr.res.refs) > 0 {
		j := int32(0)
		tr.res.Each(func(a Anomaly) bool {
			byRef[j] = a
			j++
			return true
		})
	}
	for _, e := range tr.order {
		var ta TraceAnomaly
		if e.resend >= 0 {
			ta = tr.resendAnomaly(tr.resends[e.resend])
		} else {
			a := byRef[e.ref]
			ta = TraceAnomaly{Kind: a.Kind, Intent: a.Intent, Message: a.Message, Others: a.Others, Objects: a.Objects, Keys: a.Keys}
			if a.Kind == OKNoEffect {
				for _, o := range a.Objects {
					if tr.unlinked[o] {
						ta.Message += fmt.Sprintf(" (%s is in %s, but names no intent in metadata[%s], so it was left out of the join)", o, tr.RecordsName, tr.t.opts.IntentField)
					}
				}
			}
			if a.Kind == Duplicate {
				// The attempts that made the effects, then the effects.
				for _, w := range tr.t.writesOf(a.Intent) {
					ta.Evidence = append(ta.Evidence, tr.t.spanEvidence(tr.t.spans.at(w)))
				}
			}
			last := Evidence{}
			for _, n := range a.Lines {
				ev := tr.evidence(n)
				if ev != last {
					ta.Evidence = append(ta.Evidence, ev)
				}
				last = ev
			}
		}
		if !fn(ta) {
			return
		}
	}
}

// WriteText writes the report for people: each anomaly, the spans and
// records under it, then a summary.
func (tr *TraceResult) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	tr.Each(func(a TraceAnomaly) bool {
		fmt.Fprintf(bw, "%s: %s: %s\n", a.Kind, termtext.CleanLine(a.Intent), termtext.CleanLine(a.Message))
		for _, e := range a.Evidence {
			fmt.Fprintf(bw, "  %s\n", termtext.CleanLine(e.words()))
		}
		return true
	})
	verdict := "no anomaly"
	if n := tr.Len(); n > 0 {
		verdict = termtext.Plural(n, "anomaly")
		if n > 1 {
			verdict = strconv.Itoa(n) + " anomalies"
		}
	}
	fmt.Fprintf(bw, "%s: %s, %s: %s and %s of %s", termtext.CleanLine(tr.Name), termtext.Plural(tr.Stats.Lines, "line"), termtext.Plural(tr.Stats.Spans, "span"),
		termtext.Plural(tr.Writes, "write-tool call"), termtext.Plural(tr.Reads, "read"), termtext.Plural(tr.Intents, "intent"))
	if tr.RecordsName != "" {
		fmt.Fprintf(bw, "; %s: %s", termtext.CleanLine(tr.RecordsName), termtext.Plural(tr.Records, "refund"))
		if tr.Unlinked > 0 {
			fmt.Fprintf(bw, " (and %d naming no intent in metadata[%s], left out)", tr.Unlinked, tr.t.opts.IntentField)
		}
	} else {
		bw.WriteString("; no provider records given, so only what the spans show")
	}
	fmt.Fprintf(bw, ": %s\n", verdict)
	if tr.Unkeyed {
		fmt.Fprintf(bw, "%s: no call's arguments carry %q (--key-field): each attempt is taken as sent with no key\n", termtext.CleanLine(tr.Name), tr.t.opts.KeyField)
	}
	if tr.HasMore {
		fmt.Fprintf(bw, "%s: its last page says has_more: true; refunds after it are not in the file, so an effect may be missing from the join\n", termtext.CleanLine(tr.RecordsName))
	}
	return bw.Flush()
}

// words is the evidence in one line: where, then what.
func (e Evidence) words() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	if e.SpanID != "" {
		fmt.Fprintf(&b, "  span %s %s", e.SpanID, strconv.Quote(e.Name))
		if !strings.Contains(e.Name, e.Tool) {
			fmt.Fprintf(&b, " (%s)", e.Tool)
		}
		if e.CallID != "" {
			fmt.Fprintf(&b, " call %s", strconv.Quote(e.CallID))
		}
		fmt.Fprintf(&b, "  %s", e.Outcome)
		if e.Object != "" {
			fmt.Fprintf(&b, " %s", e.Object)
			if e.Status != "" {
				fmt.Fprintf(&b, " (%s)", e.Status)
			}
		}
		fmt.Fprintf(&b, "  key %s", keyWords(e.Key))
		if e.Note != "" {
			fmt.Fprintf(&b, "  %s", e.Note)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "  refund %s (%s) for %s", e.Object, e.Status, e.Intent)
	return b.String()
}

// WriteJSON writes the result as one JSON object: the counts and the
// anomalies, each with its evidence.
func (tr *TraceResult) WriteJSON(w io.Writer) error {
	out := struct {
		Traces    string         `json:"traces"`
		Records   string         `json:"records,omitempty"`
		Lines     int            `json:"lines"`
		Spans     int            `json:"spans"`
		Writes    int            `json:"write_calls"`
		Reads     int            `json:"reads"`
		Intents   int            `json:"intents"`
		Refunds   int            `json:"refunds"`
		Unlinked  int            `json:"refunds_without_intent,omitempty"`
		HasMore   bool           `json:"records_has_more,omitempty"`
		Anomalies []TraceAnomaly `json:"anomalies"`
	}{Traces: tr.Name, Records: tr.RecordsName, Lines: tr.Stats.Lines, Spans: tr.Stats.Spans, Writes: tr.Writes, Reads: tr.Reads, Intents: tr.Intents,
		Refunds: tr.Records, Unlinked: tr.Unlinked, HasMore: tr.HasMore, Anomalies: []TraceAnomaly{}}
	tr.Each(func(a TraceAnomaly) bool {
		out.Anomalies = append(out.Anomalies, a)
		return true
	})
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(termtext.EscapeHidden(b), '\n'))
	return err
}
