package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// initialize opens an MCP session with a raw initialize and leaves it
// (no DELETE): its id, or the status and body of a refusal.
func (g *rig) initialize(t testing.TB) (string, int, string) {
	req, _ := http.NewRequest(http.MethodPost, g.http.URL+MCPPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := g.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return res.Header.Get("Mcp-Session-Id"), res.StatusCode, b.String()
}

// TestMCPSessionsAreBounded: an MCP session left without a DELETE ends
// after the idle time, and no more than MaxMCPSessions are kept at once:
// an initialize past that is refused, as a JSON-RPC error that says how
// to make room, until one ends.
func TestMCPSessionsAreBounded(t *testing.T) {
	g := newRig(t, Options{MCP: true, MCPIdle: 300 * time.Millisecond})
	id, _, _ := g.initialize(t)
	if id == "" || !g.srv.mcpTools().live(id) {
		t.Fatal("no session")
	}
	waitFor(t, "the idle session to end", func() bool { return !g.srv.mcpTools().live(id) })

	g = newRig(t, Options{MCP: true, MCPIdle: time.Hour})
	var first string
	for i := range MaxMCPSessions {
		id, status, body := g.initialize(t)
		if id == "" {
			t.Fatalf("session %d: %d %s", i+1, status, body)
		}
		if i == 0 {
			first = id
		}
	}
	id, status, body := g.initialize(t)
	var reply struct {
		ID    int
		Error struct {
			Code    int
			Message string
		}
	}
	if id != "" || status != http.StatusServiceUnavailable || json.Unmarshal([]byte(body), &reply) != nil || reply.ID != 1 ||
		reply.Error.Code != -32000 || !strings.Contains(reply.Error.Message, fmt.Sprintf("at most %d MCP sessions", MaxMCPSessions)) {
		t.Fatalf("session %d: %q %d %s", MaxMCPSessions+1, id, status, body)
	}
	req, _ := http.NewRequest(http.MethodDelete, g.http.URL+MCPPath, nil)
	req.Header.Set("Mcp-Session-Id", first)
	if res, err := g.http.Client().Do(req); err == nil {
		res.Body.Close()
	}
	if id, status, body := g.initialize(t); id == "" {
		t.Fatalf("after a DELETE: %d %s", status, body)
	}
}

// BenchmarkAbandonedMCPSessions opens b.N MCP sessions and leaves each
// without a DELETE, as a careless or hostile client does, waiting for the
// idle ones to end whenever the cap is reached; it reports the heap once
// the last have idled out (the goal: at most 64 MiB after 50,000).
// Run: go test ./serve -run '^$' -bench AbandonedMCPSessions -benchtime 50000x
func BenchmarkAbandonedMCPSessions(b *testing.B) {
	idle := 200 * time.Millisecond
	srv, err := New(Options{MCP: true, MCPIdle: idle, Hold: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	g := &rig{srv: srv, http: httptest.NewServer(srv)}
	b.Cleanup(func() { srv.Release(); g.http.Close() })
	refused := 0
	for b.Loop() {
		for {
			id, status, _ := g.initialize(b)
			if id != "" {
				break
			}
			if status != http.StatusServiceUnavailable {
				b.Fatalf("initialize: %d", status)
			}
			refused++
			time.Sleep(idle / 4)
		}
	}
	deadline := time.Now().Add(10 * idle)
	open := func() int {
		n := 0
		for range g.srv.mcpTools().server.Sessions() {
			n++
		}
		return n
	}
	for time.Now().Before(deadline) && open() > 0 {
		time.Sleep(idle / 4)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB-after-idle")
	b.ReportMetric(float64(refused), "initializes-refused-at-cap")
}
