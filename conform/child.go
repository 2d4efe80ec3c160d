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
	// A grandchild that keeps the output open cannot hold Wait up for
	// long; the group kill after Wait ends it.
	cmd.WaitDelay = 200 * time.Millisecond
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
// the child is gone. The first reason given is kept. It reports whether
// the child was still running.
func (c *child) kill(why string) bool {
	select {
	case <-c.done:
		return false // it ended on its own
	default:
	}
	c.mu.Lock()
	if c.killed == "" {
		c.killed = why
	}
	c.mu.Unlock()
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.done
	return true
}

// running reports whether the child has not ended yet.
func (c *child) running() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
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
	case errors.Is(c.err, exec.ErrWaitDelay) && c.cmd.ProcessState != nil:
		// It exited; something it left behind held its output open.
		return c.cmd.ProcessState.ExitCode()
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

// beliefBytesLimit bounds the belief lines kept from one run.
const beliefBytesLimit = 1 << 20

// numbered is a line of standard output with its number, from 1; cut
// says it was longer than lineLimit and is kept only in part.
type numbered struct {
	n    int
	text string
	cut  bool
}

// lineWriter keeps standard output as capped does and also reads all of
// it a line at a time, keeping the lines that mention "belief" (up to
// beliefBytesLimit of them), so that a belief line after a lot of logging
// is still read while the logging itself is not kept.
type lineWriter struct {
	capped
	n        int
	beliefs  []numbered
	kept     int
	overflow bool
	partial  []byte
	cut      bool
	// mentions: the line so far mentions "belief", in any case, in the
	// part kept or past it; tail is the end of what was written of it, so
	// that a mention split across writes is seen.
	mentions bool
	tail     []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n, _ := w.capped.Write(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.add(p)
			break
		}
		w.add(p[:i])
		w.take()
		p = p[i+1:]
	}
	return n, nil
}

// take ends the partial line. The caller holds mu.
func (w *lineWriter) take() {
	w.n++
	if w.mentions {
		if w.kept+len(w.partial) > beliefBytesLimit {
			w.overflow = true
		} else {
			w.kept += len(w.partial)
			w.beliefs = append(w.beliefs, numbered{w.n, string(w.partial), w.cut})
		}
	}
	w.partial, w.cut, w.mentions, w.tail = w.partial[:0], false, false, w.tail[:0]
}

// beliefMark is what makes a line one that tries to be a belief line:
// the field's name, quoted, in any case.
var beliefMark = []byte(`"belief"`)

// mention notes whether p, the next part of the line, mentions
// beliefMark, across the end of the part before it too. The caller
// holds mu.
func (w *lineWriter) mention(p []byte) {
	if w.mentions {
		return
	}
	seen := append(w.tail, p...)
	if bytes.Contains(bytes.ToLower(seen), beliefMark) {
		w.mentions = true
		return
	}
	keep := min(len(seen), len(beliefMark)-1)
	w.tail = append(w.tail[:0], seen[len(seen)-keep:]...)
}

// add appends to the partial line, up to lineLimit. The caller holds mu.
func (w *lineWriter) add(p []byte) {
	w.mention(p)
	room := max(lineLimit-len(w.partial), 0)
	if len(p) > room {
		w.cut = true
		p = p[:room]
	}
	w.partial = append(w.partial, p...)
}

// beliefLines are the lines that mention "belief", the last one even
// without its newline, and whether some were not kept.
func (w *lineWriter) beliefLines() ([]numbered, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.take()
	}
	return w.beliefs, w.overflow
}

// sweep kills every process whose environment holds the line token
// (NAME=VALUE): what a row's runs left behind outside their process
// groups, such as a daemon that called setsid. Descendants inherit the
// environment, so the token marks them and nothing else. It reads /proc;
// where there is none, it does nothing.
func sweep(token string) {
	mark := []byte(token + "\x00")
	for range 5 {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		found := false
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if err != nil || !bytes.Contains(env, mark) {
				continue
			}
			found = true
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if !found {
			return
		}
		// A process may have forked while it was being found.
		time.Sleep(20 * time.Millisecond)
	}
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
