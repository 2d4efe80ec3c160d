package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/termtext"
)

// stdioDrain bounds how long serve waits, once its input has ended, for
// the calls it read before to be answered.
const stdioDrain = 10 * time.Second

// ServeStdio serves the MCP tools over in and out, one JSON-RPC message a
// line, until in ends or ctx does. A line that is not a JSON-RPC message
// is answered with a JSON-RPC error and skipped: one bad line does not end
// the session. When in ends, the calls already read are answered (a held
// one ends, its reply lost) before the session closes.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	t := s.mcpTools()
	w := &lineWriter{w: out, abandon: make(chan struct{})}
	pr, pw := io.Pipe()
	conn := &stdioConn{t: t, open: map[string]int{}, silenced: map[string]bool{}, idle: make(chan struct{}, 1), awaited: map[string]func(string){}, w: w}
	t.mu.Lock()
	t.stdio = conn
	t.mu.Unlock()
	ran := make(chan struct{})
	defer close(ran)
	go func() {
		conn.filter(in, pw, w)
		// The client is gone: held calls end, the others are answered,
		// then the SDK sees the end of its input. Answers the client
		// does not take within the drain are given up.
		t.endSession("")
		if !conn.drain(stdioDrain) {
			w.giveUp()
		}
		_ = pw.Close()
	}()
	go func() {
		// At stop, answers the client does not take are given up after
		// a moment, so that serve stops.
		select {
		case <-s.stop:
		case <-ctx.Done():
		case <-ran:
			return
		}
		select {
		case <-time.After(stdioGrace):
			w.giveUp()
		case <-ran:
		}
	}()
	err := t.server.Run(ctx, stdioCalls{&mcp.IOTransport{Reader: pr, Writer: nopCloser{w}, MaxLineLength: -1}, conn})
	_ = pr.Close()
	conn.settleAll()
	return err
}

// stdioGrace is how long serve, stopping, waits for a client to take the
// answers it is writing.
const stdioGrace = 3 * time.Second

// errGaveUp is what a write the client never took meets once serve gives
// up on it.
var errGaveUp = errors.New("the client did not take the answer")

// lineWriter writes whole messages to the client, one at a time: the SDK
// writes each message in one Write, and the filter writes its errors
// between them. A write the client does not take can be given up on, so
// that a client that stops reading cannot keep serve from stopping.
type lineWriter struct {
	mu      sync.Mutex
	w       io.Writer
	abandon chan struct{}
	once    sync.Once
}

func (l *lineWriter) giveUp() { l.once.Do(func() { close(l.abandon) }) }

func (l *lineWriter) Write(b []byte) (int, error) {
	select {
	case <-l.abandon:
		return 0, errGaveUp
	default:
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		select {
		case <-l.abandon:
			done <- result{0, errGaveUp}
			return
		default:
		}
		n, err := l.w.Write(b)
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		return r.n, r.err
	case <-l.abandon:
		return 0, errGaveUp
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// stdioConn is the stdio session's side of the provider: it marks each
// call read with its id, for the tool handler, counts the calls not yet
// answered, and drops the answer to a call whose reply the provider lost
// (a cancelled call, one held to the end), as the spec asks and as a lost
// reply is.
type stdioConn struct {
	t *tools
	w *lineWriter
	// initialized: an initialize has gone to the SDK (filter's alone).
	initialized bool
	mu          sync.Mutex
	// open counts the calls forwarded and not yet answered, by id.
	open     map[string]int
	silenced map[string]bool
	idle     chan struct{}
	// awaited holds, per call id, what records the call's answer once
	// the SDK has written it (or could not).
	awaited map[string]func(wire string)
}

// await has record called with the fate of call id's answer when the SDK
// writes it, then done.
func (c *stdioConn) await(id string, record func(wire string), done func()) {
	c.mu.Lock()
	c.awaited[keyID(id)] = func(wire string) { record(wire); done() }
	c.mu.Unlock()
}

// settleAll records every answer still awaited as never written: the
// session is over.
func (c *stdioConn) settleAll() {
	c.mu.Lock()
	left := c.awaited
	c.awaited = map[string]func(string){}
	c.mu.Unlock()
	for _, f := range left {
		f(export.WireGone)
	}
}

// silence drops the answer to call id, whenever the SDK writes it, if
// that call is still open: a cancellation of a call answered already is
// of nothing, and must not silence a later call that reuses its id.
func (c *stdioConn) silence(id string) {
	k := keyID(id)
	c.mu.Lock()
	if c.open[k] > 0 {
		c.silenced[k] = true
	}
	c.mu.Unlock()
}

// drain waits until every call read has been answered, at most d, and
// reports whether they were.
func (c *stdioConn) drain(d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		open := len(c.open)
		c.mu.Unlock()
		if open == 0 {
			return true
		}
		select {
		case <-c.idle:
		case <-deadline.C:
			return false
		}
	}
}

// filter copies the messages of in to the SDK, a line each, and answers a
// line that is not one with a JSON-RPC error of its own.
func (c *stdioConn) filter(in io.Reader, sdk io.Writer, out io.Writer) {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(br, MaxMCPBody)
		switch {
		case errors.Is(err, errLineTooLong):
			_, _ = out.Write(rpcError("null", jsonrpc.CodeInvalidRequest, "The message is over "+strconv.Itoa(MaxMCPBody>>20)+" MiB; it was skipped. No refund's arguments come near that (strings are at most 5000 characters)."))
		case len(bytes.TrimSpace(line)) == 0:
		default:
			line = bytes.TrimSpace(line)
			msg, bad := readMessage(line, c.initialized)
			req, _ := msg.(*jsonrpc.Request)
			if req != nil && (req.Method == "initialize" || req.Method == "server/discover") {
				c.initialized = true
			}
			switch {
			case bad != nil:
				_, _ = out.Write(rpcError(bad.id, bad.code, bad.msg))
			case req != nil && req.IsCall() && !c.take(idJSON(req.ID.Raw())):
				_, _ = out.Write(rpcError(idJSON(req.ID.Raw()), jsonrpc.CodeInvalidRequest, "A call with this id is still being answered; it was skipped. Give each call in flight an id of its own."))
			default:
				if _, werr := sdk.Write(append(line, '\n')); werr != nil {
					return
				}
			}
		}
		if err != nil && !errors.Is(err, errLineTooLong) {
			return
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line (without its newline) of at most max bytes; a
// longer one is read to its end and refused with errLineTooLong. At the
// end of in, the last line comes with io.EOF, whole or not.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !over {
			line = append(line, chunk...)
			if len(line) > max+1 {
				over, line = true, nil
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if over {
			return nil, errLineTooLong
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// readMessage reads line as one JSON-RPC message, or says what is wrong
// with it (checkMessage), as the answer to send; initialized says whether
// the session has been initialized.
func readMessage(line []byte, initialized bool) (jsonrpc.Message, *badMessage) {
	skipped := func(b *badMessage) *badMessage {
		b.msg = strings.TrimSuffix(b.msg, ".") + "; it was skipped."
		return b
	}
	if json.Valid(line) && line[0] == '[' {
		return nil, &badMessage{id: "null", code: jsonrpc.CodeInvalidRequest, msg: "The line is a batch; it was skipped. Send one JSON-RPC 2.0 message a line (batches are not part of MCP since 2025-06-18)."}
	}
	if b := checkMessage(line, initialized); b != nil {
		return nil, skipped(b)
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, skipped(&badMessage{id: "null", code: jsonrpc.CodeInvalidRequest, msg: "The line is not a JSON-RPC 2.0 message (" + termtext.Shorten(err.Error(), 200) + "). Give \"jsonrpc\": \"2.0\", a \"method\", and an \"id\" that is a string or a whole number for a request."})
	}
	return msg, nil
}

// take counts call id open, before the SDK reads it, so that the end of
// the input waits for its answer; false when a call with that id is open
// already (the SDK would drop the second without an answer).
func (c *stdioConn) take(id string) bool {
	k := keyID(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[k] > 0 {
		return false
	}
	c.open[k]++
	return true
}

// stdioCalls is the stdio transport with each call marked with its
// JSON-RPC id, for the tool handler, as the HTTP side marks a POST.
type stdioCalls struct {
	mcp.Transport
	c *stdioConn
}

func (t stdioCalls) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return callConn{conn, t.c}, nil
}

type callConn struct {
	mcp.Connection
	c *stdioConn
}

func (c callConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	req, ok := msg.(*jsonrpc.Request)
	switch {
	case !ok:
	case req.IsCall():
		req.Extra = &mcp.RequestExtra{Header: http.Header{hdrTransport: {export.TransportStdio}, hdrID: {idJSON(req.ID.Raw())}}}
	case req.Method == "notifications/cancelled":
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil && p.RequestID != nil {
			// Nothing is sent for a call the client cancelled.
			c.c.silence(idJSON(p.RequestID))
		}
	}
	return msg, err
}

func (c callConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.Connection.Write(ctx, msg)
	}
	id := keyID(idJSON(resp.ID.Raw()))
	c.c.mu.Lock()
	drop := c.c.silenced[id]
	delete(c.c.silenced, id)
	record := c.c.awaited[id]
	delete(c.c.awaited, id)
	if c.c.open[id]--; c.c.open[id] <= 0 {
		delete(c.c.open, id)
	}
	c.c.mu.Unlock()
	defer func() {
		select {
		case c.c.idle <- struct{}{}:
		default:
		}
	}()
	if drop {
		if record != nil {
			record(export.WireGone)
		}
		return nil
	}
	err := c.Connection.Write(ctx, msg)
	if record != nil {
		wire := export.WireDelivered
		if err != nil {
			wire = export.WireGone
		}
		record(wire)
	}
	return err
}
