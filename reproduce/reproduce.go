package reproduce

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// Case runs a case's mission again under its settings and returns
// the first difference between the case and the run, in words, or "" when
// they are the same. A case of an earlier format is compared with the run
// as that format records it.
func Case(c *missions.Case) (string, error) {
	again, err := missions.Run(&c.Mission, c.Settings)
	if err != nil {
		return "", err
	}
	again = export.AsVersion(again, c.Version)
	want, err := export.Marshal(c)
	if err != nil {
		return "", err
	}
	got, err := export.Marshal(again)
	if err != nil {
		return "", err
	}
	if bytes.Equal(want, got) {
		return "", nil
	}
	return FirstDifference(c, want, got), nil
}

// DiffJSON names the first place two JSON documents differ, in reading
// order, as a dotted path with what each holds there; ok is false when
// only their bytes differ.
func DiffJSON(want, got []byte) (where, said, gives string, ok bool, err error) {
	var a, b any
	if err := decodeNumbers(want, &a); err != nil {
		return "", "", "", false, err
	}
	if err := decodeNumbers(got, &b); err != nil {
		return "", "", "", false, err
	}
	path, av, bv, ok := diffValues(nil, a, b)
	return strings.Join(path, "."), show(av), show(bv), ok, nil
}

// BuiltInClaim says, when m has a built-in mission's id but not its
// content (a file edited after export, still passing as the catalog's),
// where it first differs; "" when m is the built-in one or no built-in
// has its id.
func BuiltInClaim(m *missions.Mission) string {
	if m.Edited != nil {
		// An edit in the lab changed only the steps it names: undone,
		// the mission is the one it came from.
		b, err := missions.BuiltIn().Get(m.Edited.From)
		if err != nil {
			return ""
		}
		if u := m.Unedited(b); u.Digest() != b.Digest() {
			want, _ := json.Marshal(b)
			got, _ := json.Marshal(u)
			where, bv, gv, _, _ := DiffJSON(want, got)
			return fmt.Sprintf("the case's mission says it was edited from the built-in mission %s, but differs from it beyond the steps its edit names: at mission.%s the catalog has %s, the file %s",
				termtext.CleanLine(b.ID), where, bv, gv)
		}
		return ""
	}
	b, err := missions.BuiltIn().Get(m.ID)
	if err != nil || b.Digest() == m.Digest() {
		return ""
	}
	want, _ := json.Marshal(b)
	got, _ := json.Marshal(m)
	where, bv, gv, _, err := DiffJSON(want, got)
	if err != nil {
		return "the case names the built-in mission " + termtext.CleanLine(m.ID) + " but carries a different one"
	}
	return fmt.Sprintf("the case names the built-in mission %s but carries a different one: at mission.%s the catalog has %s, the file %s",
		termtext.CleanLine(m.ID), where, bv, gv)
}

// FirstDifference says where two renderings of a case first differ, in
// words: which event or which part of the ledger or outcome, which field,
// what the file says and what the replay gives.
func FirstDifference(c *missions.Case, want, got []byte) string {
	return difference(want, got, "case", func(path []string) string { return describePath(c, path) })
}

// difference is the one wording of a replay's first difference from its
// file: "where: the case file says X; the replay gives Y", or "" when
// the bytes are the same.
func difference(want, got []byte, noun string, where func(path []string) string) string {
	if bytes.Equal(want, got) {
		return ""
	}
	var a, b any
	if err := decodeNumbers(want, &a); err != nil {
		return err.Error()
	}
	if err := decodeNumbers(got, &b); err != nil {
		return err.Error()
	}
	path, av, bv, ok := diffValues(nil, a, b)
	if !ok {
		return "the bytes differ, but not the values"
	}
	return fmt.Sprintf("%s: the %s file says %s; the replay gives %s", where(path), noun, show(av), show(bv))
}

// decodeNumbers decodes JSON keeping numbers as written and each object's
// keys in the order the file has them (see ordered).
func decodeNumbers(data []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	x, err := decodeOrdered(dec)
	if err != nil {
		return err
	}
	*v = x
	return nil
}

// ordered is a JSON object with its keys in the order they were written,
// so that the first difference is the first one a reader meets.
type ordered struct {
	keys []string
	vals map[string]any
}

// MarshalJSON writes the object with its keys in their order.
func (o *ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// decodeOrdered reads one JSON value: objects as *ordered, arrays as
// []any, numbers as json.Number.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &ordered{vals: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			if _, dup := o.vals[k]; !dup {
				o.keys = append(o.keys, k)
			}
			o.vals[k] = v
		}
		_, err := dec.Token() // the closing brace
		return o, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token() // the closing bracket
		return list, err
	}
	return tok, nil
}

// missing marks a value that one side lacks.
type missing struct{}

// diffValues walks two decoded JSON values and returns the path of the
// first difference, in the order the file has its fields: the schema, the
// mission, the settings, the events (each field in its order), the ledger,
// then the outcome.
func diffValues(path []string, a, b any) ([]string, any, any, bool) {
	switch x := a.(type) {
	case *ordered:
		y, ok := b.(*ordered)
		if !ok {
			return path, a, b, true
		}
		keys := append([]string(nil), x.keys...)
		for _, k := range y.keys {
			if _, ok := x.vals[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			av, aok := x.vals[k]
			bv, bok := y.vals[k]
			if !aok {
				return append(path, k), missing{}, bv, true
			}
			if !bok {
				return append(path, k), av, missing{}, true
			}
			if p, da, db, ok := diffValues(append(path, k), av, bv); ok {
				return p, da, db, true
			}
		}
		return nil, nil, nil, false
	case []any:
		y, ok := b.([]any)
		if !ok {
			return path, a, b, true
		}
		for i := 0; i < min(len(x), len(y)); i++ {
			if p, da, db, ok := diffValues(append(path, strconv.Itoa(i)), x[i], y[i]); ok {
				return p, da, db, true
			}
		}
		if len(x) != len(y) {
			return append(path, "#"), len(x), len(y), true
		}
		return nil, nil, nil, false
	}
	if fmt.Sprint(a) != fmt.Sprint(b) || fmt.Sprintf("%T", a) != fmt.Sprintf("%T", b) {
		return path, a, b, true
	}
	return nil, nil, nil, false
}

// casePartNames names a case's top-level parts, for a difference in a
// whole part (one side has none, or null).
var casePartNames = map[string]string{
	"schema":   "the schema id",
	"mission":  "the mission",
	"settings": "the settings",
	"events":   "the events",
	"ledger":   "the final ledger",
	"outcome":  "the outcome",
}

// describePath names a place in a case the way a person would.
func describePath(c *missions.Case, path []string) string {
	if len(path) == 0 {
		return "the case"
	}
	if path[len(path)-1] == "#" {
		what := strings.Join(path[:len(path)-1], ".")
		if what == "events" {
			return "the number of events"
		}
		return "the number of entries in " + what
	}
	if len(path) == 1 {
		if part, ok := casePartNames[path[0]]; ok {
			return part
		}
		return fmt.Sprintf("the field %q", path[0])
	}
	field := strings.Join(path[1:], ".")
	switch path[0] {
	case "events":
		i, err := strconv.Atoi(path[1])
		if err != nil || i >= len(c.Events) {
			break
		}
		ev := c.Events[i]
		where := fmt.Sprintf("event %d (tick %d, %s", ev.Seq, ev.Tick, ev.Kind)
		if ev.Attempt > 0 {
			where += fmt.Sprintf(" %d", ev.Attempt)
		}
		if ev.Intent != "" {
			where += " for " + ev.Intent
		}
		where += ")"
		if len(path) > 2 {
			return fmt.Sprintf("%s, field %q", where, strings.Join(path[2:], "."))
		}
		return where
	case "outcome":
		if len(path) > 3 && path[1] == "verdicts" {
			if i, err := strconv.Atoi(path[2]); err == nil && i < len(c.Outcome.Verdicts) {
				return fmt.Sprintf("the outcome for intent %s, field %q", c.Outcome.Verdicts[i].Intent, strings.Join(path[3:], "."))
			}
		}
		return fmt.Sprintf("the outcome, field %q", field)
	case "ledger":
		if len(path) > 3 && path[1] == "objects" {
			if i, err := strconv.Atoi(path[2]); err == nil && i < len(c.Ledger.Objects) {
				return fmt.Sprintf("ledger object %s, field %q", c.Ledger.Objects[i].ID, strings.Join(path[3:], "."))
			}
		}
		return fmt.Sprintf("the final ledger, field %q", field)
	}
	return fmt.Sprintf("%s, field %q", path[0], field)
}

// show renders a JSON value briefly.
func show(v any) string {
	if _, ok := v.(missing); ok {
		return "nothing"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return ansi.Truncate(string(b), 60, "…")
}
