package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"regexp"
	"slices"
	"strings"

	"github.com/replaylab/replaylab/traces"
)

// TraceOptions say which tool-call spans are attempts and reads, and
// where in a call's captured arguments its intent and key are.
type TraceOptions struct {
	// WriteTools are the tools whose calls are attempts (the refund
	// create); ReadTools those whose calls are reads.
	WriteTools []string
	ReadTools  []string
	// IntentField and KeyField name the arguments that carry the intent
	// and the idempotency key; IntentField also names the refund's
	// metadata field in a records file.
	IntentField string
	KeyField    string
}

// DefaultTraceOptions match replaylab's own MCP tools.
func DefaultTraceOptions() TraceOptions {
	return TraceOptions{WriteTools: []string{"create_refund"}, ReadTools: []string{"get_refund", "list_refunds"}, IntentField: "intent", KeyField: "idempotency_key"}
}

// Outcomes of a span, as a history writes them.
const (
	outOK uint8 = iota
	outFail
	outInfo
)

var outcomeNames = [...]string{"ok", "fail", "info"}

// spanRec is what check keeps of one tool-call span: names by number in
// the trace check's own set, so that a million spans keep no string each.
type spanRec struct {
	line   int32
	trace  [16]byte
	span   [8]byte
	parent [8]byte
	conv   traces.Convention
	name   int32
	tool   int32
	callID int32
	reqID  int32
	intent int32
	key    int32
	// args is a digest of the arguments other than the key, when they
	// were captured.
	args    uint64
	hasArgs bool
	write   bool
	// layer: a span above another span of the same call (a framework's
	// execute_tool above its MCP client's tools/call): the span below
	// is the attempt.
	layer      bool
	start, end int64
	outcome    uint8
	object     int32
	status     int32
	why        int32
	// shown are the refunds a read's result showed: object, status and
	// the intent it names, by number.
	shown []shownRef
}

type shownRef struct{ object, status, intent int32 }

// refusal words: a tool's error that the provider defines as not
// executed (Stripe's error types, HTTP 4xx, a JSON-RPC refusal of the
// call before the tool ran).
var (
	notExecuted = regexp.MustCompile(`(?i)\b(invalid_request_error|card_error|idempotency_error|rate_limit_error|authentication_error|permission_error)\b|\b(400|401|402|403|404|409|422|429)\b|-3260[12]\b`)
	unknown     = regexp.MustCompile(`(?i)time[ d]*out|timed out|-32001\b|cancel|abort|econn|socket|network|fetch failed|closed|disconnect|terminated|\b5\d\d\b|api_error`)
)

// outcomeOf is what a call's span says it came to, with the words why:
// ok when it succeeded and its result names a refund (or was not
// captured), info when it cannot tell (a timeout, a cancellation, a
// transport error, -32001, a 5xx, anything not known), fail when the
// tool refused it in words the provider defines as not executed.
func outcomeOf(c *traces.Call, res *result) (uint8, string) {
	failed := c.Failed || res.isError
	why := strings.TrimSpace(strings.Join(nonEmpty(c.Error, res.text), ": "))
	if !failed {
		switch {
		case len(res.refunds) > 0 && res.refunds[0].status == "pending":
			return outInfo, "the refund is pending: it may yet fail"
		case len(res.refunds) > 0 && (res.refunds[0].status == "failed" || res.refunds[0].status == "canceled"):
			return outFail, "the refund " + res.refunds[0].status
		case len(res.refunds) > 0:
			return outOK, ""
		case c.Result == "":
			return outOK, "the span succeeded; its result was not captured"
		}
		return outInfo, "the result names no refund"
	}
	switch {
	case unknown.MatchString(why):
		return outInfo, why
	case notExecuted.MatchString(why):
		return outFail, why
	}
	return outInfo, cmpOr(why, "the span failed without saying why")
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// result is what a call's captured result says.
type result struct {
	isError bool
	text    string
	refunds []shown
}

type shown struct{ id, status, intent string }

// parseResult reads a captured result: JSON (a refund, a list of them,
// an MCP CallToolResult, a wrapper holding one as text) or plain text.
func parseResult(s, intentField string) result {
	var r result
	s = strings.TrimSpace(s)
	if s == "" {
		return r
	}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		r.text = s
		return r
	}
	r.walk(v, intentField, 0)
	return r
}

func (r *result) walk(v any, intentField string, depth int) {
	if depth > 8 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"isError", "is_error"} {
			if b, ok := x[k].(bool); ok && b {
				r.isError = true
			}
		}
		if id, ok := x["id"].(string); ok && (strings.HasPrefix(id, "re_") || x["object"] == "refund") {
			st, _ := x["status"].(string)
			in, _ := x[intentField].(string)
			if md, ok := x["metadata"].(map[string]any); ok && in == "" {
				in, _ = md[intentField].(string)
			}
			r.refunds = append(r.refunds, shown{id: id, status: st, intent: in})
			return
		}
		if t, ok := x["text"].(string); ok {
			r.walkText(t, intentField, depth)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			switch k {
			case "text":
			case "result", "error", "message":
				if t, ok := x[k].(string); ok {
					r.walkText(t, intentField, depth)
					continue
				}
				r.walk(x[k], intentField, depth+1)
			default:
				r.walk(x[k], intentField, depth+1)
			}
		}
	case []any:
		for _, e := range x {
			r.walk(e, intentField, depth+1)
		}
	}
}

// walkText reads text a result carries: JSON within it is walked; other
// text is kept as the result's words.
func (r *result) walkText(t, intentField string, depth int) {
	t = strings.TrimSpace(t)
	var v any
	if (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Unmarshal([]byte(t), &v) == nil {
		r.walk(v, intentField, depth+1)
		return
	}
	if t != "" && r.text == "" {
		r.text = t
	}
}

// argsOf reads a call's captured arguments: a JSON object (the key-value
// list OTLP carries is JSON by then), or a wrapper that holds them under
// "arguments". It returns the intent, the key, a digest of the rest, and
// whether there were arguments at all.
func argsOf(s string, o *TraceOptions, seed maphash.Seed) (intent, key string, hasKey bool, digest uint64, err error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		var inner string
		if json.Unmarshal([]byte(s), &inner) == nil && json.Unmarshal([]byte(inner), &m) == nil {
			// A JSON string holding the arguments' JSON.
		} else {
			return "", "", false, 0, fmt.Errorf("the captured arguments are not a JSON object: %s", clip(s))
		}
	}
	if inner, ok := m["arguments"]; ok && m[o.IntentField] == nil {
		var n map[string]json.RawMessage
		if json.Unmarshal(inner, &n) == nil {
			m = n
		}
	}
	field := func(name string) (string, bool, error) {
		raw, ok := m[name]
		if !ok || bytes.Equal(raw, []byte("null")) {
			return "", false, nil
		}
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", false, fmt.Errorf("the argument %q is %s, not a string", name, clip(string(raw)))
		}
		return v, true, nil
	}
	if intent, _, err = field(o.IntentField); err != nil {
		return "", "", false, 0, err
	}
	if key, hasKey, err = field(o.KeyField); err != nil {
		return "", "", false, 0, err
	}
	names := make([]string, 0, len(m))
	for k := range m {
		if k != o.KeyField {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	var h maphash.Hash
	h.SetSeed(seed)
	for _, k := range names {
		h.WriteString(k)
		h.WriteByte(0)
		h.Write(compact(m[k]))
		h.WriteByte(0)
	}
	return intent, key, hasKey, h.Sum64(), nil
}

// compact is raw without the spaces between its tokens, so that two
// writers' spacing of the same arguments gives one digest.
func compact(raw json.RawMessage) []byte {
	if !bytes.ContainsAny(raw, " \t\r\n") {
		return raw
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// errNoWrite is a traces file with no span of a write tool.
var errNoWrite = errors.New("no span of a write tool")
