package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/replaylab/replaylab/missions"
)

// Kind is what a file holds, told by its content, never by its name.
type Kind string

// The kinds a file can be.
const (
	KindEmpty   Kind = "empty"
	KindMission Kind = "mission" // not JSON: a mission's YAML
	KindCase    Kind = "case"    // a replaylab.case/* document
	KindSession Kind = "session" // a replaylab.session/v1 document, on one line or many
	KindHistory Kind = "history" // JSON Lines: a history, with or without its header
	KindOther   Kind = "other"   // a JSON document of another schema
	KindJSON    Kind = "json"    // a JSON document over many lines, with no schema
	KindTraces  Kind = "traces"  // OpenTelemetry traces as OTLP/JSON, as the file exporter writes them
)

// Sniff tells what a file holds from its head, its first bytes (a
// history can be larger than memory): the one place that rule is written,
// for validate, replay, compare and check. schema is the document's
// schema field, where it has one.
func Sniff(head []byte) (kind Kind, schema string) {
	h := bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	if len(h) == 0 {
		return KindEmpty, ""
	}
	if h[0] != '{' {
		return KindMission, ""
	}
	line, _, whole := bytes.Cut(h, []byte("\n"))
	pretty := string(bytes.TrimSpace(line)) == "{"
	if firstKey(h) == "resourceSpans" {
		return KindTraces, ""
	}
	schema = leadingSchema(h)
	if schema == "" && !pretty && whole {
		schema = SchemaOf(line)
	}
	if schema == "" {
		// A document written over lines, or a head that is the whole
		// file: its schema wherever it stands.
		schema = SchemaOf(h)
	}
	switch {
	case schema == SessionSchemaID:
		return KindSession, schema
	case strings.HasPrefix(schema, "replaylab.case/"):
		return KindCase, schema
	case strings.HasPrefix(schema, "replaylab.history/"):
		// Another version is the history reader's to name.
		return KindHistory, schema
	case schema != "":
		return KindOther, schema
	case pretty:
		return KindJSON, ""
	}
	return KindHistory, ""
}

// firstKey is the first key of the object data opens, or "".
func firstKey(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	if k, err := dec.Token(); err == nil {
		s, _ := k.(string)
		return s
	}
	return ""
}

// leadingSchema is the value of "schema" when it is the first field of
// the object data opens, read token by token so that a head cut short
// still tells: replaylab writes every document with its schema first.
func leadingSchema(data []byte) string {
	if firstKey(data) != "schema" {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	_, _ = dec.Token() // {
	_, _ = dec.Token() // "schema"
	t, err := dec.Token()
	if s, ok := t.(string); err == nil && ok {
		return s
	}
	return ""
}

// Document is a case or a session, as read from a file.
type Document struct {
	Case    *missions.Case
	Session *Session
}

// Mission is the mission the document carries, if any.
func (d Document) Mission() *missions.Mission {
	if d.Session != nil {
		return d.Session.Mission
	}
	if d.Case != nil {
		return &d.Case.Mission
	}
	return nil
}

// ReadDocument reads a case file or a session file, telling which by its
// content; name is used in messages.
func ReadDocument(name string, data []byte) (Document, error) {
	kind, _ := Sniff(data)
	if kind == KindTraces {
		return Document{}, fmt.Errorf("%s holds OpenTelemetry traces (OTLP/JSON lines), not a case or a session: replaylab check reads them (replaylab check %s [REFUNDS.json])", name, name)
	}
	if kind == KindSession {
		s, err := UnmarshalSession(name, data)
		return Document{Session: s}, err
	}
	c, err := Unmarshal(name, data)
	return Document{Case: c}, err
}
