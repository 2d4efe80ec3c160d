// Package export turns cases into files and text: case JSON in a versioned
// schema, comparisons of cases, and write-ups.
package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/replaylab/replaylab/internal/schemawalk"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
)

// SchemaID names the case format. It is the first field of every export.
//
// Version 2 adds to version 1 what the engine in three parts records: the
// caller's belief after each event, and a ledger complete enough to
// restore (a pending object's resolves_to, a saved 500's partial mark, the
// requests still in flight). The new fields would be refused by a strict
// version 1 reader, hence the new version.
//
// Version 3 has the fields of version 2; it changes one value. A saved
// key reused with other parameters is answered 400, as Stripe answers it
// (with an idempotency_error), where versions 1 and 2 wrote 422. Files of
// versions 1 and 2 are still read, replayed and compared, each as its
// version records a run (see AsVersion).
const SchemaID = "replaylab.case/v3"

// SchemaReads is version 4: version 3's fields and the mission's reads,
// the faults its reads meet. Only a case whose mission has reads is
// written as version 4, so that every case without them reads, byte for
// byte, as before and in every earlier reader.
const SchemaReads = "replaylab.case/v4"

// SchemaEdited is version 5: version 4's fields (reads or none) and the
// mission's edited, the steps whose fixture was replaced in the lab. Only
// a case of an edited mission is written as version 5.
const SchemaEdited = "replaylab.case/v5"

// SchemaProvider is version 6: version 5's fields (edited, reads or
// neither) and what provider profiles brought: the profile the run
// played, carried whole (provider), the mission's captured amounts, the
// objects' charge and amount, and the documented refusals (a final key,
// a missing key, the refund limit) with any status from 400 to 599.
// Only a case under a profile other than v1, v2 and none, or whose
// mission states what was captured, is written as version 6.
const SchemaProvider = "replaylab.case/v6"

// SchemaV2 and SchemaV1 are the earlier case formats, still read.
const (
	SchemaV2 = "replaylab.case/v2"
	SchemaV1 = "replaylab.case/v1"
)

// mismatchCodeV2 is the code versions 1 and 2 wrote for a mismatch.
const mismatchCodeV2 = 422

// readsSchemas says which versions this build reads, for messages.
const readsSchemas = `"replaylab.case/v6", "replaylab.case/v5", "replaylab.case/v4", "replaylab.case/v3", "replaylab.case/v2" and "replaylab.case/v1"`

// MaxCaseBytes bounds a case file read from disk.
const MaxCaseBytes = 64 << 20

// document is a case as written to disk: the schema id first, then the case.
type document struct {
	Schema string `json:"schema"`
	*missions.Case
}

// Marshal renders a case as indented JSON with a trailing newline. The same
// case always gives the same bytes.
func Marshal(c *missions.Case) ([]byte, error) {
	if c.Live() {
		// A case that reads its events from a runner's records
		// (Runner.View, Runner.Logged) is written with them all.
		c = c.Whole()
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if !providers.Short(c.Settings.Contract) && c.Provider == nil {
		p, err := c.Settings.ProfileOf()
		if err != nil {
			return nil, err
		}
		cc := *c
		cc.Provider = p
		c = &cc
	}
	schema := SchemaFor(c)

	if err := enc.Encode(document{Schema: schema, Case: c}); err != nil {
		return nil, err
	}
	return termtext.EscapeHidden(buf.Bytes()), nil
}

// SchemaFor is the version a case is written as: the oldest that holds
// every field it has, so that a case without the newer fields reads,
// byte for byte, as before.
func SchemaFor(c *missions.Case) string {
	m := &c.Mission
	switch {
	case c.Provider != nil || !providers.Short(c.Settings.Contract) || len(m.Captured) > 0:
		return SchemaProvider
	case m.Edited != nil:
		return SchemaEdited
	case len(m.Reads) > 0:
		return SchemaReads
	}
	return SchemaID
}

// casePartKeys are the parts every case has, in the order it writes them.
var casePartKeys = []string{"schema", "mission", "settings", "events", "ledger", "outcome"}

// utf8BOM is the byte-order mark some editors put at the start of a file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Unmarshal reads a case file. name is used in error messages, which say
// what is wrong, where (line:col where there is a place to point at) and
// what would be accepted.
// caseSchema is schema.json, compiled once, for the walk that holds a
// case file to it.
var caseSchema = sync.OnceValues(func() (*schemawalk.Schema, error) {
	return schemawalk.Compile(Schema, "case")
})

func Unmarshal(name string, data []byte) (*missions.Case, error) {
	if len(data) > MaxCaseBytes {
		return nil, fmt.Errorf("%s: file is %d bytes; a case file may be at most %d", name, len(data), MaxCaseBytes)
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	if !utf8.Valid(data) {
		i := invalidUTF8(data)
		line, col := position(data, int64(i))
		return nil, fmt.Errorf("%s:%d:%d: the file is not UTF-8 text (byte 0x%02x); a case file is UTF-8 JSON", name, line, col, data[i])
	}
	// One walk beside the case schema checks the syntax, the keys and
	// every value. The decoder takes a field in any letter case or twice
	// without a word, says of an unknown one neither where nor what would
	// do, and takes a null, a missing field or any string where the
	// format has a word.
	walk, err := caseSchema()
	if err != nil {
		return nil, fmt.Errorf("%s: the case schema built into this program does not compile: %w", name, err)
	}
	scan := walk.Scan(data)
	if scan.Syntax() || !scan.Object() {
		var head map[string]json.RawMessage
		err := json.Unmarshal(data, &head)
		if err == nil {
			return nil, fmt.Errorf("%s: invalid JSON", name)
		}
		if m, merr := missions.Parse(name, data); merr == nil {
			return nil, notACaseButAMission(name, m)
		}
		return nil, jsonError(name, data, err)
	}
	head := scan.Top(data)
	raw, ok := head["schema"]
	var schema string
	switch {
	case !ok:
		if m, merr := missions.Parse(name, data); merr == nil {
			return nil, notACaseButAMission(name, m)
		}
		return nil, fmt.Errorf("%s: not a replaylab case: no \"schema\" field (expected %q)", name, SchemaID)
	case json.Unmarshal(raw, &schema) != nil:
		return nil, fmt.Errorf("%s: not a replaylab case: \"schema\" is %s (expected the string %q)", name, raw, SchemaID)
	case schema != SchemaID && schema != SchemaReads && schema != SchemaEdited && schema != SchemaProvider && schema != SchemaV2 && schema != SchemaV1:
		if strings.HasPrefix(schema, "replaylab.case/") {
			return nil, fmt.Errorf("%s: case schema %q is from a version this build does not read (it reads %s)", name, schema, readsSchemas)
		}
		return nil, fmt.Errorf("%s: not a replaylab case: schema is %q (expected %q)", name, schema, SchemaID)
	}
	for _, k := range casePartKeys[1:] {
		if v, ok := head[k]; !ok || string(v) == "null" {
			return nil, fmt.Errorf("%s: the case has no %q (a case has %s)", name, k, strings.Join(casePartKeys, ", "))
		}
	}
	if offset, msg, ok := scan.KeyProblem(); ok {
		line, col := position(data, offset)
		return nil, fmt.Errorf("%s:%d:%d: %s", name, line, col, msg)
	}
	// The walk found no key the schema does not have, and the schema has
	// the case type's fields exactly (TestSchemaHasTheCaseFields), so
	// the plain decoder drops nothing.
	doc := document{Case: &missions.Case{}}
	err = json.Unmarshal(data, &doc)
	if offset, msg, ok := scan.Issue(); ok {
		// A value of the wrong kind is worded as the decoder sees it,
		// in the Go type's terms (a seed is a whole number from 0 to
		// 2^64-1); every other problem as the schema words it.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, jsonError(name, data, err)
		}
		line, col := position(data, offset)
		return nil, fmt.Errorf("%s:%d:%d: %s", name, line, col, msg)
	}
	if err != nil {
		return nil, jsonError(name, data, err)
	}
	doc.Case.Settings.Profile = doc.Case.Provider
	if !providers.Short(doc.Case.Settings.Contract) && doc.Case.Provider == nil {
		return nil, fmt.Errorf("%s: the case names provider %s but does not carry its profile (a case under a profile other than v1, v2 and none carries it whole, in \"provider\")", name, doc.Case.Settings.Contract)
	}
	if err := validateCase(doc.Case); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	doc.Case.Version = 3
	switch want := SchemaFor(doc.Case); {
	case want == SchemaProvider && schema != SchemaProvider:
		return nil, fmt.Errorf("%s: the case carries a provider profile or captured amounts, which came with %s; write the schema as %q", name, SchemaProvider, SchemaProvider)
	case want != SchemaProvider && schema == SchemaProvider:
		return nil, fmt.Errorf("%s: a %s case is one run under a profile other than v1, v2 and none, or with captured amounts, and this one has neither; write the schema as %q", name, SchemaProvider, want)
	case schema == SchemaProvider:
	case doc.Case.Mission.Edited != nil && schema != SchemaEdited:
		return nil, fmt.Errorf("%s: the mission was edited (edited), which came with %s; write the schema as %q", name, SchemaEdited, SchemaEdited)
	case doc.Case.Mission.Edited == nil && schema == SchemaEdited:
		return nil, fmt.Errorf("%s: a %s case is one whose mission was edited in the lab, and this one has no \"edited\"; write the schema as %q", name, SchemaEdited, want)
	case schema == SchemaEdited:
	case len(doc.Case.Mission.Reads) > 0 && schema != SchemaReads:
		return nil, fmt.Errorf("%s: the mission has reads, which came with %s; write the schema as %q", name, SchemaReads, SchemaReads)
	case len(doc.Case.Mission.Reads) == 0 && schema == SchemaReads:
		return nil, fmt.Errorf("%s: a %s case is one whose mission has reads, and this one has none; write the schema as %q", name, SchemaReads, SchemaID)
	}
	if schema == SchemaV2 {
		doc.Case.Version = 2
	}
	if schema == SchemaV1 {
		if loc := v2Key().FindSubmatchIndex(data); loc != nil {
			line, col := position(data, int64(loc[4]-1))
			return nil, fmt.Errorf("%s:%d:%d: a %s case has no %q field; it came with %s (write the schema as %q, or remove the field)",
				name, line, col, SchemaV1, data[loc[4]:loc[5]], SchemaID, SchemaID)
		}
		for _, ev := range doc.Case.Events {
			if ev.Belief != "" {
				return nil, fmt.Errorf("%s: event %d: a %s case has no \"belief\" field on its events; it came with %s (write the schema as %q, or remove the field)",
					name, ev.Seq, SchemaV1, SchemaID, SchemaID)
			}
		}
		doc.Case.Version = 1
	}
	return doc.Case, nil
}

// v2Key finds a field that version 1 of the format did not have anywhere:
// a key (a quoted name and a colon, its quote not escaped inside a
// string). An event's belief is found on the event: the outcome's
// verdicts had a belief in version 1 too.
var v2Key = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[^\\])"(resolves_to|partial|in_flight)"\s*:`)
})

// AsVersion returns c as the case format version v records it: for 2
// and 1, a mismatch answered 422; for 1, without what version 2 added. A
// case read from an earlier file compares with a fresh run of its inputs
// once the run is taken as that version.
func AsVersion(c *missions.Case, v int) *missions.Case {
	if v < 1 || v >= 3 {
		return c
	}
	out := *c
	out.Version = v
	out.Events = append([]missions.Event{}, c.Events...)
	for i := range out.Events {
		ev := &out.Events[i]
		if ev.Provider == string(ledger.Mismatch) && ev.Response != nil {
			r := *ev.Response
			r.Code = mismatchCodeV2
			ev.Response = &r
		}
	}
	out.Outcome.Evidence = append([]missions.EvidenceBundle{}, c.Outcome.Evidence...)
	for i := range out.Outcome.Evidence {
		b := &out.Outcome.Evidence[i]
		b.Attempts = append([]missions.EvidenceAttempt{}, b.Attempts...)
		for j := range b.Attempts {
			a := &b.Attempts[j]
			if a.Observed == missions.ObservedMismatch && a.Response != nil {
				r := *a.Response
				r.Code = mismatchCodeV2
				a.Response = &r
				a.Error = fmt.Sprintf("%s (%d)", a.Observed, r.Code)
			}
		}
	}
	if v == 2 {
		return &out
	}
	for i := range out.Events {
		out.Events[i].Belief = ""
	}
	out.Ledger.Objects = append([]ledger.Object{}, c.Ledger.Objects...)
	for i := range out.Ledger.Objects {
		out.Ledger.Objects[i].ResolvesTo = 0
	}
	out.Ledger.Records = append([]ledger.Record{}, c.Ledger.Records...)
	for i := range out.Ledger.Records {
		out.Ledger.Records[i].Partial = false
	}
	out.Ledger.InFlight = nil
	out.Version = 1
	return &out
}

// notACaseButAMission says that a file given as a case is a mission file,
// and how to make a case of it.
func notACaseButAMission(name string, m *missions.Mission) error {
	id := termtext.CleanLine(m.ID)
	run := "replaylab run " + termtext.ShellWord(id)
	if _, err := missions.BuiltIn().Get(m.ID); err != nil {
		run += " --missions " + termtext.ShellWord(termtext.CleanLine(filepath.Dir(name)))
	}
	return fmt.Errorf("%s is a mission file (mission %s), not a case; make a case of it with: %s --json --out CASE.json", name, id, run)
}

// validateCase checks what the JSON decoder cannot: that the inputs can be
// run again.
func validateCase(c *missions.Case) error {
	if c.Mission.ID == "" {
		return errors.New("the case has no mission id")
	}
	if len(c.Mission.Intents) == 0 || len(c.Mission.Schedule) == 0 {
		return fmt.Errorf("mission %s: the case has no intents or no schedule", c.Mission.ID)
	}
	if err := c.Mission.Validate(); err != nil {
		return fmt.Errorf("mission %s: %w", c.Mission.ID, err)
	}
	if err := c.Settings.Validate(); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	return nil
}

// jsonError turns a decoder error into file:line:col: what is wrong.
func jsonError(name string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se) && len(bytes.TrimSpace(data)) == 0:
		return fmt.Errorf("%s: the file is empty (expected a case: a JSON object with \"schema\": %q)", name, SchemaID)
	case errors.As(err, &se) && strings.HasPrefix(se.Error(), "unexpected end of JSON input"):
		return fmt.Errorf("%s: the case ends too early: the file is truncated", name)
	case errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value"):
		line, col := position(data, se.Offset)
		return fmt.Errorf("%s:%d:%d: unexpected data after the case object", name, line, col)
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		return fmt.Errorf("%s:%d:%d: invalid JSON: %v", name, line, col, se)
	case errors.As(err, &te) && te.Field == "":
		return fmt.Errorf("%s: the file holds %s; a case is a JSON object whose first field is \"schema\": %q", name, valueWords(te.Value), SchemaID)
	case errors.As(err, &te):
		line, col := position(data, te.Offset)
		return fmt.Errorf("%s:%d:%d: %s holds %s; expected %s", name, line, col, fieldPath(te.Field), valueWords(te.Value), typeWords(te.Type))
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("%s: the case ends too early: the file is truncated", name)
	}
	return fmt.Errorf("%s: %v", name, err)
}

func position(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	line, col = 1, 1
	for _, b := range data[:offset] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}
