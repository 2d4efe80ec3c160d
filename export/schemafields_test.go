package export

import (
	"encoding"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSchemaHasTheCaseFields: a case is decoded without the decoder's
// check for unknown fields, because the schema walk refuses any key the
// schema lacks. That holds only if every closed object of the schema has
// exactly the fields of the Go type it decodes into; this walks the two
// side by side.
func TestSchemaHasTheCaseFields(t *testing.T) {
	root, err := compiledCaseSchema()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
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
		if n == nil || seen[pair{n, typ}] || reflect.PointerTo(typ).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
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
				t.Errorf("%s: the schema takes fields it does not name, which the decoder would drop", where)
			}
			slices.Sort(names)
			slices.Sort(props)
			if !slices.Equal(names, props) {
				t.Errorf("%s: the Go type has fields %v, the schema %v", where, names, props)
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
	walk(root, reflect.TypeFor[document](), "case")
	if checked < 15 {
		t.Fatalf("only %d objects compared; the walk lost its way", checked)
	}
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
