package serve

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
)

// The trace context a client sends is kept with its request, from a REST
// header and from an MCP call's _meta, durably: a reopened provider still
// has it. One that does not read is not kept.
func TestTraceContextIsKept(t *testing.T) {
	const (
		restTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		mcpTP  = "00-5c0a3f4688c45eb7b4df03ae1f1f5847-11a178bb1cb013c8-01"
	)
	db := filepath.Join(t.TempDir(), "p.db")
	clock := newFakeClock()
	o := Options{MCP: true, Faults: []missions.Fixture{missions.Success}}
	g, _ := openRig(t, o, db, clock)
	send := func(tp string) {
		req, _ := http.NewRequest(http.MethodPost, g.http.URL+"/v1/refunds", strings.NewReader(refund1042().Encode()))
		req.SetBasicAuth("sk_test_rig", "")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Idempotency-Key", "k1")
		req.Header.Set("traceparent", tp)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	send(restTP)
	send("00-not-a-trace")
	cs := g.agent()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolCreate, Arguments: args1042("k1"), Meta: mcp.Meta{"traceparent": mcpTP}}); err != nil {
		t.Fatal(err)
	}
	check := func(s *export.Session) {
		t.Helper()
		var got []string
		for _, r := range s.Requests {
			got = append(got, r.Traceparent)
		}
		if len(got) != 3 || got[0] != restTP || got[1] != "" || got[2] != mcpTP {
			t.Fatalf("trace contexts kept: %q", got)
		}
	}
	check(g.srv.Session())
	_ = cs.Close()
	g.stop()
	g2, _ := openRig(t, o, db, clock)
	check(g2.srv.Session())
}

func TestTraceparentReads(t *testing.T) {
	for in, want := range map[string]string{
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01":       "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra": "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01":       "",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01":       "",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01":       "",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01":       "",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7":          "",
		"": "",
	} {
		if got := traceparent(in); got != want {
			t.Errorf("traceparent(%q) = %q, want %q", in, got, want)
		}
	}
}
