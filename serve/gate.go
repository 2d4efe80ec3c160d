package serve

// The gate: how many connections serve keeps open and how many bytes of
// request bodies it holds at once, and which connection gives way when a
// newcomer needs the room. A client that opens connections and sends
// its bodies a byte at a time would otherwise hold memory without bound;
// a cap alone would let it starve everyone else, so the connection that
// has stalled longest is cut instead of the newcomer being refused.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults for Limits.
const (
	// DefaultMaxConns bounds the open connections.
	DefaultMaxConns = 512
	// DefaultBodyBudget bounds the bytes of request bodies held at once.
	DefaultBodyBudget = 16 << 20
	// DefaultBodyTime is how long a request's body may take to arrive
	// after its headers: 512 KiB, the largest form, at 52 KiB/s.
	DefaultBodyTime = 10 * time.Second
)

// Limits bound what serve holds for its connections.
type Limits struct {
	// MaxConns is how many connections are kept open at once. A
	// connection past it cuts the one that has waited longest on its
	// client (for a request, for the rest of a body, or idle); one that
	// is being answered is never cut.
	MaxConns int
	// BodyBudget is how many bytes of request bodies are held at once.
	// A body that needs room past it cuts the body that holds the most,
	// the longest arriving of those.
	BodyBudget int64
	// BodyTime is how long a body may take to arrive after its headers.
	BodyTime time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.BodyBudget <= 0 {
		l.BodyBudget = DefaultBodyBudget
	}
	if l.BodyTime <= 0 {
		l.BodyTime = DefaultBodyTime
	}
	return l
}

// Why a connection was cut.
const (
	cutConns  = "serve was at its limit of %d open connections, and this one had waited longest on its client"
	cutBudget = "serve was at its limit of %s of request bodies held at once, and this body held the most of it"
)

// gate admits connections and reads request bodies against Limits.
type gate struct {
	lim   Limits
	mu    sync.Mutex
	conns map[net.Conn]*gconn
	used  int64 // bytes of bodies reserved
	// freed is closed, and replaced, each time room is given back.
	freed chan struct{}
	// spare holds the chunks given back, for the next bodies: at most
	// BodyBudget of them, as each was reserved when first taken.
	spare []*[chunkSize]byte
	// leaving counts the connections cut that have not closed yet: they
	// are not counted against MaxConns, as they are on their way out.
	leaving int
	cuts    int // connections cut or refused for room
}

// gconn is one open connection as the gate sees it.
type gconn struct {
	c     net.Conn
	state http.ConnState
	// since is when it began to wait on its client: accepted, idle, or
	// a request begun.
	since time.Time
	// reading: its handler is reading the request's body.
	reading bool
	// toCome is how much of the body being read is still to come: its
	// declared length, or its path's limit, less what arrived.
	toCome int64
	// got is how much of it arrived.
	got int64
	// busy: its request is being answered (the body is in); it is not
	// cut.
	busy bool
	held int64 // bytes of body reserved
	// deadline is when the body being read must be in.
	deadline time.Time
	cut      string // why it was cut, "" while it was not
}

type gateKey struct{}

func newGate(l Limits) *gate {
	return &gate{lim: l.withDefaults(), conns: map[net.Conn]*gconn{}, freed: make(chan struct{})}
}

// admit registers a new connection (http.Server.ConnContext), cutting
// the longest-waiting one if the limit is reached; with none that may be
// cut, the newcomer is answered 503 and closed.
func (g *gate) admit(ctx context.Context, c net.Conn) context.Context {
	e := &gconn{c: c, state: http.StateNew, since: time.Now()}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.conns)-g.leaving >= g.lim.MaxConns {
		if v := g.victimLocked(e, false); v != nil {
			g.cutLocked(v, fmt.Sprintf(cutConns, g.lim.MaxConns))
		} else {
			g.cuts++
			e.cut = "full"
			refuseConn(c, g.lim.MaxConns)
			return context.WithValue(ctx, gateKey{}, e)
		}
	}
	g.conns[c] = e
	return context.WithValue(ctx, gateKey{}, e)
}

// refuseConn answers a connection there is no room for, before it sent
// anything, and closes it.
func refuseConn(c net.Conn, max int) {
	body := `{"error":{"type":"api_error","message":"serve has ` + strconv.Itoa(max) + ` connections open, each being answered, and no room for another. Nothing was read or executed; try again shortly."}}` + "\n"
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
	_ = c.Close()
}

// track follows a connection's state (http.Server.ConnState).
func (g *gate) track(c net.Conn, st http.ConnState) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.conns[c]
	if e == nil {
		return
	}
	switch st {
	case http.StateActive:
		e.state, e.since, e.busy = st, time.Now(), false
	case http.StateIdle:
		e.state, e.since, e.busy = st, time.Now(), false
		g.releaseLocked(e)
	case http.StateHijacked, http.StateClosed:
		g.releaseLocked(e)
		if e.cut != "" {
			g.leaving--
		}
		delete(g.conns, c)
	}
}

// closeFresh closes the connections that never sent a request.
func (g *gate) closeFresh() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for c, e := range g.conns {
		if e.state == http.StateNew {
			_ = c.Close()
		}
	}
}

// victimLocked is the connection that may be cut to make room for e:
// one not being answered, nor cut already, or nil when there is none.
//
// For a body, it is the one holding the most of the budget, the longest
// arriving of those, and never one that needs no more room than it holds
// (allButIn): a client's ordinary creates keep being read however many
// large bodies stall.
//
// For a connection, it is taken first among large bodies still
// arriving (more than a chunk to come) and small ones that stalled
// (arriving for stallAfter), then among requests not yet
// begun or whose headers are arriving, then among idle connections (one
// costs little and is most likely a client's kept-alive connection,
// which it would have to open anew behind every connection waiting to be
// accepted), and last among small bodies, which are all but in: an
// ordinary create is not cut while anything else may be. Of equals, the
// one that has waited longest on its client.
func (g *gate) victimLocked(e *gconn, bodies bool) *gconn {
	var v *gconn
	for _, o := range g.conns {
		if o == e || o.busy || o.cut != "" || bodies && (o.held == 0 || allButIn(o)) {
			continue
		}
		switch {
		case v == nil:
			v = o
		case bodies && o.held != v.held:
			if o.held > v.held {
				v = o
			}
		case !bodies && rank(o) != rank(v):
			if rank(o) < rank(v) {
				v = o
			}
		case o.since.Before(v.since):
			v = o
		}
	}
	return v
}

// allButIn reports whether o's body is a small one (one chunk) that
// needs no more room than it holds, and has not stalled: it is never
// cut for the budget, as cutting it would free little room, and that
// it frees itself in a moment.
func allButIn(o *gconn) bool {
	return o.reading && o.held <= chunkSize && o.toCome <= o.held-o.got && time.Since(o.since) <= stallAfter
}

// stallAfter is how long a small body may take before it counts as
// stalled: an ordinary create's arrives in one read.
const stallAfter = time.Second

// rank orders the connections to cut for room: large bodies arriving
// and small ones stalled, requests not yet begun or whose headers are
// arriving, idle ones, small bodies arriving.
func rank(o *gconn) int {
	switch {
	case o.reading && (o.toCome > chunkSize || time.Since(o.since) > stallAfter):
		return 0
	case o.reading:
		return 3
	case o.state == http.StateIdle:
		return 2
	}
	return 1
}

// cutLocked cuts v: a body being read fails at once, so that its handler
// answers why; any other connection is closed.
func (g *gate) cutLocked(v *gconn, why string) {
	g.cuts++
	g.leaving++
	v.cut = why
	if v.reading {
		// Its handler gives its room back once its read fails.
		_ = v.c.SetReadDeadline(time.Unix(1, 0))
		return
	}
	_ = v.c.Close()
}

func (g *gate) releaseLocked(e *gconn) {
	if e.held == 0 {
		return
	}
	g.used -= e.held
	e.held = 0
	close(g.freed)
	g.freed = make(chan struct{})
}

// reserve takes n bytes of the budget for e's body. To make room it cuts
// the bodies that hold the most, and waits, within e's body time, for
// their handlers to give their chunks back: room is counted free only
// once it is, so the chunks in use never exceed the budget.
func (g *gate) reserve(e *gconn, n int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		if e.cut != "" {
			return errBodyCut
		}
		if g.used+n <= g.lim.BodyBudget {
			g.used += n
			e.held += n
			return nil
		}
		if v := g.victimLocked(e, true); v != nil {
			g.cutLocked(v, fmt.Sprintf(cutBudget, sizeWords(g.lim.BodyBudget)))
			continue
		}
		if !g.leavingBytesLocked() {
			return errBudget
		}
		freed := g.freed
		g.mu.Unlock()
		wait := time.NewTimer(time.Until(e.deadline))
		select {
		case <-freed:
			wait.Stop()
			g.mu.Lock()
		case <-wait.C:
			g.mu.Lock()
			return os.ErrDeadlineExceeded
		}
	}
}

// leavingBytesLocked reports whether a body cut still holds room it is
// about to give back.
func (g *gate) leavingBytesLocked() bool {
	for _, o := range g.conns {
		if o.cut != "" && o.held > 0 {
			return true
		}
	}
	return false
}

func (g *gate) release(e *gconn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.releaseLocked(e)
}

var (
	errBodyCut = errors.New("cut")
	errBudget  = errors.New("over the body budget")
)

// bodyLimit is the most a body on path may hold: MaxMCPBody for MCP,
// MaxBodyBytes for the rest.
func bodyLimit(path string) int64 {
	if path == MCPPath || strings.HasPrefix(path, MCPPath+"/") {
		return MaxMCPBody
	}
	return MaxBodyBytes
}

// bodies reads each request's body, within BodyTime and against the
// budget, before h sees the request; h then reads it from memory. Of a
// body over its path's limit, one byte more than the limit is read, so
// that h's own MaxBytesReader answers it.
func (g *gate) bodies(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e, _ := r.Context().Value(gateKey{}).(*gconn)
		if e == nil || r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			g.answering(e)
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		limit := bodyLimit(r.URL.Path) + 1
		g.mu.Lock()
		e.reading, e.since, e.toCome, e.got = true, time.Now(), limit, 0
		e.deadline = e.since.Add(g.lim.BodyTime)
		if r.ContentLength > 0 {
			e.toCome = min(r.ContentLength, limit)
		}
		g.mu.Unlock()
		_ = rc.SetReadDeadline(e.deadline)
		body, err := g.read(e, r.Body, limit)
		g.mu.Lock()
		e.reading = false
		if e.cut != "" {
			err = errBodyCut
		}
		if err == nil {
			e.busy = true
		}
		why := e.cut
		g.mu.Unlock()
		if err != nil {
			if body != nil {
				body.free()
			}
			g.release(e)
			g.refuseBody(w, r, err, why)
			return
		}
		_ = rc.SetReadDeadline(time.Time{})
		r.Body = body
		// A handler that returns without reading to the end.
		defer body.free()
		h.ServeHTTP(w, r)
	})
}

// answering marks e's request as being answered.
func (g *gate) answering(e *gconn) {
	if e == nil {
		return
	}
	g.mu.Lock()
	e.busy = true
	g.mu.Unlock()
}

// chunkSize is the unit bodies are read in, and the budget taken: a
// body of any size up to it (every ordinary create) takes one chunk.
const chunkSize = 32 << 10

// getChunk is a chunk for a body: one given back before, or a new one.
// The room for it is reserved first, so the chunks in use and kept never
// exceed the budget; a stream of bodies cut for room then costs no
// allocation, and the collector no work (a sync.Pool would drop its
// chunks at each collection, which such a stream makes frequent).
func (g *gate) getChunk() *[chunkSize]byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.spare); n > 0 {
		c := g.spare[n-1]
		g.spare = g.spare[:n-1]
		return c
	}
	return new([chunkSize]byte)
}

// putChunks keeps chunks for the next bodies.
func (g *gate) putChunks(cs []*[chunkSize]byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.spare = append(g.spare, cs...)
}

// read reads body, up to limit bytes, into chunks from getChunk, the
// room for each reserved before it is taken. On an error the chunks are
// given back.
func (g *gate) read(e *gconn, body io.Reader, limit int64) (*heldBody, error) {
	b := &heldBody{g: g, e: e}
	for b.n < limit {
		if b.n == int64(len(b.chunks))*chunkSize {
			if err := g.reserve(e, chunkSize); err != nil {
				b.free()
				return nil, err
			}
			b.chunks = append(b.chunks, g.getChunk())
		}
		c := b.chunks[len(b.chunks)-1]
		off := b.n % chunkSize
		end := min(int64(chunkSize), off+limit-b.n)
		n, err := body.Read(c[off:end])
		b.n += int64(n)
		if n > 0 {
			g.mu.Lock()
			e.toCome = max(e.toCome-int64(n), 0)
			e.got += int64(n)
			g.mu.Unlock()
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.free()
			return nil, err
		}
	}
	return b, nil
}

// refuseBody answers a request whose body was not read: cut, over the
// budget, or too slow. Nothing of it was executed.
func (g *gate) refuseBody(w http.ResponseWriter, r *http.Request, err error, why string) {
	w.Header().Set("Connection", "close")
	kind, msg := refusedRequest, ""
	switch {
	case errors.Is(err, errBodyCut):
		kind, msg = refusedUnavailable, "The request's body was still arriving when "+why+", so it was cut to keep serving other clients. Nothing of the request was executed; send it again."
	case errors.Is(err, errBudget):
		kind, msg = refusedUnavailable, "serve holds at most "+sizeWords(g.lim.BodyBudget)+" of request bodies at once, and the bodies it holds are being answered. Nothing of the request was executed; send it again shortly."
	case errors.Is(err, os.ErrDeadlineExceeded):
		kind, msg = refusedSlow, fmt.Sprintf("The request's body did not arrive within %v of its headers. Nothing of the request was executed; send the whole body at once.", g.lim.BodyTime)
	default:
		msg = "The request's body could not be read (" + err.Error() + "). Nothing of the request was executed."
	}
	e := refuse(kind, "", msg)
	if kind == refusedUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	if bodyLimit(r.URL.Path) == MaxMCPBody {
		writeRPCError(w, e.status(), -32000, msg)
		return
	}
	replyError(w, e)
}

// sizeWords is n bytes in MiB or KiB, whichever is whole.
func sizeWords(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n>>10, 10) + " KiB"
}

// heldBody is a body read in full, handed to the handler. Its chunks are
// kept for the next bodies, and its room given back to the budget, once the handler has
// read it to its end or has returned.
type heldBody struct {
	g      *gate
	e      *gconn
	chunks []*[chunkSize]byte
	n, off int64
}

func (b *heldBody) Read(p []byte) (int, error) {
	if b.off >= b.n {
		b.free()
		return 0, io.EOF
	}
	c := b.chunks[b.off/chunkSize]
	lo := b.off % chunkSize
	hi := min(int64(chunkSize), lo+b.n-b.off)
	n := copy(p, c[lo:hi])
	b.off += int64(n)
	return n, nil
}

func (b *heldBody) Close() error { return nil }

// free gives the chunks and the room back; what is
// read after it is the end.
func (b *heldBody) free() {
	b.g.putChunks(b.chunks)
	b.chunks, b.n, b.off = nil, 0, 0
	b.g.release(b.e)
}
