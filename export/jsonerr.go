package export

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
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
