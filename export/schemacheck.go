package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/replaylab/replaylab/missions"
)

// caseSchema is Schema compiled, once.
var caseSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		return nil, err
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	if err := comp.AddResource("schema.json", doc); err != nil {
		return nil, err
	}
	return comp.Compile("schema.json")
})

// schemaIssue is the first place in a case file where it does not fit
// the case schema.
type schemaIssue struct {
	offset int64
	where  string // the value's name as the file spells it
	msg    string // what is wrong there, starting with where
}

// schemaProblem checks a case file that decodes against the case schema
// and words the first problem in the file: a null, a missing field, a
// word the format does not have ("kind": "bogus"), a number out of range.
// The decoder takes a null or a missing field as a zero and any string
// where a word is expected, so without this such a file read as a case.
func schemaProblem(name string, data []byte) error {
	p, ok, err := schemaCheck(data)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if !ok {
		return nil
	}
	line, col := position(data, p.offset)
	return fmt.Errorf("%s:%d:%d: %s", name, line, col, p.msg)
}

// schemaCheck finds the first schema problem in data, if any.
func schemaCheck(data []byte) (schemaIssue, bool, error) {
	sch, err := caseSchema()
	if err != nil {
		return schemaIssue{}, false, fmt.Errorf("the case schema built into this program does not compile: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return schemaIssue{}, false, err
	}
	var ve *jsonschema.ValidationError
	if err := sch.Validate(inst); err == nil || !errors.As(err, &ve) {
		return schemaIssue{}, false, err
	}
	var issues []schemaIssue
	for _, leaf := range schemaLeaves(ve) {
		at, where := locate(data, leaf.InstanceLocation)
		issues = append(issues, schemaIssue{at, where, schemaWords(leaf.ErrorKind, where)})
	}
	// The validator walks objects in no fixed order: the problem reported
	// is the first in the file, so the same file gives the same message.
	sort.Slice(issues, func(i, j int) bool {
		if issues[i].offset != issues[j].offset {
			return issues[i].offset < issues[j].offset
		}
		return issues[i].msg < issues[j].msg
	})
	return issues[0], true, nil
}

// schemaLeaves are the errors that say what is wrong, not where the
// validator was: the ends of the tree, except that a failed oneOf (a
// schedule step that does not do exactly one thing) is one problem, not
// one per thing it could have done.
func schemaLeaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if _, ok := e.ErrorKind.(*kind.OneOf); ok || len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, schemaLeaves(c)...)
	}
	return out
}

// schemaWords says what a schema error means for the value at where.
func schemaWords(k jsonschema.ErrorKind, where string) string {
	switch k := k.(type) {
	case *kind.Type:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = jsonTypeWords(w)
		}
		return fmt.Sprintf("%s holds %s; expected %s", where, jsonTypeWords(k.Got), strings.Join(want, " or "))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprint(w)
		}
		if got, ok := k.Got.(string); ok {
			if near := missions.Closest(got, want); near != "" {
				return fmt.Sprintf("%s holds %s; did you mean %s? (accepted: %s)", where, shortJSON(k.Got), near, strings.Join(want, ", "))
			}
		}
		return fmt.Sprintf("%s holds %s (accepted: %s)", where, shortJSON(k.Got), strings.Join(want, ", "))
	case *kind.Const:
		return fmt.Sprintf("%s holds %s; expected %s", where, shortJSON(k.Got), shortJSON(k.Want))
	case *kind.Required:
		return fmt.Sprintf("%s has no %s (a case writes every field out)", where, quoteAll(k.Missing))
	case *kind.AdditionalProperties:
		return fmt.Sprintf("%s has unknown fields %s", where, quoteAll(k.Properties))
	case *kind.Minimum:
		return fmt.Sprintf("%s holds %s; expected at least %s", where, k.Got.RatString(), k.Want.RatString())
	case *kind.Maximum:
		return fmt.Sprintf("%s holds %s; expected at most %s", where, k.Got.RatString(), k.Want.RatString())
	case *kind.Pattern:
		if words, ok := patternWords[k.Want]; ok {
			return fmt.Sprintf("%s holds %q; expected %s", where, k.Got, words)
		}
		return fmt.Sprintf("%s holds %q, which is not of the form %s", where, k.Got, k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("%s holds %s; it needs at least %d", where, Plural(k.Got, "item"), k.Want)
	case *kind.OneOf:
		return where + " does not do exactly one thing (a step is an attempt with its fixture, a wait, a read, a restart or a together)"
	}
	return fmt.Sprintf("%s does not fit the case format (%s)", where, strings.Join(k.KeywordPath(), "/"))
}

// patternWords says in words what the schema's patterns accept.
var patternWords = map[string]string{
	`^[a-z0-9][a-z0-9-]{0,63}$`: "lowercase letters, digits and dashes, starting with a letter or digit, at most 64",
	`^re_[0-9]{4,}$`:            "re_ followed by digits, e.g. re_0001",
	`^(ik|ph)_[0-9a-f]+$`:       "ik_ or ph_ followed by hexadecimal digits, e.g. ik_496bcda83e",
	`^[0-9a-f]{16}$`:            "16 hexadecimal digits",
}

func jsonTypeWords(t string) string {
	switch t {
	case "integer":
		return "a whole number"
	case "number":
		return "a number"
	case "string":
		return "a string"
	case "boolean":
		return "true or false"
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	return t
}

func quoteAll(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strconv.Quote(w)
	}
	return strings.Join(q, ", ")
}

// shortJSON renders a value as JSON, cut short when long.
func shortJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		return string(b[:57]) + "…"
	}
	return string(b)
}

// locate finds the value at a JSON pointer's tokens in a file that is
// valid JSON: the offset of its key (or of the value, for a list item or
// the whole file) and its name as the file spells it ("field
// \"events[3].seq\""). A token it cannot follow leaves it at the last
// value it found.
func locate(data []byte, loc []string) (int64, string) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	at := skipSpace(data, 0)
	path := ""
	for _, tok := range loc {
		t, err := dec.Token()
		if err != nil {
			break
		}
		d, _ := t.(json.Delim)
		found := false
		switch d {
		case '{':
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					break
				}
				key, _ := kt.(string)
				if key == tok {
					at = keyStart(data, dec.InputOffset(), key)
					if path != "" {
						path += "."
					}
					path += key
					found = true
					break
				}
				if skipJSONValue(dec) != nil {
					break
				}
			}
		case '[':
			n, err := strconv.Atoi(tok)
			if err != nil {
				break
			}
			for i := 0; dec.More(); i++ {
				if i == n {
					at = skipSpace(data, dec.InputOffset())
					path += "[" + tok + "]"
					found = true
					break
				}
				if skipJSONValue(dec) != nil {
					break
				}
			}
		}
		if !found {
			break
		}
	}
	if path == "" {
		return at, "the case"
	}
	return at, fmt.Sprintf("field %q", path)
}

// skipJSONValue reads past one value.
func skipJSONValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// skipSpace moves past the white space, commas and colons at offset, to
// where the next value starts.
func skipSpace(data []byte, offset int64) int64 {
	for offset < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[offset]) >= 0 {
		offset++
	}
	return offset
}
