package export

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzFastLine: whatever line the fast decoder takes, the full decoder
// takes too and reads the same; the fast one never decides a line the
// full one would refuse.
func FuzzFastLine(f *testing.F) {
	for _, s := range []string{
		`{"type":"attempt","intent":"i","key":"k","outcome":"ok"}`,
		`{ "type" : "record" , "intent":"i","object":"re_1","status":"succeeded","start":"2026-12-01T10:00:00Z" }`,
		`{"type":"attempt","intent":"i","intent":"j","outcome":"ok"}`,
		`{"type":"attempt","intent":"\u0069","outcome":"ok"}`,
		`{"type":"attempt","intent":"i","outcome":"ok"} x`,
		`{"TYPE":"attempt"}`,
		`{"type":"read","intent":"i","object":"","status":"pending"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		raw := []byte(line)
		if len(raw) == 0 || raw[0] != '{' || !utf8.Valid(raw) {
			return // the reader refuses these before either decoder
		}
		var fast HistoryLine
		if !fastLine(raw, &fast) {
			return
		}
		keys, nulls, err := topKeys(raw)
		if err != nil || len(nulls) > 0 {
			t.Fatalf("fast took %q; the full reader finds keys %v, nulls %v, %v", line, keys, nulls, err)
		}
		seen := map[string]bool{}
		for _, k := range keys {
			if seen[k] {
				t.Fatalf("fast took %q with %q twice", line, k)
			}
			seen[k] = true
		}
		var full HistoryLine
		if err := json.Unmarshal(raw, &full); err != nil {
			t.Fatalf("fast took %q; encoding/json refuses it: %v", line, err)
		}
		if fast != full {
			t.Fatalf("fast read %q as %+v; encoding/json as %+v", line, fast, full)
		}
	})
}

// TestHistoryRefusesWhatIsNoText: a line whose intent or key holds an
// escape that is no character is refused, even when a real U+FFFD stands
// elsewhere on the line (which once let it through), and so is one with
// bytes that are not UTF-8.
func TestHistoryRefusesWhatIsNoText(t *testing.T) {
	for _, line := range []string{
		`{"type":"attempt","intent":"x\ud800","key":"k","note":"\ufffd"}`,
		`{"type":"attempt","intent":"x","key":"k\udfff","note":"` + "\uFFFD" + `"}`,
		"{\"type\":\"attempt\",\"intent\":\"x\xff\",\"key\":\"k\"}",
	} {
		var l HistoryLine
		_, err := decodeHistoryLine([]byte(line), &l, false)
		if err == nil || !(strings.Contains(err.Error(), "half of a surrogate pair") || strings.Contains(err.Error(), "not UTF-8")) {
			t.Errorf("%q: %v", line, err)
		}
	}
}
