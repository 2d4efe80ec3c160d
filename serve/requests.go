package serve

import (
	"iter"
	"math"
	"net/http"
	"slices"
	"sync"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// requestLog holds a session's requests, compactly and in chunks of a
// fixed size: it grows without copying what it holds, so a session of
// 100,000 requests never needs room for two copies of itself, and each
// request keeps its words (kind, wire, fault, what the provider did, the
// error) as small numbers into one table rather than strings of its own.
type requestLog struct {
	chunks [][]storedRequest
	n      int
	// lastShown is the refunds the last list showed: a client polling a
	// list is shown the same ones again, and they are kept once.
	lastShown []missions.EvidenceObject
}

// storedRequest is an export.SessionRequest as the log keeps it: 160
// bytes where the exported form takes 264. A session's status and delay
// are checked to fit (export.Session's check) before they are kept.
type storedRequest struct {
	tick                         int
	intent, key, digest, payload string
	response                     *ledger.Response
	shown                        []missions.EvidenceObject
	seq, delay, again            int32
	status                       int16
	kind, wire, fixture          word
	provider, err                word
	resolve                      ledger.Status
	cut                          bool
	// call is the MCP tool call that carried the request, if one did.
	call *export.ToolCall
	// extra is what few requests have: the trace context the client
	// sent, how a held reply ended. A pointer, so that the many requests
	// without keep 8 bytes for it.
	extra *requestExtra
}

// requestExtra is what few requests carry.
type requestExtra struct {
	trace  string
	held   *export.HeldEnd
	repeat *export.Repeat
}

// extraOf is r's trace, held end and repeat, or nil for none.
func extraOf(r export.SessionRequest) *requestExtra {
	if r.Traceparent == "" && r.Held == nil && r.Repeat == nil {
		return nil
	}
	return &requestExtra{trace: r.Traceparent, held: r.Held, repeat: r.Repeat}
}

// word is an index into words: one of the few strings a request's
// fields take (kinds, wires, fixtures, ledger actions, error words).
type word uint32

var words = struct {
	sync.Mutex
	list  []string
	index map[string]word
}{list: []string{""}, index: map[string]word{"": 0}}

func wordOf(s string) word {
	words.Lock()
	defer words.Unlock()
	if w, ok := words.index[s]; ok {
		return w
	}
	w := word(len(words.list))
	words.list = append(words.list, s)
	words.index[s] = w
	return w
}

func (w word) String() string {
	words.Lock()
	defer words.Unlock()
	return words.list[w]
}

const requestChunk = 1024

func (l *requestLog) pack(r export.SessionRequest) storedRequest {
	shown := r.Shown
	if len(shown) > 1 {
		if slices.Equal(shown, l.lastShown) {
			shown = l.lastShown
		} else {
			l.lastShown = shown
		}
	}
	fault := string(r.Fixture)
	if r.ReadFault != "" {
		// A read has no fixture: the slot keeps its read fault.
		fault = string(r.ReadFault)
	}
	return storedRequest{
		tick: r.Tick, intent: r.Intent, key: r.Key, digest: r.Digest, payload: r.Payload,
		response: r.Response, shown: shown, seq: int32(r.Seq), delay: int32(r.Delay), status: int16(r.Status),
		kind: wordOf(r.Kind), wire: wordOf(r.Wire), fixture: wordOf(fault),
		provider: wordOf(r.Provider), err: wordOf(r.Error), resolve: r.Resolve, cut: r.Cut, call: r.Call, extra: extraOf(r),
		again: int32(r.Again),
	}
}

func (q *storedRequest) unpack() export.SessionRequest {
	r := q.unpackAll()
	if r.Kind == export.RequestRetrieve || r.Kind == export.RequestList {
		r.ReadFault, r.Fixture = missions.ReadFault(r.Fixture), ""
	}
	return r
}

func (q *storedRequest) unpackAll() export.SessionRequest {
	var (
		tp     string
		held   *export.HeldEnd
		repeat *export.Repeat
	)
	if q.extra != nil {
		tp, held, repeat = q.extra.trace, q.extra.held, q.extra.repeat
	}
	return export.SessionRequest{Traceparent: tp, Held: held, Repeat: repeat,
		Seq: int(q.seq), Tick: q.tick, Kind: q.kind.String(), Intent: q.intent, Key: q.key, Digest: q.digest, Payload: q.payload,
		Fixture: missions.Fixture(q.fixture.String()), Delay: int(q.delay), Resolve: q.resolve, Provider: q.provider.String(),
		Response: q.response, Wire: q.wire.String(), Status: int(q.status), Error: q.err.String(), Shown: q.shown, Cut: q.cut, Call: q.call,
		Again: int(q.again),
	}
}

// add appends r and returns its index.
func (l *requestLog) add(r export.SessionRequest) int {
	if l.n%requestChunk == 0 {
		l.chunks = append(l.chunks, make([]storedRequest, 0, requestChunk))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, l.pack(r))
	l.n++
	return l.n - 1
}

func (l *requestLog) len() int { return l.n }

// pop drops the last request.
func (l *requestLog) pop() {
	last := &l.chunks[len(l.chunks)-1]
	*last = (*last)[:len(*last)-1]
	if len(*last) == 0 {
		l.chunks = l.chunks[:len(l.chunks)-1]
	}
	l.n--
}

// again counts n more requests alike request i on it.
func (l *requestLog) again(i, n int) {
	l.chunks[i/requestChunk][i%requestChunk].again += int32(n)
}

// alike reports whether request r, answered as it shows, is request q
// again, answered alike, so that the session may count it on q
// (SessionRequest.Again) rather than keep it: the same read or refused
// request over REST, met by no fault, carrying no trace context, its
// reply delivered with the same status, error and refunds shown. A
// retrieve that found no refund is alike any other, whatever id it
// named: it shows nothing of the ledger.
func alike(q, r export.SessionRequest) bool {
	switch {
	case !export.CountsAgain(r.Kind), q.Kind != r.Kind, q.Again >= math.MaxInt32,
		q.Wire != export.WireDelivered || r.Wire != export.WireDelivered,
		q.Call != nil || r.Call != nil, q.Traceparent != "" || r.Traceparent != "",
		q.ReadFault != "" || r.ReadFault != "", q.Held != nil || r.Held != nil,
		q.Intent != r.Intent || q.Key != r.Key || q.Cut != r.Cut,
		q.Status != r.Status || q.Error != r.Error || !slices.Equal(q.Shown, r.Shown):
		return false
	}
	return q.Payload == r.Payload || (r.Kind == export.RequestRetrieve && r.Status == http.StatusNotFound)
}

// get is request i.
func (l *requestLog) get(i int) export.SessionRequest {
	return l.chunks[i/requestChunk][i%requestChunk].unpack()
}

// set replaces request i.
func (l *requestLog) set(i int, r export.SessionRequest) {
	l.chunks[i/requestChunk][i%requestChunk] = l.pack(r)
}

// all yields the requests in order.
func (l *requestLog) all() iter.Seq[export.SessionRequest] {
	return func(yield func(export.SessionRequest) bool) {
		for _, ch := range l.chunks {
			for j := range ch {
				if !yield(ch[j].unpack()) {
					return
				}
			}
		}
	}
}

// slice is a copy of the requests as one slice.
func (l *requestLog) slice() []export.SessionRequest {
	out := make([]export.SessionRequest, 0, l.n)
	for r := range l.all() {
		out = append(out, r)
	}
	return out
}
