package check

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	jsoniter "github.com/json-iterator/go"

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

// Validate refuses options that name nothing, or one argument or tool for
// two things, in the words of check's flags; it trims the tool names.
func (o *TraceOptions) Validate() error {
	for _, l := range []*[]string{&o.WriteTools, &o.ReadTools} {
		for i, t := range *l {
			(*l)[i] = strings.TrimSpace(t)
		}
	}
	for _, l := range []struct {
		flag  string
		tools []string
	}{{"write-tools", o.WriteTools}, {"read-tools", o.ReadTools}} {
		for _, t := range l.tools {
			if t == "" {
				return fmt.Errorf("--%s names an empty tool; give tool names separated by commas (like create_refund)", l.flag)
			}
		}
	}
	if len(o.WriteTools) == 0 {
		return fmt.Errorf("--write-tools is empty; give at least one tool whose calls are attempts (like create_refund)")
	}
	def := DefaultTraceOptions()
	for _, w := range o.WriteTools {
		if slices.Contains(o.ReadTools, w) {
			given := ""
			if slices.Equal(o.ReadTools, def.ReadTools) {
				given = ", the default"
			}
			return fmt.Errorf("%q is in both --write-tools and --read-tools (%s%s); a tool's calls are attempts or reads, not both: give --read-tools without it", w, strings.Join(o.ReadTools, ","), given)
		}
	}
	for _, f := range []struct{ flag, v, like string }{{"intent-field", o.IntentField, def.IntentField}, {"key-field", o.KeyField, def.KeyField}} {
		if f.v == "" {
			return fmt.Errorf("--%s is empty; give the argument's name (like %s)", f.flag, f.like)
		}
	}
	if o.IntentField == o.KeyField {
		return fmt.Errorf("--intent-field and --key-field both name %q; the intent and the key are two arguments", o.KeyField)
	}
	return nil
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
	trace  [16]byte
	span   [8]byte
	parent [8]byte
	// args is a digest of the arguments other than the intent and the
	// key, when they were captured.
	args uint64
	// at is when the call began (an attempt) or ended (a read, which
	// shows what was there by then), end when it ended, in Unix
	// nanoseconds.
	at, end                               int64
	line, name, tool, callID, intent, key int32
	object, status, why                   int32
	// shownAt and shownN say where in the trace check's list are the
	// refunds a read's result showed (object, status and the intent it
	// names, by number). No pointer is kept: a million spans are not
	// scanned by the collector.
	shownAt, shownN int32
	// first is the first history line made from the span.
	first          int32
	conv, outcome  uint8
	hasArgs, write bool
	// layer: a span above another span of the same call (a framework's
	// execute_tool above its MCP client's tools/call): the span below
	// is the attempt.
	layer bool
	// dup: the span is another's (the same trace and span id, the same
	// facts) written twice, as an exporter that retried a batch or a
	// file given twice does.
	dup bool
}

type shownRef struct{ object, status, intent int32 }

// conventions numbers the conventions, for a span to keep one in a byte.
var conventions = []traces.Convention{traces.GenAI, traces.MCP, traces.Traceloop, traces.AISDK}

func convNumber(c traces.Convention) uint8 { return uint8(slices.Index(conventions, c)) }

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
	return outInfo, cmp.Or(why, "the span failed without saying why")
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
	if s[0] != '{' && s[0] != '[' {
		r.text = s
		return r
	}
	it := jsoniter.ConfigDefault.BorrowIterator(view(s))
	defer jsoniter.ConfigDefault.ReturnIterator(it)
	var found result
	found.walk(it, intentField, 0)
	if it.Error != nil && it.Error != io.EOF {
		r.text = s
		return r
	}
	return found
}

// walk reads one JSON value from it, keeping what says whether the call
// failed and which refunds it names.
func (r *result) walk(it *jsoniter.Iterator, intentField string, depth int) {
	if depth > 8 {
		it.Skip()
		return
	}
	switch it.WhatIsNext() {
	case jsoniter.ObjectValue:
		var id, object, status, intent string
		it.ReadObjectCB(func(it *jsoniter.Iterator, k string) bool {
			switch {
			case k == "isError" || k == "is_error":
				if it.WhatIsNext() == jsoniter.BoolValue {
					r.isError = it.ReadBool() || r.isError
				} else {
					it.Skip()
				}
			case (k == "id" || k == "object" || k == "status" || k == intentField) && it.WhatIsNext() == jsoniter.StringValue:
				v := it.ReadString()
				switch k {
				case "id":
					id = v
				case "object":
					object = v
				case "status":
					status = v
				default:
					intent = v
				}
			case k == "metadata" && it.WhatIsNext() == jsoniter.ObjectValue:
				it.ReadObjectCB(func(it *jsoniter.Iterator, mk string) bool {
					if mk == intentField && it.WhatIsNext() == jsoniter.StringValue && intent == "" {
						intent = it.ReadString()
					} else {
						it.Skip()
					}
					return true
				})
			case (k == "text" || k == "result" || k == "error" || k == "message") && it.WhatIsNext() == jsoniter.StringValue:
				r.walkText(it.ReadString(), intentField, depth)
			default:
				r.walk(it, intentField, depth+1)
			}
			return true
		})
		if id != "" && (strings.HasPrefix(id, "re_") || object == "refund") {
			r.refunds = append(r.refunds, shown{id: id, status: status, intent: intent})
		}
	case jsoniter.ArrayValue:
		it.ReadArrayCB(func(it *jsoniter.Iterator) bool {
			r.walk(it, intentField, depth+1)
			return true
		})
	default:
		it.Skip()
	}
}

// walkText reads text a result carries: JSON within it is walked; other
// text is kept as the result's words.
func (r *result) walkText(t, intentField string, depth int) {
	t = strings.TrimSpace(t)
	if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		it := jsoniter.ConfigDefault.BorrowIterator(view(t))
		defer jsoniter.ConfigDefault.ReturnIterator(it)
		inner := result{}
		inner.walk(it, intentField, depth+1)
		if it.Error == nil || it.Error == io.EOF {
			r.isError = r.isError || inner.isError
			r.refunds = append(r.refunds, inner.refunds...)
			if r.text == "" {
				r.text = inner.text
			}
			return
		}
	}
	if t != "" && r.text == "" {
		r.text = t
	}
}

// view is s's bytes, not copied: for reading only (the iterator reads
// what it is given and keeps nothing of it).
func view(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// argReader reads calls' captured arguments, reusing its buffers.
type argReader struct {
	o      *TraceOptions
	seed   maphash.Seed
	fields []argField
	buf    []byte
}

type argField struct {
	name string
	raw  []byte
}

// read reads captured arguments: a JSON object (the key-value list OTLP
// carries is JSON by then), a JSON string holding one, or a wrapper that
// holds them under "arguments". It returns the intent, the key (hasKey:
// one was sent), and a digest of the rest.
func (a *argReader) read(s string) (intent, key string, hasKey bool, digest uint64, err error) {
	data := view(strings.TrimSpace(s))
	if len(data) > 0 && data[0] == '"' {
		var inner string
		if json.Unmarshal(data, &inner) == nil {
			data = []byte(strings.TrimSpace(inner))
		}
	}
	fields, err := a.object(data)
	if err != nil {
		return "", "", false, 0, fmt.Errorf("the captured arguments do not read as a JSON object: %s", clip(s))
	}
	for i, f := range fields {
		if slices.ContainsFunc(fields[:i], func(g argField) bool { return g.name == f.name }) {
			return "", "", false, 0, fmt.Errorf("the argument %q appears twice in the captured arguments; which one the tool took cannot be told", f.name)
		}
	}
	hasIntent := slices.ContainsFunc(fields, func(f argField) bool { return f.name == a.o.IntentField })
	if j := slices.IndexFunc(fields, func(f argField) bool { return f.name == "arguments" }); j >= 0 && !hasIntent {
		if inner, err := a.object(slices.Clone(fields[j].raw)); err == nil {
			fields = inner
		}
	}
	str := func(name string) (string, bool, error) {
		j := slices.IndexFunc(fields, func(f argField) bool { return f.name == name })
		if j < 0 || string(fields[j].raw) == "null" {
			return "", false, nil
		}
		raw := fields[j].raw
		if len(raw) == 0 || raw[0] != '"' {
			return "", false, fmt.Errorf("the argument %q is %s, not a string", name, clip(string(raw)))
		}
		if !bytes.ContainsRune(raw, '\\') {
			return string(raw[1 : len(raw)-1]), true, nil
		}
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", false, fmt.Errorf("the argument %q is %s, not a string", name, clip(string(raw)))
		}
		return v, true, nil
	}
	var sent bool
	if intent, sent, err = str(a.o.IntentField); err != nil {
		return "", "", false, 0, err
	}
	if j := slices.IndexFunc(fields, func(f argField) bool { return f.name == a.o.IntentField }); j >= 0 && (!sent || intent == "") {
		return "", "", false, 0, fmt.Errorf("the argument %q is %s: a call names its intent, or leaves the argument out", a.o.IntentField, map[bool]string{true: "null", false: "empty"}[!sent])
	}
	if key, hasKey, err = str(a.o.KeyField); err != nil {
		return "", "", false, 0, err
	}
	slices.SortFunc(fields, func(x, y argField) int { return strings.Compare(x.name, y.name) })
	var h maphash.Hash
	h.SetSeed(a.seed)
	for _, f := range fields {
		if f.name == a.o.KeyField || f.name == a.o.IntentField {
			continue
		}
		h.WriteString(f.name)
		h.WriteByte(0)
		h.Write(canonical(f.raw))
		h.WriteByte(0)
	}
	return intent, key, hasKey, h.Sum64(), nil
}

// object reads a JSON object's fields, their values raw.
func (a *argReader) object(data []byte) ([]argField, error) {
	if len(data) == 0 || data[0] != '{' {
		return nil, errors.New("not an object")
	}
	it := jsoniter.ConfigDefault.BorrowIterator(data)
	defer jsoniter.ConfigDefault.ReturnIterator(it)
	if a.buf == nil {
		a.buf = make([]byte, 0, 512) // jsoniter captures into a slice that is not nil
	}
	a.fields, a.buf = a.fields[:0], a.buf[:0]
	type span struct{ lo, hi int }
	var spans []span
	it.ReadObjectCB(func(it *jsoniter.Iterator, k string) bool {
		lo := len(a.buf)
		a.buf = it.SkipAndAppendBytes(a.buf)
		a.fields = append(a.fields, argField{name: k})
		spans = append(spans, span{lo, len(a.buf)})
		return true
	})
	if it.Error != nil && it.Error != io.EOF {
		return nil, it.Error
	}
	for i, s := range spans {
		a.fields[i].raw = bytes.TrimSpace(a.buf[s.lo:s.hi])
	}
	return a.fields, nil
}

// canonical is raw as one digest takes it: a number in its shortest
// form (4500.0 is 4500), other values without the spaces between their
// tokens, so that two writers' spelling of the same arguments gives one
// digest.
func canonical(raw []byte) []byte {
	if len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil && math.Abs(f) < 1<<53 {
			return strconv.AppendFloat(nil, f, 'f', -1, 64)
		}
		return raw
	}
	return compact(raw)
}

// compact is raw without the spaces between its tokens.
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
