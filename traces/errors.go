package traces

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/replaylab/replaylab/internal/jsontext"
)

// shape says what is wrong with a line as bytes, before it is decoded,
// or "": it is UTF-8, with no escape that names no character, and one
// TracesData object, {"resourceSpans": [...]}, with nothing after it. A
// decoder would take a lone surrogate for U+FFFD (two ids that differ
// there would read as one), ignore what follows the object, and read
// an object of no spans as an empty batch.
func shape(line []byte) string {
	if at, what := jsontext.Problem(line); at >= 0 {
		if !utf8.Valid(line) {
			return fmt.Sprintf("the line is not UTF-8 (byte %d); OTLP/JSON is UTF-8", at+1)
		}
		return "the line holds " + what
	}
	end := jsontext.ObjectEnd(line)
	switch {
	case len(line) == 0 || line[0] != '{':
		return `expected one TracesData object on each line, {"resourceSpans": [...]}, as the OpenTelemetry file exporter writes them`
	case end < 0:
		return `the line ends inside its JSON object (cut short?); each line holds one whole TracesData object, {"resourceSpans": [...]}`
	case end != len(line):
		return fmt.Sprintf("more follows the TracesData object on the line (at byte %d); the file holds one TracesData per line", end+1)
	}
	rest := bytes.TrimLeft(line[1:], " \t\r\n")
	if !bytes.HasPrefix(rest, []byte(`"resourceSpans"`)) {
		return `the object is not a TracesData: it has no "resourceSpans" (first); expected {"resourceSpans": [...]} on each line`
	}
	return ""
}

// timeKey ends every key of a time in nanoseconds in a span or event.
var timeKey = []byte(`UnixNano"`)

// numberTime finds a time written as a JSON number, which OTLP/JSON
// writes as a decimal string: a nanosecond time of this century is above
// 2^53, where most JSON writers lose its last digits. It returns the
// field's path and what is wrong, or "" when every time is a string. It
// looks at bytes only, so that the lines that are right cost a scan.
func numberTime(line []byte) (field, msg string) {
	rest := line
	for {
		i := bytes.Index(rest, timeKey)
		if i < 0 {
			return "", ""
		}
		rest = rest[i+len(timeKey):]
		j := 0
		for j < len(rest) && (rest[j] == ' ' || rest[j] == '\t' || rest[j] == ':') {
			j++
		}
		if j < len(rest) && (rest[j] == '-' || rest[j] >= '0' && rest[j] <= '9') {
			break
		}
	}
	if f, err := walk(line); err != nil {
		return cmp.Or(f, "a time"), err.Error()
	}
	return "a time", "a time in nanoseconds is given as a JSON number; OTLP/JSON writes it as a decimal string"
}

// lineError names what pdata could not decode: the field, found by
// walking the line, and pdata's own words otherwise.
func lineError(name string, line int, raw []byte, derr error) error {
	if f, err := walk(raw); f != "" || err != nil {
		return &Error{Name: name, Line: line, Field: f, Err: err}
	}
	msg := derr.Error()
	if i := strings.Index(msg, ", error found in"); i > 0 {
		msg = msg[:i]
	}
	return &Error{Name: name, Line: line, Err: fmt.Errorf("not OTLP/JSON TracesData: %s", msg)}
}

// walk reads a line token by token, keeping the path, and returns the
// first field that is not as OTLP/JSON writes it: an id that is not hex
// of its length, a time that is not a decimal string, or JSON that does
// not parse. It is the slow path, taken only for a line already found
// wrong.
func walk(line []byte) (string, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	w := &walker{d: d}
	err := w.value()
	if err == nil {
		if _, terr := d.Token(); terr != io.EOF {
			return "", errors.New("more follows the TracesData object on one line; the file holds one per line")
		}
		return "", nil
	}
	var se *json.SyntaxError
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return w.at(), errors.New("the line ends inside its JSON object (cut short?)")
	}
	if errors.As(err, &se) {
		return w.at(), fmt.Errorf("not JSON at byte %d: %v", d.InputOffset(), err)
	}
	return w.at(), err
}

type walker struct {
	d    *json.Decoder
	path []string
}

func (w *walker) at() string {
	var b strings.Builder
	for i, p := range w.path {
		if i > 0 && (p == "" || p[0] != '[') {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// idLen is the hex length of each id field.
var idLen = map[string]int{"traceId": 32, "spanId": 16, "parentSpanId": 16}

func (w *walker) value() error {
	t, err := w.d.Token()
	if err != nil {
		return err
	}
	key := ""
	if n := len(w.path); n > 0 {
		key = w.path[n-1]
	}
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '{':
			for w.d.More() {
				kt, err := w.d.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				w.path = append(w.path, k)
				if err := w.value(); err != nil {
					return err
				}
				w.path = w.path[:len(w.path)-1]
			}
		case '[':
			for i := 0; w.d.More(); i++ {
				w.path = append(w.path, "["+strconv.Itoa(i)+"]")
				if err := w.value(); err != nil {
					return err
				}
				w.path = w.path[:len(w.path)-1]
			}
		}
		_, err := w.d.Token()
		return err
	case string:
		if n, ok := idLen[key]; ok && !(key == "parentSpanId" && v == "") {
			if _, herr := hex.DecodeString(v); herr != nil || len(v) != n {
				return fmt.Errorf("%q is not an id: OTLP/JSON writes it as %d hex digits", v, n)
			}
		}
		if strings.HasSuffix(key, "UnixNano") {
			if _, perr := strconv.ParseUint(v, 10, 64); perr != nil {
				return fmt.Errorf("%q is not a time: give nanoseconds since 1970 as a decimal string", v)
			}
		}
	case json.Number:
		if strings.HasSuffix(key, "UnixNano") {
			return fmt.Errorf("%s is a JSON number: OTLP/JSON writes a time in nanoseconds as a decimal string (\"%s\"), since a time of this century is larger than most JSON writers hold exactly", v, v)
		}
		if _, ok := idLen[key]; ok {
			return fmt.Errorf("%s is a number: OTLP/JSON writes an id as hex digits in a string", v)
		}
	}
	return nil
}
