// Package schemawalk holds a document to its JSON Schema in one walk of
// its bytes: the syntax, keys the format does not take or that an object
// holds twice, and the first value that does not fit, each with its
// offset and in words a person reads. It reads the subset of draft
// 2020-12 that this repository's schemas use and refuses to compile any
// other keyword, so nothing in a schema goes unchecked.
//
// It exists for the program's start: a general validator compiles every
// meta-schema when the program starts, which was most of the time
// `replaylab --help` took. Such a validator stays a test-only dependency,
// and the tests hold this walk to it. It imports nothing else of this
// repository but internal/termtext.
package schemawalk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
)

// The case schema (schema.json) is the one description of the case
// format. A case file is held to it by walking the file once beside the
// schema: that walk checks the JSON's syntax, finds keys the format does
// not take or that an object holds twice, and finds the first value that
// does not fit. It reads the subset of JSON Schema draft 2020-12 that
// schema.json uses and refuses to compile any other keyword, so nothing
// in the schema goes unchecked; the tests hold the walk to a full JSON
// Schema validator. A general validator was used
// here before, but it compiles every meta-schema when the program starts,
// which was most of the time `replaylab --help` took.

// JSON value kinds, as bits.
const (
	kNull uint8 = 1 << iota
	kBool
	kObject
	kArray
	kString
	kInteger // a number with a whole value
	kNumber  // any number; a type of "number" takes both bits
)

// snode is one schema, compiled.
type snode struct {
	types     uint8 // 0: any kind
	typeNames []string
	enum      []json.RawMessage
	enumWords []string // the enum as the message lists it
	enumStr   map[string]bool
	cnst      json.RawMessage
	cnstStr   *string // the const, when it is a string
	required  []string
	props     []sprop
	propIdx   map[string]*snode
	closed    bool   // additionalProperties: false
	extra     *snode // additionalProperties as a schema
	names     *snode // propertyNames
	items     *snode
	minItems  int
	min, max  *big.Rat
	// minD and maxD are the bounds as decimals, to compare with.
	minD, maxD *decimal
	pattern    *regexp.Regexp
	oneOf      []*snode
	ifS        *snode
	thenS      *snode
}

type sprop struct {
	name string
	n    *snode
}

// Schema is a compiled schema, for documents called by its noun ("case")
// in messages.
type Schema struct {
	root *snode
	noun string
}

// Compile reads a schema; noun names its documents in messages.
func Compile(data []byte, noun string) (*Schema, error) {
	root, err := compileSchema(data)
	if err != nil {
		return nil, err
	}
	return &Schema{root: root, noun: noun}, nil
}

// compileSchema reads a schema into snodes, resolving each local $ref.
func compileSchema(data []byte) (*snode, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	defs := map[string]*snode{}
	var raw map[string]json.RawMessage
	if d, ok := doc["$defs"]; ok {
		if err := json.Unmarshal(d, &raw); err != nil {
			return nil, fmt.Errorf("$defs: %w", err)
		}
	}
	for name := range raw {
		defs[name] = &snode{}
	}
	for name, r := range raw {
		if err := compileNode(r, defs[name], defs); err != nil {
			return nil, fmt.Errorf("$defs/%s: %w", name, err)
		}
	}
	root := &snode{}
	if err := compileNode(data, root, defs); err != nil {
		return nil, err
	}
	return root, nil
}

func compileNode(data []byte, n *snode, defs map[string]*snode) error {
	fields, err := orderedObject(data)
	if err != nil {
		return err
	}
	sub := func(r json.RawMessage) (*snode, error) { return compileSub(r, defs) }
	n.minItems = -1
	for _, f := range fields {
		k, v := f.key, f.value
		switch k {
		case "$schema", "$id", "$defs", "title", "description":
		case "$ref":
			return errors.New("a $ref may stand beside a description only")
		case "type":
			var names []string
			if err := json.Unmarshal(v, &names); err != nil {
				var one string
				if err := json.Unmarshal(v, &one); err != nil {
					return fmt.Errorf("type: %w", err)
				}
				names = []string{one}
			}
			for _, t := range names {
				bit, ok := kindBits[t]
				if !ok {
					return fmt.Errorf("type %q is not a JSON Schema type", t)
				}
				n.types |= bit
			}
			n.typeNames = names
		case "enum":
			if err := json.Unmarshal(v, &n.enum); err != nil {
				return fmt.Errorf("enum: %w", err)
			}
			n.enumStr = map[string]bool{}
			for _, e := range n.enum {
				var s string
				if json.Unmarshal(e, &s) == nil {
					n.enumStr[s] = true
					n.enumWords = append(n.enumWords, s)
				} else {
					n.enumWords = append(n.enumWords, string(e))
				}
			}
		case "const":
			n.cnst = v
			var cs string
			if json.Unmarshal(v, &cs) == nil {
				n.cnstStr = &cs
			}
		case "required":
			if err := json.Unmarshal(v, &n.required); err != nil {
				return fmt.Errorf("required: %w", err)
			}
		case "properties":
			props, err := orderedObject(v)
			if err != nil {
				return fmt.Errorf("properties: %w", err)
			}
			n.propIdx = map[string]*snode{}
			for _, p := range props {
				c, err := sub(p.value)
				if err != nil {
					return fmt.Errorf("properties/%s: %w", p.key, err)
				}
				n.props = append(n.props, sprop{p.key, c})
				n.propIdx[p.key] = c
			}
		case "additionalProperties":
			if string(v) == "false" {
				n.closed = true
			} else if n.extra, err = sub(v); err != nil {
				return fmt.Errorf("additionalProperties: %w", err)
			}
		case "propertyNames":
			if n.names, err = sub(v); err != nil {
				return fmt.Errorf("propertyNames: %w", err)
			}
		case "items":
			if n.items, err = sub(v); err != nil {
				return fmt.Errorf("items: %w", err)
			}
		case "minItems":
			if err := json.Unmarshal(v, &n.minItems); err != nil {
				return fmt.Errorf("minItems: %w", err)
			}
		case "minimum", "maximum":
			r, ok := new(big.Rat).SetString(string(v))
			if !ok {
				return fmt.Errorf("%s %s is not a number", k, v)
			}
			d := parseDecimal(string(v))
			if k == "minimum" {
				n.min, n.minD = r, &d
			} else {
				n.max, n.maxD = r, &d
			}
		case "pattern":
			var p string
			if err := json.Unmarshal(v, &p); err != nil {
				return err
			}
			if n.pattern, err = regexp.Compile(p); err != nil {
				return err
			}
		case "oneOf":
			var list []json.RawMessage
			if err := json.Unmarshal(v, &list); err != nil {
				return err
			}
			for _, r := range list {
				c, err := sub(r)
				if err != nil {
					return fmt.Errorf("oneOf: %w", err)
				}
				n.oneOf = append(n.oneOf, c)
			}
		case "if":
			if n.ifS, err = sub(v); err != nil {
				return fmt.Errorf("if: %w", err)
			}
		case "then":
			if n.thenS, err = sub(v); err != nil {
				return fmt.Errorf("then: %w", err)
			}
		default:
			return fmt.Errorf("keyword %q is not one this walk checks", k)
		}
	}
	return nil
}

// compileSub compiles a schema inside another: a $ref (beside a
// description at most, as the schema writes them) is the schema it names.
func compileSub(data []byte, defs map[string]*snode) (*snode, error) {
	fields, err := orderedObject(data)
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		if f.key != "$ref" {
			continue
		}
		for _, g := range fields {
			if g.key != "$ref" && g.key != "description" {
				return nil, fmt.Errorf("keyword %q beside $ref is not read", g.key)
			}
		}
		var ref string
		if err := json.Unmarshal(f.value, &ref); err != nil {
			return nil, err
		}
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		if !ok || defs[name] == nil {
			return nil, fmt.Errorf("$ref %q: only #/$defs/NAME is read", ref)
		}
		return defs[name], nil
	}
	n := &snode{}
	return n, compileNode(data, n, defs)
}

var kindBits = map[string]uint8{
	"null": kNull, "boolean": kBool, "object": kObject, "array": kArray,
	"string": kString, "integer": kInteger, "number": kInteger | kNumber,
}

type rawField struct {
	key   string
	value json.RawMessage
}

// orderedObject reads a JSON object's fields in the order written.
func orderedObject(data []byte) ([]rawField, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("a schema is an object, not %s", bytes.TrimSpace(data))
	}
	var out []rawField
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, rawField{t.(string), v})
	}
	return out, nil
}

// Scan is what one walk of a document found.
type Scan struct {
	syntax   bool // the file is not one JSON value; the decoder words why
	topKind  uint8
	top      []member // the top-level object's fields, in file order
	key      keyProblem
	hasKey   bool
	issue    schemaIssue
	hasIssue bool
	noun     string
}

// member is one field of an object: its key and where its value lies.
type member struct {
	key        []byte
	at         int // the key's opening quote
	start, end int // the value
}

// seg is one step of the path to a value: a key, or an index when key
// is empty and idx is not negative.
type seg struct {
	key []byte
	idx int
}

type walker struct {
	data    []byte
	i       int
	silent  int // above zero, inside a oneOf or if: nothing is reported
	bad     bool
	failed  bool // a syntax error: stop
	depth   int  // objects and lists open
	path    []seg
	members []member
	scan    Scan
	noun    string
}

// Scan walks data beside the schema.
func (s *Schema) Scan(data []byte) Scan {
	w := walker{data: data, noun: s.noun}
	w.ws()
	if w.i < len(data) && data[w.i] == '{' {
		w.scan.topKind = kObject
	}
	w.value(s.root, w.i)
	if !w.failed {
		w.ws()
		if w.i != len(data) {
			w.failed = true
		}
	}
	w.scan.syntax = w.failed
	w.scan.noun = s.noun
	return w.scan
}

// Syntax: the data is not one JSON value; the decoder words why.
func (s Scan) Syntax() bool { return s.syntax }

// Object: the data's top value is an object.
func (s Scan) Object() bool { return s.topKind == kObject }

// Top is the top-level object's fields, each key to its value's bytes.
func (s Scan) Top(data []byte) map[string][]byte {
	head := make(map[string][]byte, len(s.top))
	for _, m := range s.top {
		head[string(m.key)] = data[m.start:m.end]
	}
	return head
}

// KeyProblem is the first key the format does not take or that an
// object holds twice: where it starts, and what is wrong.
func (s Scan) KeyProblem() (offset int64, msg string, ok bool) {
	if !s.hasKey {
		return 0, "", false
	}
	return s.key.offset, s.key.message(s.noun), true
}

// Issue is the first value that does not fit: where, and what is wrong.
func (s Scan) Issue() (offset int64, msg string, ok bool) {
	return s.issue.offset, s.issue.msg, s.hasIssue
}

// Fits: the data is one JSON value that fits the schema.
func (s Scan) Fits() bool { return !(s.hasIssue || s.hasKey || s.syntax) }

func (w *walker) ws() {
	for w.i < len(w.data) {
		switch w.data[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// where names the value at the end of the path as a message does.
func (w *walker) where() string {
	if len(w.path) == 0 {
		return "the " + w.noun
	}
	return fmt.Sprintf("field %q", w.place())
}

// place is the path as a key problem words it: "settings", "events[3]".
func (w *walker) place() string {
	if len(w.path) == 0 {
		return "the " + w.noun
	}
	var b strings.Builder
	for i, s := range w.path {
		if s.key == nil && s.idx >= 0 {
			b.WriteString("[" + strconv.Itoa(s.idx) + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.Write(s.key)
	}
	return b.String()
}

// problem notes that the value at at does not fit; msg is built only
// when it will be kept.
func (w *walker) problem(at int, msg func(where string) string) {
	if w.silent > 0 {
		w.bad = true
		return
	}
	is := schemaIssue{offset: int64(at), where: w.where()}
	is.msg = msg(is.where)
	if !w.scan.hasIssue || is.offset < w.scan.issue.offset || (is.offset == w.scan.issue.offset && is.msg < w.scan.issue.msg) {
		w.scan.issue, w.scan.hasIssue = is, true
	}
}

func (w *walker) keyProblem(k keyProblem) {
	if w.silent > 0 || w.scan.hasKey {
		return
	}
	w.scan.key, w.scan.hasKey = k, true
}

// value walks one value against n (nil: anything), at the place at (a
// field's key, an item's start).
func (w *walker) value(n *snode, at int) {
	if w.failed {
		return
	}
	w.ws()
	if w.i >= len(w.data) {
		w.failed = true
		return
	}
	start := w.i
	var kind uint8
	switch c := w.data[w.i]; {
	case c == '{':
		kind = kObject
	case c == '[':
		kind = kArray
	case c == '"':
		kind = kString
	case c == 't' || c == 'f':
		kind = kBool
	case c == 'n':
		kind = kNull
	case c == '-' || (c >= '0' && c <= '9'):
		kind = kNumber
	default:
		w.failed = true
		return
	}
	switch kind {
	case kObject:
		if n != nil && n.types != 0 && n.types&kObject == 0 {
			w.object(nil, start, at)
			w.typeProblem(n, start, at, "object")
			return
		}
		w.object(n, start, at)
		w.checkComposite(n, start, at)
		return
	case kArray:
		if n != nil && n.types != 0 && n.types&kArray == 0 {
			w.array(nil, at)
			w.typeProblem(n, start, at, "array")
			return
		}
		w.array(n, at)
		w.checkComposite(n, start, at)
		return
	case kString:
		s, ok := w.str()
		if !ok || n == nil {
			return
		}
		if n.types != 0 && n.types&kString == 0 {
			w.typeProblem(n, start, at, "string")
			return
		}
		w.checkString(n, s, start, at)
	case kBool, kNull:
		lit := "null"
		if kind == kBool {
			lit = "true"
			if w.data[w.i] == 'f' {
				lit = "false"
			}
		}
		if !bytes.HasPrefix(w.data[w.i:], []byte(lit)) {
			w.failed = true
			return
		}
		w.i += len(lit)
		if n == nil {
			return
		}
		if n.types != 0 && n.types&kind == 0 {
			got := "null"
			if kind == kBool {
				got = "boolean"
			}
			w.typeProblem(n, start, at, got)
			return
		}
		w.checkScalar(n, start, at)
	case kNumber:
		whole, ok := w.number()
		if !ok || n == nil {
			return
		}
		if !whole {
			kind = kNumber
		} else {
			kind = kInteger
		}
		if n.types != 0 && n.types&kind == 0 {
			got := "number"
			if whole {
				got = "integer"
			}
			w.typeProblem(n, start, at, got)
			return
		}
		w.checkScalar(n, start, at)
		if n.min != nil || n.max != nil {
			w.checkRange(n, start, at)
		}
	}
}

func (w *walker) typeProblem(n *snode, start, at int, got string) {
	w.problem(at, func(where string) string {
		want := make([]string, len(n.typeNames))
		for i, t := range n.typeNames {
			want[i] = jsonTypeWords(t)
		}
		return fmt.Sprintf("%s holds %s; expected %s", where, jsonTypeWords(got), strings.Join(want, " or "))
	})
}

// checkComposite checks an object or a list against enum and const.
func (w *walker) checkComposite(n *snode, start, at int) {
	if n == nil || w.failed || (n.enum == nil && n.cnst == nil) {
		return
	}
	w.checkScalar(n, start, at)
}

// checkScalar checks a number, true, false or null against enum and const.
func (w *walker) checkScalar(n *snode, start, at int) {
	raw := w.data[start:w.i]
	if n.enum != nil {
		found := false
		for _, e := range n.enum {
			if jsonEqual(e, raw) {
				found = true
				break
			}
		}
		if !found {
			w.enumProblem(n, raw, "", at)
		}
	}
	if n.cnst != nil && !jsonEqual(n.cnst, raw) {
		w.constProblem(n, raw, at)
	}
}

func (w *walker) checkString(n *snode, s []byte, start, at int) {
	if n.enumStr != nil && !n.enumStr[string(s)] {
		w.enumProblem(n, w.data[start:w.i], string(s), at)
	}
	if n.cnst != nil && (n.cnstStr == nil || *n.cnstStr != string(s)) {
		w.constProblem(n, w.data[start:w.i], at)
	}
	if n.pattern != nil && !matchPattern(n.pattern, s) {
		w.problem(at, func(where string) string {
			if words, ok := patternWords[n.pattern.String()]; ok {
				return fmt.Sprintf("%s holds %q; expected %s", where, s, words)
			}
			return fmt.Sprintf("%s holds %q, which is not of the form %s", where, s, n.pattern)
		})
	}
}

func (w *walker) enumProblem(n *snode, raw []byte, s string, at int) {
	w.problem(at, func(where string) string {
		got := shortRaw(raw)
		accepted := strings.Join(n.enumWords, ", ")
		if s != "" || (len(raw) > 0 && raw[0] == '"') {
			if near := termtext.Closest(s, n.enumWords); near != "" {
				return fmt.Sprintf("%s holds %s; did you mean %s? (accepted: %s)", where, got, near, accepted)
			}
		}
		return fmt.Sprintf("%s holds %s (accepted: %s)", where, got, accepted)
	})
}

func (w *walker) constProblem(n *snode, raw []byte, at int) {
	w.problem(at, func(where string) string {
		return fmt.Sprintf("%s holds %s; expected %s", where, shortRaw(raw), shortRaw(n.cnst))
	})
}

func (w *walker) checkRange(n *snode, start, at int) {
	if v, ok := smallInt(w.data[start:w.i]); ok {
		// Nearly every number in a case: a short whole number, against
		// whole bounds, with nothing to build.
		lo := n.min == nil || (n.min.IsInt() && n.min.Num().IsInt64() && v >= n.min.Num().Int64())
		hi := n.max == nil || (n.max.IsInt() && n.max.Num().IsInt64() && v <= n.max.Num().Int64()) ||
			(n.max.IsInt() && !n.max.Num().IsInt64() && n.max.Sign() > 0)
		if lo && hi {
			return
		}
	}
	raw := string(w.data[start:w.i])
	v := parseDecimal(raw)
	if n.min != nil && v.cmp(*n.minD) < 0 {
		w.problem(at, func(where string) string {
			return fmt.Sprintf("%s holds %s; expected at least %s", where, shortRaw([]byte(raw)), n.min.RatString())
		})
	}
	if n.max != nil && v.cmp(*n.maxD) > 0 {
		w.problem(at, func(where string) string {
			return fmt.Sprintf("%s holds %s; expected at most %s", where, shortRaw([]byte(raw)), n.max.RatString())
		})
	}
}

// smallInt reads a whole number of at most 18 digits written without a
// fraction or an exponent.
func smallInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// matchPattern matches the schema's patterns, the common ones by hand.
func matchPattern(re *regexp.Regexp, s []byte) bool {
	switch re.String() {
	case `^[a-z0-9][a-z0-9-]{0,63}$`:
		if len(s) < 1 || len(s) > 64 || s[0] == '-' {
			return false
		}
		for i := 0; i < len(s); i++ {
			if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
		return true
	case `^(ik|ph)_[0-9a-f]+$`:
		if len(s) < 4 || (string(s[:3]) != "ik_" && string(s[:3]) != "ph_") {
			return false
		}
		return isLowerHex(s[3:])
	case `^[0-9a-f]{16}$`:
		return len(s) == 16 && isLowerHex(s)
	case `^re_[0-9]{4,}$`:
		if len(s) < 7 || string(s[:3]) != "re_" {
			return false
		}
		for i := 3; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return true
	}
	return re.Match(s)
}

func isLowerHex(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// jsonEqual says whether two JSON scalars are the same value.
func jsonEqual(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if composite(a) || composite(b) {
		// The schema's enums and consts are scalars: an object or a list
		// equals one only as the same text, compacted.
		var ca, cb bytes.Buffer
		return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
	}
	if isNumber(a) && isNumber(b) {
		// By value: 2e0 is 2, and -0 is 0.
		return parseDecimal(string(a)).cmp(parseDecimal(string(b))) == 0
	}
	var x, y any
	dx := json.NewDecoder(bytes.NewReader(a))
	dx.UseNumber()
	dy := json.NewDecoder(bytes.NewReader(b))
	dy.UseNumber()
	if dx.Decode(&x) != nil || dy.Decode(&y) != nil {
		return false
	}
	if nx, ok := x.(json.Number); ok {
		ny, ok := y.(json.Number)
		if !ok {
			return false
		}
		rx, ok1 := new(big.Rat).SetString(string(nx))
		ry, ok2 := new(big.Rat).SetString(string(ny))
		return ok1 && ok2 && rx.Cmp(ry) == 0
	}
	return x == y
}

func composite(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

// isNumber says whether b, a JSON scalar, is a number.
func isNumber(b []byte) bool {
	return len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9')
}

// shortRaw renders a JSON value compactly, cut short when long.
func shortRaw(raw []byte) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return string(raw)
	}
	return shortJSON(v)
}

// str reads a string and returns its value; a string without escapes,
// nearly all of them, costs one scan and one copy.
func (w *walker) str() ([]byte, bool) {
	start := w.i
	w.i++
	escaped := false
	for w.i < len(w.data) {
		c := w.data[w.i]
		switch {
		case c == '"':
			w.i++
			if !escaped {
				return w.data[start+1 : w.i-1], true
			}
			var s string
			if err := json.Unmarshal(w.data[start:w.i], &s); err != nil {
				w.failed = true
				return nil, false
			}
			return []byte(s), true
		case c == '\\':
			escaped = true
			if w.i+1 >= len(w.data) {
				w.failed = true
				return nil, false
			}
			switch w.data[w.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				w.i += 2
			case 'u':
				if w.i+6 > len(w.data) || !isHex4(w.data[w.i+2:w.i+6]) {
					w.failed = true
					return nil, false
				}
				w.i += 6
			default:
				w.failed = true
				return nil, false
			}
		case c < 0x20:
			w.failed = true
			return nil, false
		default:
			w.i++
		}
	}
	w.failed = true
	return nil, false
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// number reads a number as JSON writes one and says whether its value is
// whole (1, 10, 1.0 and 1e2 are; JSON Schema's integer is a value, not a
// spelling).
func (w *walker) number() (whole, ok bool) {
	d := w.data
	start := w.i
	if w.i < len(d) && d[w.i] == '-' {
		w.i++
	}
	switch {
	case w.i < len(d) && d[w.i] == '0':
		w.i++
	case w.i < len(d) && d[w.i] >= '1' && d[w.i] <= '9':
		for w.i < len(d) && d[w.i] >= '0' && d[w.i] <= '9' {
			w.i++
		}
	default:
		w.failed = true
		return false, false
	}
	plain := true
	if w.i < len(d) && d[w.i] == '.' {
		plain = false
		w.i++
		if !w.digits() {
			return false, false
		}
	}
	if w.i < len(d) && (d[w.i] == 'e' || d[w.i] == 'E') {
		plain = false
		w.i++
		if w.i < len(d) && (d[w.i] == '+' || d[w.i] == '-') {
			w.i++
		}
		if !w.digits() {
			return false, false
		}
	}
	if plain {
		return true, true
	}
	return parseDecimal(string(d[start:w.i])).whole(), true
}

// maxDepth is how deeply objects and lists may nest: encoding/json's
// bound, past which it calls a file invalid. The walk is recursive, so
// without a bound a hostile file would exhaust the stack.
const maxDepth = 10000

func (w *walker) enter() bool {
	w.depth++
	if w.depth > maxDepth {
		w.failed = true
		return false
	}
	return true
}

func (w *walker) leave() { w.depth-- }

// digits reads one or more digits; none is a syntax error.
func (w *walker) digits() bool {
	n := w.i
	for w.i < len(w.data) && w.data[w.i] >= '0' && w.data[w.i] <= '9' {
		w.i++
	}
	if w.i == n {
		w.failed = true
		return false
	}
	return true
}

// object walks an object: its keys against the format, each value
// against its property's schema, then what the object as a whole needs.
func (w *walker) object(n *snode, start, at int) {
	if !w.enter() {
		return
	}
	defer w.leave()
	w.i++ // {
	base := len(w.members)
	defer func() { w.members = w.members[:base] }()
	keys := objectKeys{n: n, base: base}
	for more := !w.closes('}'); more; more = w.then('}') {
		w.ws()
		if w.i >= len(w.data) || w.data[w.i] != '"' {
			w.failed = true
			return
		}
		keyAt := w.i
		key, ok := w.str()
		if !ok {
			return
		}
		w.ws()
		if w.i >= len(w.data) || w.data[w.i] != ':' {
			w.failed = true
			return
		}
		w.i++
		child := w.key(&keys, key, keyAt, at)
		w.path = append(w.path, seg{key: key, idx: -1})
		w.ws()
		vstart := w.i
		w.value(child, keyAt)
		w.path = w.path[:len(w.path)-1]
		if w.failed {
			return
		}
		w.members = append(w.members, member{key: key, at: keyAt, start: vstart, end: w.i})
	}
	if w.failed {
		return
	}
	if len(w.path) == 0 {
		w.scan.top = slices.Clone(w.members[base:])
	}
	if n == nil {
		return
	}
	if len(keys.unknown) > 0 {
		w.problem(at, func(where string) string {
			return fmt.Sprintf("%s has unknown fields %s", where, quoteAll(keys.unknown))
		})
	}
	w.objectRules(n, w.members[base:], at)
}

// closes is called after an object's or a list's opening: it reads past
// the close that follows at once (an empty one) and says so. The end of
// the data is a syntax error, and closes too.
func (w *walker) closes(close byte) bool {
	w.ws()
	switch {
	case w.i >= len(w.data):
		w.failed = true
		return true
	case w.data[w.i] == close:
		w.i++
		return true
	}
	return false
}

// then is called after a member or an item: it reads the comma before the
// next one (true) or the close (false); anything else is a syntax error.
// A close after a comma is the next value's to refuse.
func (w *walker) then(close byte) bool {
	if w.failed {
		return false
	}
	w.ws()
	switch {
	case w.i >= len(w.data):
	case w.data[w.i] == ',':
		w.i++
		return true
	case w.data[w.i] == close:
		w.i++
		return false
	}
	w.failed = true
	return false
}

// objectKeys is what an object's walk keeps of its keys.
type objectKeys struct {
	n       *snode
	base    int // the object's first member in walker.members
	place   string
	unknown []string
	seen    map[string]bool // once the object has many keys
}

// key checks an object's key: held twice, unknown where the schema names
// every field, or a name the schema's propertyNames refuses. It returns
// the schema of the key's value.
func (w *walker) key(k *objectKeys, key []byte, keyAt, at int) *snode {
	twice := false
	if k.seen != nil {
		twice = k.seen[string(key)]
		k.seen[string(key)] = true
	} else {
		for _, m := range w.members[k.base:] {
			if string(m.key) == string(key) {
				twice = true
				break
			}
		}
		if len(w.members)-k.base >= 32 {
			k.seen = map[string]bool{string(key): true}
			for _, m := range w.members[k.base:] {
				k.seen[string(m.key)] = true
			}
		}
	}
	place := func() string {
		if k.place == "" {
			k.place = w.place()
		}
		return k.place
	}
	if twice {
		w.keyProblem(keyProblem{key: string(key), where: place(), twice: true, offset: int64(keyAt)})
	}
	n := k.n
	if n == nil {
		return nil
	}
	if n.names != nil {
		// As JSON Schema places it: a name that does not fit is a
		// problem of the object that holds it.
		w.checkString(n.names, key, keyAt, at)
	}
	if c, ok := n.propIdx[string(key)]; ok {
		return c
	}
	if !n.closed {
		return n.extra
	}
	accepted := make([]string, len(n.props))
	for i, p := range n.props {
		accepted[i] = p.name
	}
	w.keyProblem(keyProblem{key: string(key), where: place(), accepted: accepted, offset: int64(keyAt)})
	if w.silent > 0 {
		w.bad = true
	} else {
		k.unknown = append(k.unknown, string(key))
	}
	return nil
}

// objectRules checks what a schema asks of an object as a whole: its
// required fields, oneOf and if/then. The fields' own values were walked
// already; a oneOf or if branch walks again only the values it names.
func (w *walker) objectRules(n *snode, ms []member, at int) {
	if len(n.required) > 0 {
		var missing []string
		for _, r := range n.required {
			if !hasMember(ms, r) {
				missing = append(missing, r)
			}
		}
		if len(missing) > 0 {
			w.problem(at, func(where string) string {
				return fmt.Sprintf("%s has no %s (a %s writes every field out)", where, quoteAll(missing), w.noun)
			})
		}
	}
	if len(n.oneOf) > 0 {
		valid := 0
		for _, b := range n.oneOf {
			if w.branchFits(b, ms) {
				valid++
			}
		}
		if valid != 1 {
			w.problem(at, func(where string) string {
				return where + " does not do exactly one thing (a step is an attempt with its fixture, a wait, a read, a restart or a together)"
			})
		}
	}
	if n.ifS != nil && w.branchFits(n.ifS, ms) && n.thenS != nil {
		w.objectRules(n.thenS, ms, at)
	}
}

// branchFits says, reporting nothing, whether an object whose fields are
// ms fits a branch schema.
func (w *walker) branchFits(b *snode, ms []member) bool {
	if b.types != 0 && b.types&kObject == 0 {
		return false
	}
	for _, r := range b.required {
		if !hasMember(ms, r) {
			return false
		}
	}
	saved, bad := w.i, w.bad
	w.silent++
	w.bad = false
	for _, m := range ms {
		c, ok := b.propIdx[string(m.key)]
		switch {
		case ok:
		case b.closed:
			w.bad = true
		default:
			c = b.extra
		}
		if c != nil && !w.bad {
			w.i = m.start
			w.value(c, m.at)
		}
	}
	if !w.bad && (len(b.oneOf) > 0 || b.ifS != nil) {
		w.objectRules(b, ms, 0)
	}
	fits := !w.bad
	w.silent--
	w.i, w.bad = saved, bad
	return fits
}

func hasMember(ms []member, key string) bool {
	for _, m := range ms {
		if string(m.key) == key {
			return true
		}
	}
	return false
}

func (w *walker) array(n *snode, at int) {
	if !w.enter() {
		return
	}
	defer w.leave()
	w.i++ // [
	var items *snode
	if n != nil {
		items = n.items
	}
	count := 0
	for more := !w.closes(']'); more; more = w.then(']') {
		w.ws()
		w.path = append(w.path, seg{idx: count})
		w.value(items, w.i)
		w.path = w.path[:len(w.path)-1]
		count++
	}
	if w.failed {
		return
	}
	if n != nil && n.minItems >= 0 && count < n.minItems {
		w.problem(at, func(where string) string {
			return fmt.Sprintf("%s holds %s; it needs at least %d", where, termtext.Plural(count, "item"), n.minItems)
		})
	}
}
