package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
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

// Anomaly kinds.
const (
	AnomalyDuplicate    = "duplicate_effect"
	AnomalyUnlearned    = "effect_never_learned"
	AnomalyKeyChanged   = "key_changed"
	AnomalyKeyReused    = "key_reused_with_other_payload"
	AnomalyKeyShared    = "key_shared_by_intents"
	AnomalyOrphanRecord = "record_without_attempt"
	AnomalyOKNoEffect   = "ok_without_effect"
)

// AnomalyKinds lists every anomaly check reports, in the order it
// explains them.
var AnomalyKinds = []string{AnomalyDuplicate, AnomalyUnlearned, AnomalyKeyChanged, AnomalyKeyReused, AnomalyKeyShared, AnomalyOrphanRecord, AnomalyOKNoEffect}

// Anomaly is one thing the history shows that should not be, with the
// lines that show it.
type Anomaly struct {
	Kind    string `json:"kind"`
	Intent  string `json:"intent"`
	Message string `json:"message"`
	Lines   []int  `json:"lines"`
}

// HistoryReport is what check found.
type HistoryReport struct {
	Lines     int       `json:"lines"`
	Attempts  int       `json:"attempts"`
	Reads     int       `json:"reads"`
	Records   int       `json:"records"`
	Intents   int       `json:"intents"`
	Anomalies []Anomaly `json:"anomalies"`
}

// HistoryError is a line that does not read: the file and the line, and
// what is wrong with it.
type HistoryError struct {
	Name string
	Line int
	Err  error
}

func (e *HistoryError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err) }
func (e *HistoryError) Unwrap() error { return e.Err }

// intentFacts is what check keeps per intent: it grows with intents and
// keys, not with lines.
type intentFacts struct {
	attempts int
	keyLines map[string]int // key → the first attempt line with it
	okLine   int            // the first ok attempt
	// okObject is an object an ok attempt named, with its line.
	okObject     string
	okObjectLine int
	unsureLine   int            // the first info or fail attempt
	unsureKeys   map[string]int // key → its first info or fail attempt line
	// readLive: a read showed the client one of the intent's objects as
	// pending or succeeded.
	readLive bool
	records  []recordFact
	// seen holds the objects of records, to take a record listed twice
	// as one effect.
	seen map[string]bool
}

type recordFact struct {
	line   int
	object string
	key    string
	status string
}

// keyFacts is what check keeps per key: the first digest and intent.
type keyFacts struct {
	digest, intent string
	line           int
	otherLine      int // the first attempt with another digest
	otherDigest    string
	// otherIntentLine is the first attempt with the key for another intent.
	otherIntent     string
	otherIntentLine int
}

// CheckHistory reads a history from r (named name in messages) and
// reports its anomalies. A line that does not read stops it with a
// *HistoryError naming the line.
func CheckHistory(name string, r io.Reader) (*HistoryReport, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(3); bytes.Equal(head, utf8BOM) {
		_, _ = br.Discard(3)
	}
	rep := &HistoryReport{Anomalies: []Anomaly{}}
	intents := map[string]*intentFacts{}
	keys := map[string]*keyFacts{}
	var order []string
	n := 0
	first := true
	var l HistoryLine
	for {
		raw, err := readLine(br)
		if len(raw) == 0 && errors.Is(err, io.EOF) {
			break
		}
		n++
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, &HistoryError{name, n, err}
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			if errors.Is(err, io.EOF) {
				break
			}
			continue
		}
		l = HistoryLine{}
		header, derr := decodeHistoryLine(raw, &l, first)
		if derr != nil {
			return nil, &HistoryError{name, n, derr}
		}
		first = false
		if header {
			continue
		}
		f := intents[l.Intent]
		if f == nil {
			f = &intentFacts{keyLines: map[string]int{}}
			intents[l.Intent] = f
			order = append(order, l.Intent)
		}
		switch l.Type {
		case LineAttempt:
			rep.Attempts++
			f.attempts++
			if _, ok := f.keyLines[l.Key]; !ok {
				f.keyLines[l.Key] = n
			}
			switch l.Outcome {
			case OutcomeOK:
				if f.okLine == 0 {
					f.okLine = n
				}
				if l.Object != "" && f.okObject == "" {
					f.okObject, f.okObjectLine = l.Object, n
				}
			default:
				if f.unsureLine == 0 {
					f.unsureLine = n
				}
				if f.unsureKeys == nil {
					f.unsureKeys = map[string]int{}
				}
				if _, ok := f.unsureKeys[l.Key]; !ok {
					f.unsureKeys[l.Key] = n
				}
			}
			if l.Key != "" {
				k := keys[l.Key]
				switch {
				case k == nil:
					keys[l.Key] = &keyFacts{digest: l.Digest, intent: l.Intent, line: n}
				default:
					if l.Digest != "" && k.digest != "" && k.digest != l.Digest && k.otherLine == 0 {
						k.otherLine, k.otherDigest = n, l.Digest
					}
					if l.Intent != k.intent && k.otherIntentLine == 0 {
						k.otherIntent, k.otherIntentLine = l.Intent, n
					}
				}
			}
		case LineRead:
			rep.Reads++
			if l.Status == "pending" || l.Status == "succeeded" {
				f.readLive = true
			}
		case LineRecord:
			rep.Records++
			if f.seen == nil {
				f.seen = map[string]bool{}
			}
			if !f.seen[l.Object] {
				f.seen[l.Object] = true
				f.records = append(f.records, recordFact{line: n, object: l.Object, key: l.Key, status: l.Status})
			}
		}
	}
	rep.Lines = n
	rep.Intents = len(order)
	if rep.Attempts+rep.Reads+rep.Records == 0 {
		return nil, &HistoryError{name, max(n, 1), errors.New("the history holds no attempt, read or record: nothing to check")}
	}
	for _, id := range order {
		rep.Anomalies = append(rep.Anomalies, intents[id].anomalies(id, keys)...)
	}
	sort.SliceStable(rep.Anomalies, func(i, j int) bool { return rep.Anomalies[i].Lines[0] < rep.Anomalies[j].Lines[0] })
	return rep, nil
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
	if raw[0] != '{' {
		return false, fmt.Errorf("expected a JSON object ({...}), found %s", shortText(raw))
	}
	keys, err := topKeys(raw)
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
	if l.Intent == "" {
		return false, errors.New(`the line has no "intent" (every attempt, read and record names the intent it belongs to)`)
	}
	switch l.Type {
	case LineAttempt:
		switch l.Outcome {
		case OutcomeOK, OutcomeFail, OutcomeInfo:
		case "":
			return false, errors.New(`the attempt has no "outcome" (accepted: ok, fail, info)`)
		default:
			return false, fmt.Errorf("outcome %q: accepted are ok (it took effect), fail (it did not) and info (the client cannot tell: a timeout, a 5xx)", l.Outcome)
		}
		var times [2]time.Time
		for i, t := range []struct{ name, v string }{{"start", l.Start}, {"end", l.End}} {
			if t.v == "" {
				continue
			}
			if times[i], err = time.Parse(time.RFC3339Nano, t.v); err != nil {
				return false, fmt.Errorf("%s %q is not a time; write RFC 3339, e.g. 2026-12-01T10:00:00Z", t.name, t.v)
			}
		}
		if !times[0].IsZero() && !times[1].IsZero() && times[1].Before(times[0]) {
			return false, fmt.Errorf("end %s is before start %s", l.End, l.Start)
		}
		if l.Status != "" {
			return false, errors.New(`an attempt has no "status"; what the client saw is its "outcome"`)
		}
	case LineRead, LineRecord:
		what := map[string]string{LineRead: "read", LineRecord: "record"}[l.Type]
		if l.Object == "" {
			return false, fmt.Errorf(`the %s has no "object" (the provider's id for the effect)`, what)
		}
		switch {
		case l.Status == "":
			return false, fmt.Errorf(`the %s has no "status" (accepted: %s)`, what, strings.Join(recordStatuses, ", "))
		case !slices.Contains(recordStatuses, l.Status):
			return false, fmt.Errorf("status %q: accepted are %s", l.Status, strings.Join(recordStatuses, ", "))
		}
		if l.Outcome != "" || l.Digest != "" || l.End != "" || (l.Type == LineRecord && l.Start != "") {
			return false, fmt.Errorf(`a %s has no "outcome", "digest" or "end"%s; those belong to attempts`, what, map[bool]string{true: ` or "start"`}[l.Type == LineRecord])
		}
	case "":
		return false, errors.New(`the line has no "type" (accepted: attempt, read, record)`)
	default:
		return false, fmt.Errorf("type %q: accepted are attempt, read and record", l.Type)
	}
	return false, nil
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
// (the decoder matches keys in any letter case). A malformed object is
// left for the decoder to word.
func topKeys(raw []byte) ([]string, error) {
	var keys []string
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
						if !escaped {
							keys = append(keys, string(raw[start+1:i]))
						} else {
							var k string
							if err := json.Unmarshal(raw[start:i+1], &k); err == nil {
								keys = append(keys, k)
							}
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
				return keys, nil
			}
		}
	}
	return keys, nil
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

// anomalies are what one intent's facts show.
func (f *intentFacts) anomalies(id string, keys map[string]*keyFacts) []Anomaly {
	var out []Anomaly
	var live []recordFact
	for _, r := range f.records {
		if r.status != "failed" && r.status != "canceled" {
			live = append(live, r)
		}
	}
	if len(live) > 1 {
		lines := make([]int, 0, len(live))
		objs := make([]string, 0, len(live))
		for _, r := range live {
			lines = append(lines, r.line)
			objs = append(objs, r.object)
		}
		out = append(out, Anomaly{Kind: AnomalyDuplicate, Intent: id, Lines: lines,
			Message: fmt.Sprintf("%d effects for one intent: %s", len(live), strings.Join(objs, ", "))})
	}
	if len(live) > 0 && f.okLine == 0 && !f.readLive && f.unsureLine != 0 {
		r := live[0]
		at := f.unsureLine
		if l, ok := f.unsureKeys[r.key]; ok && r.key != "" {
			at = l
		}
		out = append(out, Anomaly{Kind: AnomalyUnlearned, Intent: id, Lines: []int{at, r.line},
			Message: fmt.Sprintf("the client heard only failures or no answer (fail, info) and read nothing back, yet %s took effect (%s)", r.object, r.status)})
	}
	if f.okLine != 0 {
		named := f.okObject == ""
		for _, r := range live {
			named = named || r.object == f.okObject
		}
		switch {
		case len(live) == 0:
			out = append(out, Anomaly{Kind: AnomalyOKNoEffect, Intent: id, Lines: []int{f.okLine},
				Message: "the client was told it took effect (ok), but the provider holds no effect for this intent"})
		case !named:
			out = append(out, Anomaly{Kind: AnomalyOKNoEffect, Intent: id, Lines: []int{f.okObjectLine, live[0].line},
				Message: fmt.Sprintf("the client was told of %s, but the provider holds no such effect for this intent (it holds %s)", f.okObject, live[0].object)})
		}
	}
	if len(f.keyLines) > 1 {
		ks := make([]string, 0, len(f.keyLines))
		for k := range f.keyLines {
			ks = append(ks, k)
		}
		sort.Slice(ks, func(i, j int) bool { return f.keyLines[ks[i]] < f.keyLines[ks[j]] })
		lines := make([]int, len(ks))
		for i, k := range ks {
			lines[i] = f.keyLines[k]
			ks[i] = keyWords(k)
		}
		out = append(out, Anomaly{Kind: AnomalyKeyChanged, Intent: id, Lines: lines,
			Message: fmt.Sprintf("one intent sent under %d keys: %s", len(ks), strings.Join(ks, ", "))})
	}
	for k, line := range f.keyLines {
		kf := keys[k]
		if kf == nil || kf.intent != id || line != kf.line {
			continue
		}
		if kf.otherLine != 0 {
			out = append(out, Anomaly{Kind: AnomalyKeyReused, Intent: id, Lines: []int{kf.line, kf.otherLine},
				Message: fmt.Sprintf("key %s sent with payload %s, then with %s", keyWords(k), kf.digest, kf.otherDigest)})
		}
		if kf.otherIntentLine != 0 {
			out = append(out, Anomaly{Kind: AnomalyKeyShared, Intent: id, Lines: []int{kf.line, kf.otherIntentLine},
				Message: fmt.Sprintf("key %s sent for intent %s, then for intent %s: the provider takes the second as a repeat of the first", keyWords(k), CleanLine(id), CleanLine(kf.otherIntent))})
		}
	}
	if f.attempts == 0 {
		for _, r := range f.records {
			out = append(out, Anomaly{Kind: AnomalyOrphanRecord, Intent: id, Lines: []int{r.line},
				Message: fmt.Sprintf("the provider holds %s (%s), but the client's history has no attempt for this intent", r.object, r.status)})
		}
	}
	return out
}

func keyWords(k string) string {
	if k == "" {
		return "(no key)"
	}
	return strconv.Quote(k)
}

// HistoryText is a report for people: one line per anomaly with the lines
// that show it, then a summary.
func HistoryText(name string, rep *HistoryReport) string {
	var b strings.Builder
	for _, a := range rep.Anomalies {
		lines := make([]string, len(a.Lines))
		for i, l := range a.Lines {
			lines[i] = strconv.Itoa(l)
		}
		fmt.Fprintf(&b, "%s:%s: %s: %s: %s\n", CleanLine(name), strings.Join(lines, ","), a.Kind, CleanLine(a.Intent), CleanLine(a.Message))
	}
	verdict := "no anomaly"
	if len(rep.Anomalies) > 0 {
		verdict = Plural(len(rep.Anomalies), "anomaly")
		verdict = strings.Replace(verdict, "anomalys", "anomalies", 1)
	}
	fmt.Fprintf(&b, "%s: %s, %s, %s, %s, %s: %s\n", CleanLine(name), Plural(rep.Lines, "line"), Plural(rep.Intents, "intent"),
		Plural(rep.Attempts, "attempt"), Plural(rep.Reads, "read"), Plural(rep.Records, "record"), verdict)
	return b.String()
}
