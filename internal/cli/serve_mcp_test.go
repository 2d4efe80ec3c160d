package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/serve"
)

func refundArgs(key string) map[string]any {
	a := map[string]any{"intent": "refund-1042", "charge": "ch_1042", "amount": 4500}
	if key != "" {
		a["idempotency_key"] = key
	}
	return a
}

func callTool(cs *mcp.ClientSession, wait time.Duration, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
}

// TestServeMCPOverStdio launches serve --mcp --stdio as a host launches a
// server command: the built program as a child, MCP on its standard input
// and output, the banner and the verdicts on its standard error, and the
// session written at the end.
func TestServeMCPOverStdio(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(t.TempDir(), "session.json")
	cmd := exec.Command(self, "-test.run=^$")
	args := []string{"serve", "--mcp", "--stdio", "--faults", "timeout_after_commit", "--record", record}
	cmd.Env = append(os.Environ(), "REPLAYLAB_SERVE_ARGS="+strings.Join(args, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	// The reply is lost after the commit: the call never answers, and the
	// host gives up.
	if _, err := callTool(cs, 300*time.Millisecond, serve.ToolCreate, refundArgs("k1")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the lost reply: %v", err)
	}
	res, err := callTool(cs, 5*time.Second, serve.ToolCreate, refundArgs("k1"))
	if err != nil || res.IsError {
		t.Fatalf("the same-key retry: %v %+v", err, res)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("serve --stdio did not stop when its input ended:\n%s", stderr.String())
	}
	out := stderr.String()
	for _, want := range []string{"MCP over standard input and output", "2 as MCP tool calls, 1 cancelled by the client", "refund-1042", "exactly_once", "wrote the session"} {
		if !strings.Contains(out, want) {
			t.Errorf("standard error lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	s, err := export.UnmarshalSession(record, data)
	if err != nil {
		t.Fatal(err)
	}
	first := s.Requests[0]
	if first.Call == nil || first.Call.Transport != export.TransportStdio || first.Call.Cancelled == nil || s.Ledger.Effects != 1 {
		t.Fatalf("the session: call %+v, effects %d", first.Call, s.Ledger.Effects)
	}
	// The recorded MCP session replays, and check reads it.
	if code, out, stderr := cli("replay", record); code != exitOK || !strings.Contains(out, "identical") {
		t.Errorf("replay: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := cli("check", record); code != exitOK {
		t.Errorf("check: exit %d\n%s%s", code, out, stderr)
	}
}

// TestServeMCPOverHTTP: serve --mcp answers MCP at /mcp beside the REST
// API, and says so.
func TestServeMCPOverHTTP(t *testing.T) {
	c := startServe(t, "--mcp", "--tool-errors", "opaque", "--faults", "failure_before_commit")
	cl := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: c.url + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := callTool(cs, 5*time.Second, serve.ToolCreate, refundArgs(""))
	if err != nil || !res.IsError {
		t.Fatalf("failure_before_commit: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; text != serve.OpaqueError {
		t.Errorf("an opaque error says %q", text)
	}
	res, err = callTool(cs, 5*time.Second, serve.ToolCreate, refundArgs(""))
	if err != nil || res.IsError {
		t.Fatalf("the retry: %v %+v", err, res)
	}
	_ = cs.Close()
	_ = c.cmd.Process.Signal(sigterm)
	if code := c.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, c.stderr)
	}
	if !strings.Contains(c.stdout.String(), "exactly_once") {
		t.Errorf("the verdicts:\n%s", c.stdout)
	}
	// Read once serve has stopped and all it said is in.
	for _, want := range []string{"MCP tools at " + c.url + "/mcp", "create_refund, get_refund, list_refunds", `only "Failed to create refund"`} {
		if !strings.Contains(c.stderr.String(), want) {
			t.Errorf("the banner lacks %q:\n%s", want, c.stderr)
		}
	}
}

func TestServeMCPBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--stdio"}, "give --mcp with it"},
		{[]string{"serve", "--tool-errors", "opaque"}, "give --mcp with it"},
		{[]string{"serve", "--mcp", "--tool-errors", "vague"}, `--tool-errors "vague": give plain`},
		{[]string{"serve", "--mcp", "--stdio", "--addr", "127.0.0.1:0"}, "do not go together"},
	} {
		code, stdout, stderr := cli(c.args...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 naming %q", c.args, code, stderr, c.want)
		}
	}
}

// TestServeMCPStdioHostGoesAway: a host that closes its end of serve's
// output does not kill serve: the answer it could not write is gone, and
// serve still settles, prints its verdicts and writes the session.
func TestServeMCPStdioHostGoesAway(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(t.TempDir(), "session.json")
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "REPLAYLAB_SERVE_ARGS="+strings.Join([]string{"serve", "--mcp", "--stdio", "--record", record}, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
	line := make([]byte, 4096)
	if _, err := out.Read(line); err != nil {
		t.Fatalf("initialize: %v\n%s", err, stderr.String())
	}
	out.Close() // the host stops listening
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_refund","arguments":{"intent":"refund-1042","charge":"ch_1042","amount":4500}}}`+"\n")
	time.Sleep(200 * time.Millisecond) // the answer meets the closed pipe
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() < 0 {
			t.Fatalf("serve was killed: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("serve did not stop:\n%s", stderr.String())
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("no session: %v\n%s", err, stderr.String())
	}
	s, err := export.UnmarshalSession(record, data)
	if err != nil || s.Ledger.Effects != 1 || s.Requests[0].Wire != export.WireGone {
		t.Fatalf("the session: %v, effects %d, wire %s", err, s.Ledger.Effects, s.Requests[0].Wire)
	}
	if !strings.Contains(stderr.String(), "hidden_effect") {
		t.Errorf("the verdict of an answer never written:\n%s", stderr.String())
	}
}
