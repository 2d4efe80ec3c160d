package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/replaylab/replaylab/internal/jsontext"
)

// HistorySchemaID names the history format: JSON Lines of what a client
// attempted and what the provider recorded, for replaylab check.
const HistorySchemaID = "replaylab.history/v1"

// MaxHistoryLine bounds one line of a history.
const MaxHistoryLine = 1 << 20

// HistoryLine is one line of a history: an attempt the client made, a
// read-back in which the client saw one of the provider's objects, or a
// record the provider holds. Which one is its "type".
type HistoryLine struct {
	Type string `json:"type"`
	// Intent is the logical operation the line belongs to.
	Intent string `json:"intent"`
	Key    string `json:"key,omitempty"`

	// An attempt: the payload digest sent, when it started and ended,
	// and what the client saw: ok (it took effect), fail (it did not),
	// info (it cannot tell: a timeout, a 5xx, a crash), as Jepsen writes
	// them. Object is the object a reply named, if any.
	Digest  string `json:"digest,omitempty"`
	Start   string `json:"start,omitempty"`
	End     string `json:"end,omitempty"`
	Outcome string `json:"outcome,omitempty"`

	// A record: the provider's object and its status; a read: the object
	// the client saw, with the status it saw.
	Object string `json:"object,omitempty"`
	Status string `json:"status,omitempty"`

	// Note is free text for people.
	Note string `json:"note,omitempty"`

	// start is Start read, when the line was decoded by a reader.
	start    time.Time
	hasStart bool
}

// Line types and attempt outcomes.
const (
	LineAttempt = "attempt"
	LineRead    = "read"
	LineRecord  = "record"

	OutcomeOK   = "ok"
	OutcomeFail = "fail"
	OutcomeInfo = "info"
)

var recordStatuses = []string{"pending", "succeeded", "failed", "canceled"}

// HistoryError is a line that does not read: the file and the line, and
// what is wrong with it.
type HistoryError struct {
	Name string
	Line int
	Err  error
}

func (e *HistoryError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err) }
func (e *HistoryError) Unwrap() error { return e.Err }

// HistoryReader reads a history a line at a time, each line checked
// strictly: the header, when there is one, only first; blank lines
// skipped; a line that does not read is a *HistoryError naming it.
type HistoryReader struct {
	name  string
	br    *bufio.Reader
	n     int
	first bool
	done  bool
}

// NewHistoryReader reads the history r holds, named name in errors.
func NewHistoryReader(name string, r io.Reader) *HistoryReader {
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(3); bytes.Equal(head, utf8BOM) {
		_, _ = br.Discard(3)
	}
	return &HistoryReader{name: name, br: br, first: true}
}

// Lines is how many lines have been read, blank ones and the header
// included.
func (h *HistoryReader) Lines() int { return h.n }

// Next reads the next attempt, read or record into l and returns its line
// number; io.EOF after the last.
func (h *HistoryReader) Next(l *HistoryLine) (int, error) {
	n, err := h.NextBorrowed(l)
	if err == nil {
		l.Intent, l.Key, l.Digest = strings.Clone(l.Intent), strings.Clone(l.Key), strings.Clone(l.Digest)
		l.Start, l.End, l.Object, l.Note = strings.Clone(l.Start), strings.Clone(l.End), strings.Clone(l.Object), strings.Clone(l.Note)
		l.Type, l.Outcome, l.Status = strings.Clone(l.Type), strings.Clone(l.Outcome), strings.Clone(l.Status)
	}
	return n, err
}

// NextBorrowed is Next without copying: the strings of l may share the
// reader's buffer, and are valid only until the next call. A caller that
// keeps one keeps a copy (strings.Clone). It lets a reader of millions of
// lines allocate nothing for the lines it only looks at.
func (h *HistoryReader) NextBorrowed(l *HistoryLine) (int, error) {
	for !h.done {
		raw, err := readLine(h.br)
		if len(raw) == 0 && errors.Is(err, io.EOF) {
			break
		}
		h.n++
		if err != nil && !errors.Is(err, io.EOF) {
			return h.n, &HistoryError{h.name, h.n, err}
		}
		h.done = errors.Is(err, io.EOF)
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		*l = HistoryLine{}
		header, derr := decodeHistoryLine(raw, l, h.first)
		if derr != nil {
			return h.n, &HistoryError{h.name, h.n, derr}
		}
		h.first = false
		if !header {
			return h.n, nil
		}
	}
	h.done = true
	return h.n, io.EOF
}

// Time is the line's time, when it carries one: an attempt's or a read's
// start, a record's start (when the provider recorded that status).
func (l *HistoryLine) Time() (time.Time, bool) {
	if l.hasStart || l.Start == "" {
		return l.start, l.hasStart
	}
	t, err := time.Parse(time.RFC3339Nano, l.Start)
	return t, err == nil
}

// readLine reads one line, refusing one longer than MaxHistoryLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		buf := append([]byte{}, line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = br.ReadSlice('\n')
			buf = append(buf, line...)
			if len(buf) > MaxHistoryLine {
				return nil, fmt.Errorf("the line is longer than %d bytes; a history line is one JSON object", MaxHistoryLine)
			}
		}
		return buf, err
	}
	return line, err
}

// historyFields are the fields a history line may have, spelled exactly.
var historyFields = []string{"type", "intent", "key", "digest", "start", "end", "outcome", "object", "status", "note"}

// decodeHistoryLine reads one line strictly: one JSON object of the known
// fields, spelled exactly, each of the right kind, with what its type
// requires. The header ({"schema": ...}) may only be the first line
// (first); header reports that it was one.
func decodeHistoryLine(raw []byte, l *HistoryLine, first bool) (header bool, err error) {
	// Bytes that are not UTF-8, or an escape that is no character, would
	// read as U+FFFD, and two different intents could read as one.
	if at, what := jsontext.Problem(raw); at >= 0 {
		if !utf8.Valid(raw) {
			return false, fmt.Errorf("byte %d is not UTF-8 (0x%02x); a history is UTF-8 text", at+1, raw[at])
		}
		return false, fmt.Errorf("the line holds %s", what)
	}
	if raw[0] != '{' {
		return false, fmt.Errorf("expected a JSON object ({...}), found %s", shortText(raw))
	}
	if fastLine(raw, l) {
		return false, checkLine(l)
	}
	keys, nulls, err := topKeys(raw)
	if err != nil {
		return false, err
	}
	if len(keys) == 1 && keys[0] == "schema" {
		if !first {
			return false, errors.New(`the header {"schema": ...} belongs on the first line only`)
		}
		var h struct {
			Schema string `json:"schema"`
		}
		if err := strictDecode(raw, &h); err != nil {
			return false, err
		}
		if h.Schema != HistorySchemaID {
			return false, fmt.Errorf("history schema %q: this build reads %q", h.Schema, HistorySchemaID)
		}
		return true, nil
	}
	for i, k := range keys {
		if !slices.Contains(historyFields, k) {
			return false, fmt.Errorf("unknown field %q (accepted, spelled so: %s)", k, strings.Join(historyFields, ", "))
		}
		if slices.Contains(keys[:i], k) {
			return false, fmt.Errorf("field %q appears twice on the line; a history line holds each field once", k)
		}
	}
	if len(nulls) > 0 {
		return false, fmt.Errorf("%q is null; give it a string, or leave the field out", nulls[0])
	}
	// topKeys has checked every key against historyFields, spelled
	// exactly, so plain Unmarshal (faster than a strict decoder) is as
	// strict here.
	if err := json.Unmarshal(raw, l); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value") {
			return false, errors.New("more than one JSON value on the line; a history has one object per line")
		}
		return false, historyJSONError(err)
	}
	return false, checkLine(l)
}

// checkLine checks what a decoded line's type requires of it, and keeps
// its start read.
func checkLine(l *HistoryLine) error {
	if l.Intent == "" {
		return errors.New(`the line has no "intent" (every attempt, read and record names the intent it belongs to)`)
	}
	switch l.Type {
	case LineAttempt:
		switch l.Outcome {
		case OutcomeOK, OutcomeFail, OutcomeInfo:
		case "":
			return errors.New(`the attempt has no "outcome" (accepted: ok, fail, info)`)
		default:
			return fmt.Errorf("outcome %q: accepted are ok (it took effect), fail (it did not) and info (the client cannot tell: a timeout, a 5xx)", l.Outcome)
		}
		start, err := lineTime("start", l.Start)
		if err != nil {
			return err
		}
		l.start, l.hasStart = start, l.Start != ""
		end, err := lineTime("end", l.End)
		if err != nil {
			return err
		}
		if !start.IsZero() && !end.IsZero() && end.Before(start) {
			return fmt.Errorf("end %s is before start %s", l.End, l.Start)
		}
		if l.Status != "" {
			return errors.New(`an attempt has no "status"; what the client saw is its "outcome"`)
		}
	case LineRead, LineRecord:
		what := map[string]string{LineRead: "read", LineRecord: "record"}[l.Type]
		if l.Object == "" {
			return fmt.Errorf(`the %s has no "object" (the provider's id for the effect)`, what)
		}
		switch {
		case l.Status == "":
			return fmt.Errorf(`the %s has no "status" (accepted: %s)`, what, strings.Join(recordStatuses, ", "))
		case !slices.Contains(recordStatuses, l.Status):
			return fmt.Errorf("status %q: accepted are %s", l.Status, strings.Join(recordStatuses, ", "))
		}
		if l.Outcome != "" || l.Digest != "" || l.End != "" {
			return fmt.Errorf(`a %s has no "outcome", "digest" or "end"; those belong to attempts`, what)
		}
		start, err := lineTime("start", l.Start)
		if err != nil {
			return err
		}
		l.start, l.hasStart = start, l.Start != ""
	case "":
		return errors.New(`the line has no "type" (accepted: attempt, read, record)`)
	default:
		return fmt.Errorf("type %q: accepted are attempt, read and record", l.Type)
	}
	return nil
}

// fastLine decodes the common line, a flat JSON object of known fields
// whose values are strings without escapes, into l without copying: the
// strings borrow raw. It reports false, having decided nothing, for any
// other line, which the full decoder then reads and words the errors of.
func fastLine(raw []byte, l *HistoryLine) bool {
	if bytes.IndexByte(raw, '\\') >= 0 {
		return false
	}
	var seen uint16
	i := skipSpace(raw, 1)
	if i < len(raw) && raw[i] == '}' {
		return false // empty: the full decoder says what is missing
	}
	for {
		key, next, ok := fastString(raw, i)
		if !ok {
			return false
		}
		i = skipSpace(raw, next)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		val, next, ok := fastString(raw, skipSpace(raw, i+1))
		if !ok {
			return false
		}
		f := slices.Index(historyFields, unsafe.String(unsafe.SliceData(key), len(key)))
		if f < 0 || seen&(1<<f) != 0 {
			return false
		}
		seen |= 1 << f
		*l.fields()[f] = unsafe.String(unsafe.SliceData(val), len(val))
		i = skipSpace(raw, next)
		switch {
		case i < len(raw) && raw[i] == ',':
			i = skipSpace(raw, i+1)
		case i < len(raw) && raw[i] == '}':
			return skipSpace(raw, i+1) == len(raw)
		default:
			return false
		}
	}
}

// fields are l's fields in the order of historyFields.
func (l *HistoryLine) fields() [10]*string {
	return [10]*string{&l.Type, &l.Intent, &l.Key, &l.Digest, &l.Start, &l.End, &l.Outcome, &l.Object, &l.Status, &l.Note}
}

// fastString reads a JSON string without escapes or control characters
// at raw[i], returning its bytes and where it ends.
func fastString(raw []byte, i int) ([]byte, int, bool) {
	if i >= len(raw) || raw[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(raw); j++ {
		switch c := raw[j]; {
		case c == '"':
			if j == i+1 {
				return raw[j:j], j + 1, true
			}
			return raw[i+1 : j], j + 1, true
		case c < 0x20:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r' || raw[i] == '\n') {
		i++
	}
	return i
}

// lineTime reads a line's time field, empty or RFC 3339.
func lineTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return t, fmt.Errorf("%s %q is not a time; write RFC 3339, e.g. 2026-12-01T10:00:00Z", name, v)
	}
	if y := t.UTC().Year(); y < 1678 || y > 2261 {
		// Times are compared in nanoseconds since 1970, which hold these.
		return t, fmt.Errorf("%s %q: give a time from the years 1678 to 2261", name, v)
	}
	return t, nil
}

// strictDecode decodes one JSON object, and nothing after it.
func strictDecode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return historyJSONError(err)
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line; a history has one object per line")
	}
	return nil
}

// topKeys lists the keys of the JSON object raw starts with, as written
// (the decoder matches keys in any letter case), and those whose value is
// null. A malformed object is left for the decoder to word.
func topKeys(raw []byte) (keys, nulls []string, err error) {
	depth, inStr, esc, escaped := 0, false, false, false
	start := -1
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc, escaped = true, true
			case c == '"':
				inStr = false
				if start >= 0 {
					j := i + 1
					for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t' || raw[j] == '\r' || raw[j] == '\n') {
						j++
					}
					if j < len(raw) && raw[j] == ':' {
						k := string(raw[start+1 : i])
						if escaped {
							if json.Unmarshal(raw[start:i+1], &k) != nil {
								k = ""
							}
						}
						keys = append(keys, k)
						v := j + 1
						for v < len(raw) && (raw[v] == ' ' || raw[v] == '\t' || raw[v] == '\r' || raw[v] == '\n') {
							v++
						}
						if bytes.HasPrefix(raw[v:], []byte("null")) {
							nulls = append(nulls, k)
						}
					}
					start = -1
				}
			}
			continue
		}
		switch c {
		case '"':
			inStr, escaped = true, false
			if depth == 1 {
				start = i
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return keys, nulls, nil
			}
		}
	}
	return keys, nulls, nil
}

func historyJSONError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se) && strings.HasPrefix(se.Error(), "unexpected end of JSON input"):
		return errors.New("the line ends inside its JSON object")
	case errors.As(err, &se):
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		return fmt.Errorf("%q holds %s; expected %s", te.Field, valueWords(te.Value), typeWords(te.Type))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the line ends inside its JSON object")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("unknown field %s (accepted: type, intent, key, digest, start, end, outcome, object, status, note)", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return err
}

func shortText(b []byte) string {
	if len(b) > 20 {
		b = b[:20]
	}
	return strconv.Quote(string(b))
}
