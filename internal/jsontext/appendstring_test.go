package jsontext

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// AppendString writes every string as encoding/json does: printable
// text, the HTML characters, quotes, control bytes, U+2028/2029 and
// invalid UTF-8, and random bytes.
func TestAppendStringIsMarshal(t *testing.T) {
	cases := []string{"", "plain", "a<b>&c", "q\"b\\s", "\n\r\t\b\f\x00\x1f\x7f", "\u2028\u2029", "é漢字😀", "\xff\xfe", "\xed\xa0\x80", "\xe2\x80"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: %s, json.Marshal %s", s, got, want)
		}
	}
}
