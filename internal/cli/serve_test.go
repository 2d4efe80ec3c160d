package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/replaylab/replaylab/compare"
	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/serve"
)

// serveChild is `replaylab serve ARGS` in a copy of the test binary: the
// command runs as it does from a shell, in its own process, so it can be
// sent signals.
type serveChild struct {
	cmd    *exec.Cmd
	url    string
	stdout *bytes.Buffer
	stderr *bytes.Buffer
	done   chan error
	// scanned closes once all of stderr is in the buffer.
	scanned chan struct{}
}

func init() {
	if args := os.Getenv("REPLAYLAB_SERVE_ARGS"); args != "" {
		os.Exit(execute(strings.Split(args, "\x1f")))
	}
}

var listening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)

func startServe(t testing.TB, args ...string) *serveChild {
	t.Helper()
	return startServeEnv(t, nil, args...)
}

const sigterm = syscall.SIGTERM

// startServeEnv is startServe with env added to the process's environment.
func startServeEnv(t testing.TB, env []string, args ...string) *serveChild {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &serveChild{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, done: make(chan error, 1), scanned: make(chan struct{})}
	c.cmd = exec.Command(self, "-test.run=^$")
	c.cmd.Env = append(append(os.Environ(), env...), "REPLAYLAB_SERVE_ARGS="+strings.Join(append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), "\x1f"))
	c.cmd.Stdout = c.stdout
	pr, pw := io.Pipe()
	c.cmd.Stderr = pw
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- c.cmd.Wait(); pw.Close() }()
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	})
	found := make(chan string, 1)
	go func() {
		defer close(c.scanned)
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			c.stderr.WriteString(sc.Text() + "\n")
			if m := listening.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case u, ok := <-found:
		if !ok {
			t.Fatalf("serve did not start:\n%s", c.stderr)
		}
		c.url = u
	case <-time.After(10 * time.Second):
		t.Fatalf("serve did not say where it listens within 10s:\n%s", c.stderr)
	}
	return c
}

func (c *serveChild) wait(t testing.TB) int {
	t.Helper()
	select {
	case err := <-c.done:
		<-c.scanned
		if err == nil {
			return 0
		}
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		t.Fatal(err)
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop within 15s")
	}
	return -1
}

func (c *serveChild) create(t *testing.T, timeout time.Duration, key string) (int, error) {
	t.Helper()
	form := url.Values{"charge": {"ch_1042"}, "amount": {"4500"}, "metadata[intent]": {"refund-1042"}}
	req, _ := http.NewRequest(http.MethodPost, c.url+"/v1/refunds", strings.NewReader(form.Encode()))
	req.SetBasicAuth("sk_test_cli", "")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Idempotency-Key", key)
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// SIGTERM (and SIGINT) stop serve cleanly: it settles, prints the
// verdicts, writes the record whole, and exits 0.
func TestServeStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			record := filepath.Join(t.TempDir(), "session.json")
			c := startServe(t, "--faults", "timeout_after_commit,success", "--record", record, "--hold", "30s")
			if _, err := c.create(t, 200*time.Millisecond, "k1"); err == nil {
				t.Fatal("the held reply arrived")
			}
			if code, err := c.create(t, 2*time.Second, "k1"); err != nil || code != 200 {
				t.Fatalf("the retry: %d %v", code, err)
			}
			_ = c.cmd.Process.Signal(sig)
			if code := c.wait(t); code != 0 {
				t.Fatalf("exit %d after %s:\n%s", code, sig, c.stderr)
			}
			if !strings.Contains(c.stdout.String(), "refund-1042  exactly_once") {
				t.Errorf("the verdicts read:\n%s", c.stdout)
			}
			data, err := os.ReadFile(record)
			if err != nil {
				t.Fatal(err)
			}
			s, err := export.UnmarshalSession(record, data)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Requests) != 2 || s.Ledger.Effects != 1 {
				t.Fatalf("the record holds %d requests and %d effects", len(s.Requests), s.Ledger.Effects)
			}
			entries, _ := os.ReadDir(filepath.Dir(record))
			if len(entries) != 1 {
				t.Errorf("files beside the record: %v", entries)
			}
		})
	}
}

// A signal during a held reply ends the hold: serve does not wait out
// --hold before it stops.
func TestServeSignalEndsHolds(t *testing.T) {
	// The hold's cap is a day: only the signal can end it while the test
	// runs, so serve stopping at all shows the signal ended it.
	c := startServe(t, "--faults", "timeout_after_commit", "--hold", "24h")
	errc := make(chan error, 1)
	go func() { _, err := c.create(t, time.Minute, "k"); errc <- err }()
	// Wait until the request is being held.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(c.url + "/_replaylab/state")
		if err == nil {
			var st struct{ Requests int }
			_ = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if st.Requests == 1 {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	if code := c.wait(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, c.stderr)
	}
	if err := <-errc; err == nil {
		t.Error("the held request got a reply")
	}
	if !strings.Contains(c.stdout.String(), "hidden_effect") {
		t.Errorf("the verdicts read:\n%s", c.stdout)
	}
}

// --until N stops after N API requests; --fail-on turns a bad verdict
// into exit 1.
func TestServeUntilAndFailOn(t *testing.T) {
	c := startServe(t, "--faults", "timeout_after_commit,success", "--until", "2", "--fail-on", "duplicate")
	c.create(t, 200*time.Millisecond, "k1")
	c.create(t, 2*time.Second, "k2")
	if code := c.wait(t); code != exitVerdict {
		t.Fatalf("exit %d, want %d:\n%s\n%s", code, exitVerdict, c.stdout, c.stderr)
	}
	if !strings.Contains(c.stdout.String(), "duplicate") || !strings.Contains(c.stderr.String(), "refund-1042 ended duplicate") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", c.stdout, c.stderr)
	}
	// With --until, the banner says when serve stops, not only Ctrl-C.
	if !strings.Contains(c.stderr.String(), "serve stops after 2 API requests (or at Ctrl-C)") || strings.Contains(c.stderr.String(), "Ctrl-C stops serve") {
		t.Errorf("the banner under --until 2:\n%s", c.stderr)
	}
}

// A port in use is a clear error and exit 2; so are bad flag values.
func TestServeBadInput(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--addr", ln.Addr().String()}, "the address is in use"},
		{[]string{"serve", "--addr", "nonsense"}, "expected HOST:PORT"},
		{[]string{"serve", "--faults", "timeout_afer_commit"}, "did you mean timeout_after_commit"},
		{[]string{"serve", "--faults", "success", "--mission", "timeout-then-success"}, "do not go together"},
		{[]string{"serve", "--faults", "read_lagin"}, "did you mean read_lagging"},
		{[]string{"serve", "--faults", "sucess"}, "or for reads: read_ok, read_server_error, read_timeout, read_lagging"},
		{[]string{"serve", "--faults", "success", "--lag", "4"}, "give read_lagging in --faults"},
		{[]string{"serve", "--faults", "read_lagging", "--lag", "0"}, "--lag"},
		{[]string{"serve", "--faults", "read_ok", "--mission", "timeout-then-success"}, "do not go together"},
		{[]string{"serve", "--mission", "no-such-mission"}, "no-such-mission"},
		{[]string{"serve", "--contract", "v3"}, "accepted: v1, v2, none"},
		{[]string{"serve", "--tick", "1us"}, "from 1ms to 24h"},
		{[]string{"serve", "--tick", "0"}, "from 1ms to 24h"},
		{[]string{"serve", "--hold", "0"}, "--hold 0s"},
		{[]string{"serve", "--should-retry", "sometimes"}, "auto (what Stripe sends for each reply), true, false or omit"},
		{[]string{"serve", "--retention", "1ns"}, "--retention 1ns"},
		{[]string{"serve", "--intent-field", "metadata[" + strings.Repeat("x", 41) + "]"}, "1 to 40 characters"},
		{[]string{"serve", "--record", "/proc/replaylab-probe.json"}, "cannot write in /proc"},
		{[]string{"serve", "--intent-field", "order"}, "metadata[NAME]"},
		{[]string{"serve", "--resolve", "pending"}, "succeeded or failed"},
		{[]string{"serve", "--until", "-1"}, "whole number"},
		{[]string{"serve", "--record", ""}, "--record is empty"},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		code := executeIO(tc.args, &out, &errb)
		if code != exitBadInput || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
	// An existing record is refused before serving, unless --force.
	record := filepath.Join(t.TempDir(), "session.json")
	if err := os.WriteFile(record, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := executeIO([]string{"serve", "--record", record}, &out, &errb); code != exitBadInput || !strings.Contains(errb.String(), "exists") {
		t.Errorf("an existing --record: exit %d, %q", code, errb.String())
	}
}

// recordSession runs a client against a provider in this process and
// writes the session file, as serve --record does.
func recordSession(t *testing.T, o serve.Options, keys ...string) string {
	t.Helper()
	srv, err := serve.New(o)
	if err != nil {
		t.Fatal(err)
	}
	h := httptest.NewServer(srv)
	c := &serveChild{url: h.URL}
	for _, k := range keys {
		c.create(t, 200*time.Millisecond, k)
	}
	srv.Release()
	h.Close()
	data, err := export.MarshalSession(srv.Finish())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "session.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// replay re-submits a session; compare sets it beside simulated cases of
// its mission.
func TestSessionReplayAndCompare(t *testing.T) {
	m, err := missions.BuiltIn().Get("timeout-then-success")
	if err != nil {
		t.Fatal(err)
	}
	path := recordSession(t, serve.Options{Mission: m, Hold: time.Second}, "a1", "a2")
	var out, errb bytes.Buffer
	if code := executeIO([]string{"replay", path}, &out, &errb); code != 0 || !strings.Contains(out.String(), "identical") {
		t.Fatalf("replay: exit %d\n%s%s", code, out.String(), errb.String())
	}
	dir := t.TempDir()
	if code := executeIO([]string{"export", "timeout-then-success", "--variants", "--dir", dir}, &out, &errb); code != 0 {
		t.Fatalf("export: %s", errb.String())
	}
	out.Reset()
	guarded := filepath.Join(dir, "timeout-then-success.stable-keys-on.guarded.v1.json")
	if code := executeIO([]string{"compare", path, guarded, "--format", "json"}, &out, &errb); code != 0 {
		t.Fatalf("compare: exit %d %s", code, errb.String())
	}
	var cmp compare.Comparison
	if err := json.Unmarshal(out.Bytes(), &cmp); err != nil {
		t.Fatal(err)
	}
	if len(cmp.Cases) != 2 || cmp.Cases[0].Settings.Policy != missions.RealClient || cmp.Cases[0].Settings.StableKeys {
		t.Fatalf("heads %+v", cmp.Cases)
	}
	if len(cmp.Notes) != 0 {
		t.Errorf("the session and its mission's case are taken for different missions: %v", cmp.Notes)
	}
	if v := cmp.Outcomes[0].Verdicts[0].Verdict; v != missions.Duplicate {
		t.Errorf("the client's verdict reads %s, want duplicate (two keys)", v)
	}
	if v := cmp.Outcomes[1].Verdicts[0].Verdict; v != missions.ExactlyOnce {
		t.Errorf("the guarded caller's verdict reads %s", v)
	}

	// An edited session does not replay.
	data, _ := os.ReadFile(path)
	edited := bytes.Replace(data, []byte(`"fixture": "success"`), []byte(`"fixture": "failure_before_commit"`), 1)
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := executeIO([]string{"replay", path}, &out, &errb); code != exitVerdict || !strings.Contains(out.String(), "first difference: requests") {
		t.Fatalf("an edited session: exit %d\n%s", code, out.String())
	}
}

// A client that sends half a body and waits does not keep serve from
// stopping.
func TestServeStopsDespiteASlowClient(t *testing.T) {
	c := startServe(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(c.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/refunds HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk_test\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ncharge=ch")
	// The half body is in serve's hands once the state endpoint, asked
	// after it on another connection, has answered.
	if resp, err := http.Get(c.url + "/_replaylab/state"); err == nil {
		resp.Body.Close()
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	if code := c.wait(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, c.stderr)
	}
	// serve stopped before the body's time ran out: the slow client was
	// never told its body came too late, its connection was just closed.
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, _ := io.ReadAll(conn)
	if strings.Contains(string(got), "did not arrive within") {
		t.Errorf("serve waited out the slow body before it stopped:\n%s", got)
	}
}

// validate checks a session the way replay does.
func TestValidateSession(t *testing.T) {
	path := recordSession(t, serve.Options{Faults: []missions.Fixture{missions.TimeoutAfterCommit}, Hold: time.Second}, "k", "k")
	var out, errb bytes.Buffer
	if code := executeIO([]string{"validate", path}, &out, &errb); code != 0 || !strings.Contains(out.String(), "it replays") {
		t.Fatalf("validate: exit %d\n%s%s", code, out.String(), errb.String())
	}
	data, _ := os.ReadFile(path)
	lie := bytes.Replace(data, []byte(`"verdict": "exactly_once"`), []byte(`"verdict": "duplicate"`), 1)
	if bytes.Equal(lie, data) {
		t.Fatal("no verdict to change")
	}
	if err := os.WriteFile(path, lie, 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := executeIO([]string{"validate", path}, &out, &errb); code != exitBadInput || !strings.Contains(out.String()+errb.String(), "outcome.verdicts") {
		t.Fatalf("a session whose verdict lies: exit %d\n%s%s", code, out.String(), errb.String())
	}
}
