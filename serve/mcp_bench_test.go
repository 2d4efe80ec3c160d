package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMCPCreate: an agent on the go-sdk client calls create_refund
// over Streamable HTTP on loopback, one intent after another, each under
// its own key: against serve --mcp, and against the same go-sdk server
// whose tool takes the same arguments and does a bare map insert. Each
// pair speaks one revision: the session revision (2025-11-25, after an
// initialize), and the per-request one (2026-07-28, no session), where the
// bare server is the SDK's stateless handler, as serve's is. (The client
// asks for 2026-07-28 first; a bare handler with sessions refuses it and
// the client falls back, so without naming the revision the two sides
// would not speak the same one.) Run them in one go, beside each other:
//
//	go test -run '^$' -bench 'MCPCreate' -benchtime 5000x ./serve/
//
// The ratio of each pair's ns/op is what serve adds to a tool call.
func BenchmarkMCPCreate(b *testing.B) {
	for _, rev := range []struct {
		name, version string
		stateless     bool
	}{{"session", MCPRevisionSession, false}, {"per-request", MCPRevisionPerRequest, true}} {
		b.Run(rev.name+"/bare-go-sdk", func(b *testing.B) {
			var mu sync.Mutex
			seen := map[string]string{}
			server := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
			mcp.AddTool(server, &mcp.Tool{Name: ToolCreate, Description: createDescription}, func(_ context.Context, _ *mcp.CallToolRequest, in createArgs) (*mcp.CallToolResult, toolRefund, error) {
				mu.Lock()
				seen[in.IdempotencyKey] = in.Intent
				mu.Unlock()
				return nil, toolRefund{ID: "re_1", Object: "refund", Amount: *in.Amount, Currency: "usd", Status: "succeeded", Intent: in.Intent}, nil
			})
			opts := &mcp.StreamableHTTPOptions{Stateless: rev.stateless, PropagateRequestCancellation: rev.stateless}
			h := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, opts))
			defer h.Close()
			benchCreates(b, h.URL, rev.version)
		})
		b.Run(rev.name+"/replaylab", func(b *testing.B) {
			srv, err := New(Options{MCP: true})
			if err != nil {
				b.Fatal(err)
			}
			h := httptest.NewServer(srv)
			defer func() { srv.Release(); h.Close() }()
			benchCreates(b, h.URL, rev.version)
		})
	}
}

func benchCreates(b *testing.B, url, revision string) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + MCPPath, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	amount := int64(4500)
	b.ReportAllocs()
	b.ResetTimer()
	for n := range b.N {
		intent := "refund-" + strconv.Itoa(n)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolCreate, Arguments: map[string]any{
			"intent": intent, "charge": "ch_" + strconv.Itoa(n), "amount": amount, "idempotency_key": "key-" + intent,
		}})
		if err != nil || res.IsError {
			b.Fatalf("call %d: %v %v", n, err, res)
		}
	}
}
