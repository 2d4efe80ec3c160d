package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// HistoryLine is one line of a history: an attempt the client made, or a
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

	// A record: the provider's object and its status.
	Object string `json:"object,omitempty"`
	Status string `json:"status,omitempty"`

	// Note is free text for people.
	Note string `json:"note,omitempty"`
}

// Line types and attempt outcomes.
const (
	LineAttempt = "attempt"
	LineRecord  = "record"

	OutcomeOK   = "ok"
	OutcomeFail = "fail"
	OutcomeInfo = "info"
)

var recordStatuses = []string{"pending", "succeeded", "failed", "canceled"}

// Anomaly kinds.
const (
	AnomalyDuplicate     = "duplicate_effect"
	AnomalyUnlearned     = "effect_never_learned"
	AnomalyKeyChanged    = "key_changed"
	AnomalyKeyReused     = "key_reused_with_other_payload"
	AnomalyOrphanRecord  = "record_without_attempt"
	anomalyKindsAccepted = "duplicate_effect, effect_never_learned, key_changed, key_reused_with_other_payload, record_without_attempt"
)

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
	first      int // the line the intent first appears on
	attempts   int
	firstKey   string
	keyLines   map[string]int // key → the first attempt line with it
	okLine     int            // the first ok attempt
	infoLine   int            // the first info attempt
	infoKeys   map[string]int // key → its first info attempt line
	okKeys     map[string]bool
	records    []recordFact
	orphanable bool
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
}

// CheckHistory reads a history from r (named name in messages) and
// reports its anomalies. A line that does not read stops it with a
// *HistoryError naming the line.
func CheckHistory(name string, r io.Reader) (*HistoryReport, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	rep := &HistoryReport{Anomalies: []Anomaly{}}
	intents := map[string]*intentFacts{}
	keys := map[string]*keyFacts{}
	var order []string
	n := 0
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
		if err := decodeHistoryLine(raw, &l); err != nil {
			return nil, &HistoryError{name, n, err}
		}
		if l.Type == "" && l.Intent == "" {
			// The header line: {"schema": "replaylab.history/v1"}.
			continue
		}
		f := intents[l.Intent]
		if f == nil {
			f = &intentFacts{first: n, keyLines: map[string]int{}}
			intents[l.Intent] = f
			order = append(order, l.Intent)
		}
		switch l.Type {
		case LineAttempt:
			rep.Attempts++
			f.attempts++
			if _, ok := f.keyLines[l.Key]; !ok {
				if len(f.keyLines) == 0 {
					f.firstKey = l.Key
				}
				f.keyLines[l.Key] = n
			}
			switch l.Outcome {
			case OutcomeOK:
				if f.okLine == 0 {
					f.okLine = n
				}
				if f.okKeys == nil {
					f.okKeys = map[string]bool{}
				}
				f.okKeys[l.Key] = true
			case OutcomeInfo:
				if f.infoLine == 0 {
					f.infoLine = n
				}
				if f.infoKeys == nil {
					f.infoKeys = map[string]int{}
				}
				if _, ok := f.infoKeys[l.Key]; !ok {
					f.infoKeys[l.Key] = n
				}
			}
			if l.Key != "" && l.Digest != "" {
				k := keys[l.Key]
				switch {
				case k == nil:
					keys[l.Key] = &keyFacts{digest: l.Digest, intent: l.Intent, line: n}
				case k.digest != l.Digest && k.otherLine == 0:
					k.otherLine, k.otherDigest = n, l.Digest
				}
			}
		case LineRecord:
			rep.Records++
			f.records = append(f.records, recordFact{line: n, object: l.Object, key: l.Key, status: l.Status})
		}
	}
	rep.Lines = n
	rep.Intents = len(order)
	for _, id := range order {
		rep.Anomalies = append(rep.Anomalies, intents[id].anomalies(id, keys)...)
	}
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

// decodeHistoryLine reads one line strictly: one JSON object of the
// known fields, each of the right kind, with what its type requires.
func decodeHistoryLine(raw []byte, l *HistoryLine) error {
	if raw[0] != '{' {
		return fmt.Errorf("expected a JSON object ({...}), found %s", shortText(raw))
	}
	if bytes.Contains(raw, []byte(`"schema"`)) {
		var h struct {
			Schema string `json:"schema"`
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&h); err == nil {
			if h.Schema != HistorySchemaID {
				return fmt.Errorf("history schema %q: this build reads %q", h.Schema, HistorySchemaID)
			}
			return nil
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(l); err != nil {
		return historyJSONError(err)
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line; a history has one object per line")
	}
	if l.Intent == "" {
		return errors.New(`the line has no "intent" (every attempt and record names the intent it belongs to)`)
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
		for _, t := range []struct{ name, v string }{{"start", l.Start}, {"end", l.End}} {
			if t.v == "" {
				continue
			}
			if _, err := time.Parse(time.RFC3339Nano, t.v); err != nil {
				return fmt.Errorf("%s %q is not a time; write RFC 3339, e.g. 2026-12-01T10:00:00Z", t.name, t.v)
			}
		}
		if l.Status != "" {
			return errors.New(`an attempt has no "status"; what the client saw is its "outcome"`)
		}
	case LineRecord:
		if l.Object == "" {
			return errors.New(`the record has no "object" (the provider's id for the effect)`)
		}
		if !contains(recordStatuses, l.Status) {
			return fmt.Errorf("status %q: accepted are %s", l.Status, strings.Join(recordStatuses, ", "))
		}
		if l.Outcome != "" || l.Start != "" || l.End != "" || l.Digest != "" {
			return errors.New(`a record has no "outcome", "start", "end" or "digest"; those belong to attempts`)
		}
	case "":
		return errors.New(`the line has no "type" (accepted: attempt, record)`)
	default:
		return fmt.Errorf("type %q: accepted are attempt and record", l.Type)
	}
	return nil
}

func contains(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

func historyJSONError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
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
	if len(live) > 0 && f.okLine == 0 && f.infoLine != 0 {
		r := live[0]
		at := f.infoLine
		if l, ok := f.infoKeys[r.key]; ok && r.key != "" {
			at = l
		}
		out = append(out, Anomaly{Kind: AnomalyUnlearned, Intent: id, Lines: []int{at, r.line},
			Message: fmt.Sprintf("the client saw only failures or no answer (info), yet %s took effect (%s)", r.object, r.status)})
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
		if kf == nil || kf.intent != id || kf.otherLine == 0 || line != kf.line {
			continue
		}
		out = append(out, Anomaly{Kind: AnomalyKeyReused, Intent: id, Lines: []int{kf.line, kf.otherLine},
			Message: fmt.Sprintf("key %s sent with payload %s, then with %s", keyWords(k), kf.digest, kf.otherDigest)})
	}
	if f.attempts == 0 {
		for _, r := range f.records {
			if r.key != "" && keys[r.key] != nil {
				continue // sent under another intent's name: the key shows it
			}
			out = append(out, Anomaly{Kind: AnomalyOrphanRecord, Intent: id, Lines: []int{r.line},
				Message: fmt.Sprintf("the provider holds %s (%s), but the client's history has no attempt for this intent", r.object, r.status)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Lines[0] < out[j].Lines[0] })
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
	fmt.Fprintf(&b, "%s: %s, %s, %s, %s: %s\n", CleanLine(name), Plural(rep.Lines, "line"), Plural(rep.Intents, "intent"),
		Plural(rep.Attempts, "attempt"), Plural(rep.Records, "record"), verdict)
	return b.String()
}
