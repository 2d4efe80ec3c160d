package export

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// invalidUTF8 returns the offset of the first byte that is not part of
// valid UTF-8, or -1.
func invalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// fieldPath words the field path of a decoding error ("Case.events.tick")
// the way the file spells it: "field events.tick".
func fieldPath(field string) string {
	field = strings.TrimPrefix(field, "Case.")
	if field == "" || field == "Case" {
		return "the case"
	}
	return fmt.Sprintf("field %q", field)
}

// valueWords words the JSON value a decoding error found: "a string",
// "the number -1".
func valueWords(v string) string {
	switch v {
	case "string":
		return "a string"
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "bool":
		return "true or false"
	case "number":
		return "a number"
	}
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return "the number " + n
	}
	return v
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// typeWords says what JSON value a Go type accepts, in words.
func typeWords(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		return "a string"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeWords(t.Elem())
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("a whole number from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return "another kind of value"
}

// keyProblem is an object key the case format does not take, and where
// it is: one the format does not have (or has only in other letter case:
// the JSON decoder would take "Seed" for "seed"), or one an object holds
// twice (the decoder would keep the last and say nothing).
type keyProblem struct {
	key      string
	where    string   // e.g. "settings", "events[3]"
	accepted []string // the keys accepted there; none for a key twice
	twice    bool
	offset   int64 // where the key starts in the file
}

func (k keyProblem) message() string {
	if k.twice {
		return fmt.Sprintf("field %q appears twice in %s (a case holds each field once)", k.key, k.where)
	}
	return fmt.Sprintf("unknown field %q in %s (accepted: %s)", k.key, k.where, strings.Join(k.accepted, ", "))
}

// findKeyProblem walks a case file beside the case type and returns the
// first key problem in the file. The JSON decoder reports an unknown
// field without saying where it is, and takes a field in any letter case
// or twice without a word; this says where, and what is accepted there.
func findKeyProblem(data []byte) (keyProblem, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	w := fieldWalker{dec: dec, data: data}
	w.value(reflect.TypeFor[document](), "")
	return w.found, w.ok
}

type fieldWalker struct {
	dec   *json.Decoder
	data  []byte
	found keyProblem
	ok    bool
	err   bool
}

// value reads one JSON value that should fit type t. It stops at the first
// key problem or at anything it cannot read.
func (w *fieldWalker) value(t reflect.Type, where string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := w.dec.Token()
	if err != nil {
		w.err = true
		return
	}
	d, isDelim := tok.(json.Delim)
	if !isDelim {
		return
	}
	custom := reflect.PointerTo(t).Implements(textUnmarshaler)
	switch d {
	case '{':
		var fields []jsonField
		if t.Kind() == reflect.Struct && !custom {
			fields = structFields(t)
		}
		place := where
		if place == "" {
			place = "the case"
		}
		seen := map[string]bool{}
		for w.dec.More() && !w.ok && !w.err {
			tok, err := w.dec.Token()
			if err != nil {
				w.err = true
				return
			}
			key, _ := tok.(string)
			end := w.dec.InputOffset()
			if seen[key] {
				w.found = keyProblem{key: key, where: place, twice: true, offset: keyStart(w.data, end, key)}
				w.ok = true
				return
			}
			seen[key] = true
			var next reflect.Type = reflect.TypeFor[any]()
			switch {
			case t.Kind() == reflect.Map && !custom:
				next = t.Elem()
			case t.Kind() == reflect.Struct && !custom:
				f, ok := lookupField(fields, key)
				if !ok {
					w.found = keyProblem{key: key, where: place, accepted: fieldNames(fields), offset: keyStart(w.data, end, key)}
					w.ok = true
					return
				}
				next = f.typ
			}
			child := key
			if where != "" {
				child = where + "." + key
			}
			w.value(next, child)
		}
		if !w.ok && !w.err {
			if _, err := w.dec.Token(); err != nil {
				w.err = true
			}
		}
	case '[':
		var elem reflect.Type = reflect.TypeFor[any]()
		if (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && !custom {
			elem = t.Elem()
		}
		for i := 0; w.dec.More() && !w.ok && !w.err; i++ {
			w.value(elem, where+"["+strconv.Itoa(i)+"]")
		}
		if !w.ok && !w.err {
			if _, err := w.dec.Token(); err != nil {
				w.err = true
			}
		}
	}
}

// jsonField is one field of a struct as JSON sees it.
type jsonField struct {
	name string
	typ  reflect.Type
}

// structFields lists the JSON fields of a struct type in declaration
// order, with the fields of embedded structs in place.
func structFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, structFields(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name: name, typ: ft})
	}
	return out
}

// lookupField finds a key as the case format spells it: exactly.
func lookupField(fields []jsonField, key string) (jsonField, bool) {
	for _, f := range fields {
		if f.name == key {
			return f, true
		}
	}
	return jsonField{}, false
}

func fieldNames(fields []jsonField) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.name
	}
	return out
}

// keyStart finds where a key that ends at end begins: its opening quote.
func keyStart(data []byte, end int64, key string) int64 {
	quoted, err := json.Marshal(key)
	if err == nil {
		if i := bytes.LastIndex(data[:min(end, int64(len(data)))], quoted); i >= 0 {
			return int64(i)
		}
	}
	return end
}
