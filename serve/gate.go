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
	DefaultMaxConns = 1024
	// DefaultBodyBudget bounds the bytes of request bodies held at once.
	DefaultBodyBudget = 32 << 20
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
	// A body that needs room past it cuts the body that has been
	// arriving longest.
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
	cutBudget = "serve was at its limit of %s of request bodies held at once, and this body had been arriving longest"
)

// gate admits connections and reads request bodies against Limits.
type gate struct {
	lim   Limits
	mu    sync.Mutex
	conns map[net.Conn]*gconn
	used  int64 // bytes of bodies reserved
	cuts  int   // connections cut or refused for room
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
	// busy: its request is being answered (the body is in); it is not
	// cut.
	busy bool
	held int64  // bytes of body reserved
	cut  string // why it was cut, "" while it was not
}

type gateKey struct{}

func newGate(l Limits) *gate {
	return &gate{lim: l.withDefaults(), conns: map[net.Conn]*gconn{}}
}

// admit registers a new connection (http.Server.ConnContext), cutting
// the longest-waiting one if the limit is reached; with none that may be
// cut, the newcomer is answered 503 and closed.
func (g *gate) admit(ctx context.Context, c net.Conn) context.Context {
	e := &gconn{c: c, state: http.StateNew, since: time.Now()}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.conns) >= g.lim.MaxConns {
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

// victimLocked is the connection that has waited longest on its client
// and may be cut, other than e; with bodies, only one holding body
// bytes. nil when there is none.
func (g *gate) victimLocked(e *gconn, bodies bool) *gconn {
	var v *gconn
	for _, o := range g.conns {
		if o == e || o.busy || o.cut != "" || bodies && o.held == 0 {
			continue
		}
		if v == nil || o.since.Before(v.since) {
			v = o
		}
	}
	return v
}

// cutLocked cuts v: a body being read fails at once, so that its handler
// answers why; any other connection is closed.
func (g *gate) cutLocked(v *gconn, why string) {
	g.cuts++
	v.cut = why
	g.releaseLocked(v)
	if v.reading {
		_ = v.c.SetReadDeadline(time.Unix(1, 0))
		return
	}
	_ = v.c.Close()
}

func (g *gate) releaseLocked(e *gconn) {
	g.used -= e.held
	e.held = 0
}

// reserve takes n bytes of the budget for e's body, cutting the bodies
// that have been arriving longest to make room.
func (g *gate) reserve(e *gconn, n int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e.cut != "" {
		return errBodyCut
	}
	for g.used+n > g.lim.BodyBudget {
		v := g.victimLocked(e, true)
		if v == nil {
			return errBudget
		}
		g.cutLocked(v, fmt.Sprintf(cutBudget, sizeWords(g.lim.BodyBudget)))
	}
	g.used += n
	e.held += n
	return nil
}

func (g *gate) release(e *gconn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.releaseLocked(e)
}

var (
	errBodyCut    = errors.New("cut")
	errBudget = errors.New("over the body budget")
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
		g.mu.Lock()
		e.reading, e.since = true, time.Now()
		g.mu.Unlock()
		_ = rc.SetReadDeadline(time.Now().Add(g.lim.BodyTime))
		data, err := g.read(e, r.Body, r.ContentLength, bodyLimit(r.URL.Path)+1)
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
			g.release(e)
			g.refuseBody(w, r, err, why)
			return
		}
		_ = rc.SetReadDeadline(time.Time{})
		r.Body = &heldBody{g: g, e: e, data: data}
		defer g.release(e)
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

// read reads up to limit bytes of body: a declared length at once, a
// chunked one as it comes, each byte of room reserved first.
func (g *gate) read(e *gconn, body io.Reader, declared, limit int64) ([]byte, error) {
	if declared > 0 {
		n := min(declared, limit)
		if err := g.reserve(e, n); err != nil {
			return nil, err
		}
		buf := make([]byte, n)
		_, err := io.ReadFull(body, buf)
		return buf, err
	}
	var buf []byte
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			grow := min(max(int64(cap(buf)), 4<<10), limit-int64(cap(buf)))
			if err := g.reserve(e, grow); err != nil {
				return nil, err
			}
			nb := make([]byte, len(buf), int64(cap(buf))+grow)
			copy(nb, buf)
			buf = nb
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// refuseBody answers a request whose body was not read: cut, over the
// budget, or too slow. Nothing of it was executed.
func (g *gate) refuseBody(w http.ResponseWriter, r *http.Request, err error, why string) {
	w.Header().Set("Connection", "close")
	status, msg := http.StatusBadRequest, ""
	switch {
	case errors.Is(err, errBodyCut):
		status, msg = http.StatusServiceUnavailable, "The request's body was still arriving when "+why+", so it was cut to keep serving other clients. Nothing of the request was executed; send it again."
	case errors.Is(err, errBudget):
		status, msg = http.StatusServiceUnavailable, "serve holds at most "+sizeWords(g.lim.BodyBudget)+" of request bodies at once, and the bodies it holds are being answered. Nothing of the request was executed; send it again shortly."
	case errors.Is(err, os.ErrDeadlineExceeded):
		status, msg = http.StatusRequestTimeout, fmt.Sprintf("The request's body did not arrive within %v of its headers. Nothing of the request was executed; send the whole body at once.", g.lim.BodyTime)
	default:
		msg = "The request's body could not be read (" + err.Error() + "). Nothing of the request was executed."
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	if bodyLimit(r.URL.Path) == MaxMCPBody {
		writeRPCError(w, status, -32000, msg)
		return
	}
	t := "invalid_request_error"
	if status == http.StatusServiceUnavailable {
		t = "api_error"
	}
	replyError(w, &apiError{Status: status, Type: t, Message: msg})
}

// sizeWords is n bytes in MiB or KiB, whichever is whole.
func sizeWords(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n>>10, 10) + " KiB"
}

// heldBody is a body read in full, handed to the handler; the budget's
// room is given back once the handler has read it to its end.
type heldBody struct {
	g    *gate
	e    *gconn
	data []byte
	off  int
}

func (b *heldBody) Read(p []byte) (int, error) {
	if b.off >= len(b.data) {
		if b.data != nil {
			b.data = nil
			b.g.release(b.e)
		}
		return 0, io.EOF
	}
	n := copy(p, b.data[b.off:])
	b.off += n
	return n, nil
}

func (b *heldBody) Close() error { return nil }
