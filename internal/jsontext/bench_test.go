package jsontext

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

var line = bytes.Repeat([]byte(`{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","name":"execute_tool create_refund","attributes":[{"key":"gen_ai.tool.call.arguments","value":{"stringValue":"{\"intent\":\"refund-1\",\"amount\":4500}"}}]},`), 100)
var obj = append(append([]byte(`{"resourceSpans":[`), line[:len(line)-1]...), ']', '}')

func BenchmarkObjectEnd(b *testing.B) {
	b.SetBytes(int64(len(obj)))
	for b.Loop() {
		ObjectEnd(obj)
	}
}
func BenchmarkLoneSurrogate(b *testing.B) {
	b.SetBytes(int64(len(obj)))
	for b.Loop() {
		LoneSurrogate(obj)
	}
}
func BenchmarkValid(b *testing.B) {
	b.SetBytes(int64(len(obj)))
	for b.Loop() {
		utf8.Valid(obj)
	}
}
