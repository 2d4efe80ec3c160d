package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/atomicfile"
)

// RunConfig is one run of `replaylab serve`: the provider's options and
// how it meets the world.
type RunConfig struct {
	Options Options
	// Addr is where to listen (HOST:PORT), unless Stdio.
	Addr string
	// Stdio speaks MCP over In and Out instead of listening; the banner
	// goes to Log.
	Stdio bool
	// DB keeps the provider's state in that bbolt file; "" keeps it in
	// memory.
	DB string
	// Until stops the run after that many API requests; 0 runs until the
	// context ends or a signal (SIGINT, SIGTERM) comes.
	Until int
	// TLS serves HTTPS with a certificate made at start (selfSigned), as
	// a client that speaks only HTTPS (Adyen's library) needs; its PEM is
	// written to TLSCert when that names a file.
	TLS      bool
	TLSCert  string
	In       io.Reader
	Out, Log io.Writer
}

// SetupError is a run that could not start: the options, the database or
// the address would not do. Its words say what would.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

// StorageError is a run the database stopped: what is on disk is what was
// written before, and a restart recovers it.
type StorageError struct{ Err error }

func (e *StorageError) Error() string {
	return fmt.Sprintf("stopped: %v; what is on disk is what was written before, and a restart recovers it", e.Err)
}
func (e *StorageError) Unwrap() error { return e.Err }

// Run is serve's whole lifecycle: it opens the provider (durable with
// DB), prints the banner to Log, serves HTTP or stdio until the context
// ends, a signal comes or Until requests are served, then shuts down in
// order (held replies released, requests in flight given a moment) and
// returns the session, settled. Over stdio a stream that ends in error
// still returns the session with the error.
func Run(ctx context.Context, cfg RunConfig) (*export.Session, error) {
	// What a serve killed while it sent a session left behind.
	atomicfile.Sweep(os.TempDir(), SessionTempPrefix)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, done := context.WithCancel(ctx)
	defer done()
	// The run stops on a failed durable write, and after Until
	// requests; a caller's own hooks are told first.
	o := cfg.Options
	onFatal, onServed := o.Hooks.OnFatal, o.Hooks.OnServed
	o.Hooks.OnFatal = func(err error) {
		if onFatal != nil {
			onFatal(err)
		}
		done()
	}
	if cfg.Until > 0 {
		o.Hooks.OnServed = func(n int) {
			if onServed != nil {
				onServed(n)
			}
			if n >= cfg.Until {
				done()
			}
		}
	}
	var (
		srv *Server
		rec *Recovered
		err error
	)
	if cfg.DB != "" {
		srv, rec, err = Open(o, cfg.DB)
	} else {
		srv, err = New(o)
	}
	if err != nil {
		return nil, &SetupError{err}
	}
	defer srv.Close()
	defer LimitMemory()()
	var ln net.Listener
	if !cfg.Stdio {
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return nil, &SetupError{listenError(cfg.Addr, err)}
		}
		if cfg.TLS {
			tln, certPEM, err := WrapTLS(ln, time.Now())
			if err == nil && cfg.TLSCert != "" {
				err = atomicfile.WriteFile(cfg.TLSCert, certPEM, true)
			}
			if err != nil {
				ln.Close()
				return nil, &SetupError{fmt.Errorf("--tls: %w", err)}
			}
			ln = tln
		}
	}
	errc := make(chan error, 1)
	var hs *HTTPServer
	if cfg.Stdio {
		// A host that closes its end of the stream must not kill serve
		// before it has settled and recorded the session: a write there
		// fails instead (the answer is gone).
		signal.Ignore(syscall.SIGPIPE)
		go func() { errc <- srv.ServeStdio(ctx, io.NopCloser(cfg.In), nopWriteCloser{cfg.Out}) }()
		fmt.Fprint(cfg.Log, Banner(nil, srv, cfg.Until))
	} else {
		hs = NewHTTPServer(srv)
		go func() { errc <- hs.Serve(ln) }()
		banner := Banner(ln.Addr(), srv, cfg.Until)
		if cfg.TLS {
			first, rest, _ := strings.Cut(banner, "\n")
			banner = strings.ReplaceAll(first, "http://", "https://") + "\n" + rest
			if cfg.TLSCert != "" {
				banner += "  TLS: a certificate made at start, for 127.0.0.1, ::1 and localhost; its PEM is in " + cfg.TLSCert + "\n"
			} else {
				banner += "  TLS: a certificate made at start, for 127.0.0.1, ::1 and localhost (not trusted by anything: turn your client's check off for tests, or give --tls-cert FILE to trust it)\n"
			}
		}
		fmt.Fprint(cfg.Log, banner)
	}
	if cfg.DB != "" {
		fmt.Fprintln(cfg.Log, "  "+DBWords(cfg.DB, rec))
	}

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	// From here a second Ctrl-C ends the process at once.
	stop()
	// Held replies end now; then the server stops taking requests and
	// waits a little for the ones it is answering, then closes the rest.
	srv.Release()
	if hs != nil {
		hs.Stop(3 * time.Second)
		if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
			return nil, fmt.Errorf("serving on %s: %w", ln.Addr(), serveErr)
		}
	}
	// Over stdio the session ends however the stream did: what was served
	// is settled, reported and recorded all the same.
	var stdioErr error
	if cfg.Stdio && serveErr != nil && !errors.Is(serveErr, io.EOF) && !errors.Is(serveErr, context.Canceled) {
		stdioErr = fmt.Errorf("serving MCP over standard input and output: %w", serveErr)
		fmt.Fprintln(cfg.Log, "replaylab serve: "+stdioErr.Error()+"; the session so far follows")
	}
	sess := srv.End()
	if err := srv.Err(); err != nil {
		return nil, &StorageError{err}
	}
	return sess, stdioErr
}

// nopWriteCloser is a writer that the MCP transport may close without
// closing the process's standard output.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// listenError says why serve cannot listen, and what to do.
func listenError(addr string, err error) error {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("--addr %s: the address is in use (another replaylab serve?); stop that one, or give another port, e.g. --addr 127.0.0.1:0 for a free one", addr)
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("--addr %s: not allowed to listen there (ports below 1024 need privileges); give a port above 1023", addr)
	}
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return fmt.Errorf("--addr %s: %s (expected HOST:PORT, e.g. 127.0.0.1:12111)", addr, ae.Err)
	}
	return fmt.Errorf("--addr %s: %w (expected HOST:PORT, e.g. 127.0.0.1:12111)", addr, atomicfile.Cause(err))
}

// KillAt is the failpoint REPLAYLAB_FAILPOINT names, as POINT:N: the
// process kills itself (SIGKILL, as kill -9 does) the Nth time it passes
// POINT (before-commit, after-commit or after-reply). The recovery test
// uses it to crash at known boundaries.
func KillAt(spec string) func(string) {
	point, n := spec, 1
	if p, count, ok := strings.Cut(spec, ":"); ok {
		point = p
		fmt.Sscan(count, &n)
	}
	var mu sync.Mutex
	seen := 0
	return func(at string) {
		if at != point {
			return
		}
		mu.Lock()
		seen++
		hit := seen == n
		mu.Unlock()
		if hit {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal ends the process
		}
	}
}
