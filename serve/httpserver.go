package serve

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// HTTPServer is an http.Server for a provider that can stop without
// waiting on connections that never sent a request. net/http's Shutdown
// waits up to 5 s for such a connection, in case a request is on its way;
// an MCP client that reconnects its event stream as it closes opens one,
// and serve would take that long to stop.
type HTTPServer struct {
	*http.Server
	mu    sync.Mutex
	fresh map[net.Conn]bool
}

// NewHTTPServer serves h with serve's limits: headers within 10 s and
// MaxHeaderBytes, a whole request within 30 s.
func NewHTTPServer(h http.Handler) *HTTPServer {
	s := &HTTPServer{fresh: map[net.Conn]bool{}}
	s.Server = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, MaxHeaderBytes: MaxHeaderBytes,
		ConnState: func(c net.Conn, st http.ConnState) {
			s.mu.Lock()
			defer s.mu.Unlock()
			if st == http.StateNew {
				s.fresh[c] = true
			} else {
				delete(s.fresh, c)
			}
		}}
	return s
}

// Stop stops taking connections, closes those that never sent a request,
// gives the requests being answered grace to end, then closes the rest.
func (s *HTTPServer) Stop(grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(ctx) }()
	s.mu.Lock()
	for c := range s.fresh {
		_ = c.Close()
	}
	s.mu.Unlock()
	if <-done != nil {
		_ = s.Close()
	}
}
