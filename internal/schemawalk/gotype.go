package schemawalk

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// MatchType walks the schema beside the Go type a document decodes into
// and says where they part: a closed object of the schema must name
// exactly the JSON fields of its struct, so that a decoder that does not
// check for unknown fields drops nothing the walk let through. checked
// is how many objects were compared.
func (s *Schema) MatchType(typ reflect.Type, name string) (problems []string, checked int) {

	type pair struct {
		n   *snode
		typ reflect.Type
	}
	seen := map[pair]bool{}
	var walk func(n *snode, typ reflect.Type, where string)
	walk = func(n *snode, typ reflect.Type, where string) {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		// A type that reads itself (from text, or from JSON, strictly)
		// is held to its own reader, not to its fields.
		if n == nil || seen[pair{n, typ}] || reflect.PointerTo(typ).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) ||
			reflect.PointerTo(typ).Implements(reflect.TypeFor[json.Unmarshaler]()) {
			return
		}
		seen[pair{n, typ}] = true
		switch typ.Kind() {
		case reflect.Struct:
			fields := jsonFieldsOf(typ)
			var names []string
			for _, f := range fields {
				names = append(names, f.name)
			}
			var props []string
			for _, p := range n.props {
				props = append(props, p.name)
			}
			if !n.closed {
				problems = append(problems, fmt.Sprintf("%s: the schema takes fields it does not name, which the decoder would drop", where))
			}
			slices.Sort(names)
			slices.Sort(props)
			if !slices.Equal(names, props) {
				problems = append(problems, fmt.Sprintf("%s: the Go type has fields %v, the schema %v", where, names, props))
			}
			checked++
			for _, f := range fields {
				walk(n.propIdx[f.name], f.typ, where+"."+f.name)
			}
		case reflect.Slice, reflect.Array:
			walk(n.items, typ.Elem(), where+"[]")
		case reflect.Map:
			walk(n.extra, typ.Elem(), where+"{}")
		}
	}
	walk(s.root, typ, name)
	return problems, checked
}

type goField struct {
	name string
	typ  reflect.Type
}

// jsonFieldsOf lists a struct's JSON fields, embedded structs' in place.
func jsonFieldsOf(t reflect.Type) []goField {
	var out []goField
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
				out = append(out, jsonFieldsOf(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, goField{name, ft})
	}
	return out
}
