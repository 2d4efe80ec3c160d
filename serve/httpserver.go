package serve

import (
	"context"
	"net/http"
	"time"
)

// HTTPServer is an http.Server for a provider, with its gate: open
// connections and bytes of request bodies bounded by Limits, each body
// read within BodyTime. It can stop without waiting on connections that
// never sent a request. net/http's Shutdown waits up to 5 s for such a
// connection, in case a request is on its way; an MCP client that
// reconnects its event stream as it closes opens one, and serve would
// take that long to stop.
type HTTPServer struct {
	*http.Server
	gate *gate
}

// NewHTTPServer serves h with serve's limits: headers within 10 s and
// MaxHeaderBytes, a whole request within 30 s, and the gate's Limits at
// their defaults.
func NewHTTPServer(h http.Handler) *HTTPServer {
	return NewHTTPServerLimits(h, Limits{})
}

// NewHTTPServerLimits is NewHTTPServer with other Limits; a zero field
// takes its default.
func NewHTTPServerLimits(h http.Handler, l Limits) *HTTPServer {
	g := newGate(l)
	s := &HTTPServer{gate: g}
	s.Server = &http.Server{Handler: g.bodies(h), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, MaxHeaderBytes: MaxHeaderBytes,
		ConnContext: g.admit, ConnState: g.track}
	return s
}

// Cuts is how many connections the gate has cut or refused for room.
func (s *HTTPServer) Cuts() int {
	s.gate.mu.Lock()
	defer s.gate.mu.Unlock()
	return s.gate.cuts
}

// Stop stops taking connections, closes those that never sent a request,
// gives the requests being answered grace to end, then closes the rest.
func (s *HTTPServer) Stop(grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(ctx) }()
	s.gate.closeFresh()
	if <-done != nil {
		_ = s.Close()
	}
}
