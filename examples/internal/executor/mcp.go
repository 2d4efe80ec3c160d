package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Connect opens an MCP session on REPLAYLAB_MCP_URL, as agent prog, or
// says why not and exits 2.
func Connect(prog string) *mcp.ClientSession {
	url := os.Getenv("REPLAYLAB_MCP_URL")
	if url == "" {
		fmt.Fprintln(os.Stderr, prog+": REPLAYLAB_MCP_URL is not set; run it with replaylab conform --mcp")
		os.Exit(2)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: prog, Version: "1"}, nil)
	// The agent decides every resend itself: the transport resumes
	// nothing on its own.
	// The revision conform serves, when it serves one alone; else the
	// SDK's newest, from which it falls back on its own.
	opts := &mcp.ClientSessionOptions{ProtocolVersion: os.Getenv("REPLAYLAB_MCP_REVISION")}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{}, DisableStandaloneSSE: true}, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, prog+": connecting to "+url+":", err)
		os.Exit(2)
	}
	return cs
}

// Call calls tool with args. A result the tool marked as an error comes
// back as a ToolError with its words.
func Call(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any, out any) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		var words []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				words = append(words, t.Text)
			}
		}
		return &ToolError{Text: strings.Join(words, " ")}
	}
	if out == nil {
		return nil
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// ToolError is a tool's error result: the words the model reads.
type ToolError struct{ Text string }

func (e *ToolError) Error() string { return "the tool said: " + e.Text }

// ToolRefund is a refund as the provider's tools show it.
type ToolRefund struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Intent string `json:"intent"`
	Amount int64  `json:"amount"`
}

func (r ToolRefund) refund() Refund {
	return Refund(r)
}

// Tools reaches the provider through its MCP tools.
type Tools struct{ CS *mcp.ClientSession }

// CreateArgs are create_refund's arguments for an intent; key "" sends
// none.
func CreateArgs(in Intent, key string) map[string]any {
	a := map[string]any{"intent": in.Intent, "charge": in.Charge, "amount": in.Amount, "currency": in.Currency}
	if key != "" {
		a["idempotency_key"] = key
	}
	return a
}

func (t Tools) Create(ctx context.Context, rec *Record) (Refund, Class, error) {
	var r ToolRefund
	err := Call(ctx, t.CS, "create_refund", CreateArgs(rec.Intent, rec.Key), &r)
	if err == nil {
		return r.refund(), KnownTerminal, nil
	}
	return Refund{}, toolClass(err), err
}

// toolClass sorts a call's error by what it says: the provider's error
// type and code lead a plain error result. Anything else (a timeout, a
// closed stream, a server error, an opaque "Failed to create refund") is
// unknown.
func toolClass(err error) Class {
	var te *ToolError
	if !errors.As(err, &te) {
		return Unknown
	}
	switch {
	case strings.HasPrefix(te.Text, "idempotency_error (idempotency_key_in_use)"):
		return NotTerminal
	case strings.HasPrefix(te.Text, "idempotency_error"):
		return Mismatch
	case strings.HasPrefix(te.Text, "invalid_request_error"):
		return KnownFailure
	}
	return Unknown
}

func (t Tools) List(ctx context.Context, in Intent) ([]Refund, error) {
	var l struct {
		Refunds []ToolRefund `json:"refunds"`
	}
	if err := Call(ctx, t.CS, "list_refunds", map[string]any{"intent": in.Intent, "limit": 100}, &l); err != nil {
		return nil, err
	}
	out := make([]Refund, len(l.Refunds))
	for i, r := range l.Refunds {
		out[i] = r.refund()
	}
	return out, nil
}

func (t Tools) Get(ctx context.Context, id string) (Refund, error) {
	var r ToolRefund
	if err := Call(ctx, t.CS, "get_refund", map[string]any{"id": id}, &r); err != nil {
		return Refund{}, err
	}
	return r.refund(), nil
}
