package conform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// outputLimit is how much of each stream of a run the report keeps.
const outputLimit = 64 << 10

// lineLimit bounds one line of standard output read for beliefs.
const lineLimit = 64 << 10

// child is one run of the client command, in a process group of its own
// so that everything it starts dies with it.
type child struct {
	cmd  *exec.Cmd
	out  *lineWriter
	errs *capped
	done chan struct{}
	err  error

	mu     sync.Mutex
	killed string
}

// start runs argv with env in a process group of its own. The child is
// killed, with its group, when ctx ends.
func start(ctx context.Context, argv, env []string, dir string) (*child, error) {
	c := &child{out: &lineWriter{}, errs: &capped{}, done: make(chan struct{})}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdout, cmd.Stderr = c.out, c.errs
	cmd.Stdin = nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A grandchild that keeps the output open cannot hold Wait up.
	cmd.WaitDelay = time.Second
	c.cmd = cmd
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		c.err = cmd.Wait()
		// Whatever the command left running goes with it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		close(c.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			c.kill(killWords(ctx))
		case <-c.done:
		}
	}()
	return c, nil
}

// killReason is the cause a context is ended with to say why the runs
// under it are killed.
type killReason string

func (k killReason) Error() string { return string(k) }

// killWords says why ctx ended: its killReason, else an interruption.
func killWords(ctx context.Context) string {
	var kr killReason
	if errors.As(context.Cause(ctx), &kr) {
		return string(kr)
	}
	return "when conform was interrupted"
}

// kill ends the child's whole process group with SIGKILL and waits until
// the child is gone. The first reason given is kept.
func (c *child) kill(why string) {
	select {
	case <-c.done:
		return // it ended on its own
	default:
	}
	c.mu.Lock()
	if c.killed == "" {
		c.killed = why
	}
	c.mu.Unlock()
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.done
}

// reason is why the child was killed, "" when it was not.
func (c *child) reason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.killed
}

// exitCode is the child's exit code, -1 when a signal ended it.
func (c *child) exitCode() int {
	var ee *exec.ExitError
	switch {
	case c.err == nil:
		return 0
	case errors.As(c.err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// capped keeps the first outputLimit bytes written to it.
type capped struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	lost int
}

func (w *capped) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	room := outputLimit - w.buf.Len()
	if room >= len(p) {
		w.buf.Write(p)
	} else {
		w.buf.Write(p[:max(room, 0)])
		w.lost += len(p) - max(room, 0)
	}
	return len(p), nil
}

func (w *capped) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.buf.String()
	if w.lost > 0 {
		s += fmt.Sprintf("\n[%s more bytes not kept]\n", strconv.Itoa(w.lost))
	}
	return s
}

// lineWriter keeps standard output as capped does and also splits all of
// it into lines, for the beliefs: a belief line after a lot of logging
// is still read.
type lineWriter struct {
	capped
	lines   []string
	partial []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n, _ := w.capped.Write(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.partial = appendBounded(w.partial, p)
			break
		}
		w.partial = appendBounded(w.partial, p[:i])
		w.lines = append(w.lines, string(w.partial))
		w.partial = w.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

func appendBounded(b, p []byte) []byte {
	return append(b, p[:min(len(p), max(lineLimit-len(b), 0))]...)
}

// allLines are the lines written, the last one even without its newline.
func (w *lineWriter) allLines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		return append(append([]string{}, w.lines...), string(w.partial))
	}
	return w.lines
}

// findCommand checks that argv[0] names a program that can be run, the
// way exec would find it.
func findCommand(name string) error {
	if name == "" {
		return errors.New("the client command is empty; give it after --, e.g. replaylab conform -- ./my-client")
	}
	if _, err := exec.LookPath(name); err != nil {
		var what string
		switch {
		case errors.Is(err, exec.ErrNotFound):
			what = "not found on PATH"
		case errors.Is(err, os.ErrNotExist):
			what = "no such file"
		case errors.Is(err, os.ErrPermission):
			what = "not executable (chmod +x it, or run it through its interpreter, e.g. -- node client.js)"
		default:
			what = err.Error()
		}
		return fmt.Errorf("client command %q: %s; give a program on PATH or a path to one, after --", name, what)
	}
	return nil
}
