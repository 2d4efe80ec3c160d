package serve

// What MCP's JSON-RPC messages must be, checked alike over Streamable
// HTTP and stdio before the SDK reads them: the SDK answers some of these
// with plain text or with error code 0, and drops others. Each problem is
// a JSON-RPC error with its proper code.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/replaylab/replaylab/internal/termtext"
)

// mcpMethods are the requests the provider's MCP server answers.
var mcpMethods = []string{
	"initialize", "ping", "server/discover", "subscriptions/listen",
	"tools/list", "tools/call",
	"resources/list", "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe",
	"prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
}

// beforeInitialize are the requests a session takes before initialize.
var beforeInitialize = []string{"initialize", "ping", "server/discover", "logging/setLevel"}

// answered marks b a request read whole, its error its answer.
func answered(b *badMessage) *badMessage {
	b.read = true
	return b
}

// carriesRevision reports whether a request's params carry its own MCP
// revision (SEP-2575's _meta): it needs no initialize.
func carriesRevision(params json.RawMessage) bool {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	_, ok := p.Meta["io.modelcontextprotocol/protocolVersion"]
	return ok
}

// badMessage is a message the provider answers itself: its id (JSON,
// "null" when it has none that can be read), the JSON-RPC error code and
// the words.
type badMessage struct {
	id   string
	code int64
	msg  string
	// read: a request read whole and refused (an unknown method, a call
	// before initialize), whose error is its answer; the others are not
	// requests the server could read.
	read bool
}

// checkMessage says what is wrong with one JSON-RPC message as MCP takes
// it, or nil. initialized says whether the session it belongs to has
// been initialized (a call other than initialize, ping or server/discover
// before that is refused).
func checkMessage(raw []byte, initialized bool) *badMessage {
	raw = bytes.TrimSpace(raw)
	bad := func(code int64, format string, args ...any) *badMessage {
		return &badMessage{id: "null", code: code, msg: fmt.Sprintf(format, args...)}
	}
	if !json.Valid(raw) {
		return bad(jsonrpc.CodeParseError, "The message is not JSON. Send one JSON-RPC 2.0 message: {\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/list\"}.")
	}
	var m map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return bad(jsonrpc.CodeInvalidRequest, "The message is not a JSON object. Send one JSON-RPC 2.0 message: {\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/list\"}.")
	}
	id, hasID := m["id"]
	out := func(code int64, format string, args ...any) *badMessage {
		b := bad(code, format, args...)
		if hasID && idProblem(id) == "" && len(bytes.TrimSpace(id)) > 0 && (id[0] == '"' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9')) {
			b.id = string(bytes.TrimSpace(id))
		}
		return b
	}
	// Names are exact: "Method" is not "method", as the SDK reads them.
	for k := range m {
		if k != strings.ToLower(k) && slices.Contains([]string{"jsonrpc", "id", "method", "params", "result", "error"}, strings.ToLower(k)) {
			return out(jsonrpc.CodeInvalidRequest, "The message has a member %q; JSON-RPC's names are lowercase: spell it %q.", termtext.Shorten(k, 40), strings.ToLower(k))
		}
	}
	var version string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
		return out(jsonrpc.CodeInvalidRequest, "The message has no \"jsonrpc\": \"2.0\". Every JSON-RPC 2.0 message carries it.")
	}
	_, isResult := m["result"]
	_, isError := m["error"]
	rawMethod, hasMethod := m["method"]
	if !hasMethod {
		if hasID && (isResult || isError) {
			return nil // a client's answer to a request of the server's
		}
		return out(jsonrpc.CodeInvalidRequest, "The message has no \"method\". A request is {\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/list\"}.")
	}
	var method string
	if json.Unmarshal(rawMethod, &method) != nil || method == "" {
		return out(jsonrpc.CodeInvalidRequest, "The message's \"method\" is %s; give the method's name as a string, e.g. \"tools/call\".", termtext.Shorten(string(rawMethod), 40))
	}
	if !hasID {
		return nil // a notification: answered by no one, whatever it names
	}
	if t := bytes.TrimSpace(id); len(t) == 0 || t[0] == 'n' || t[0] == '{' || t[0] == '[' || t[0] == 't' || t[0] == 'f' {
		return bad(jsonrpc.CodeInvalidRequest, "The request's \"id\" is %s; give a string or a whole number, so that its answer can name it.", termtext.Shorten(string(t), 40))
	}
	if p := idProblem(id); p != "" {
		return bad(jsonrpc.CodeInvalidRequest, "%s.", p)
	}
	if !slices.Contains(mcpMethods, method) {
		return answered(out(jsonrpc.CodeMethodNotFound, "Method not found: %q. This provider's tools are reached with tools/list and tools/call (create_refund, get_refund, list_refunds), after initialize; it answers the other methods of MCP as the go-sdk does.", termtext.Shorten(method, 60)))
	}
	if !initialized && !slices.Contains(beforeInitialize, method) && !carriesRevision(m["params"]) {
		return answered(out(jsonrpc.CodeInvalidRequest, "%q came before initialize: call initialize first (and send notifications/initialized), then %s.", method, method))
	}
	return nil
}
