package check_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/check"
	"github.com/replaylab/replaylab/export"
)

// kinds runs check on lines and returns "kind@lines" per anomaly.
func kinds(t *testing.T, lines ...string) []string {
	t.Helper()
	rep, err := check.History("h.jsonl", strings.NewReader(strings.Join(lines, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range rep.Anomalies {
		s := a.Kind + "@"
		for i, l := range a.Lines {
			if i > 0 {
				s += ","
			}
			s += string(rune('0' + l))
		}
		out = append(out, s)
	}
	return out
}

func att(intent, key, outcome string, more ...string) string {
	return `{"type":"attempt","intent":"` + intent + `","key":"` + key + `","outcome":"` + outcome + `"` + strings.Join(more, "") + `}`
}

func rec(intent, key, object, status string, more ...string) string {
	return `{"type":"record","intent":"` + intent + `","key":"` + key + `","object":"` + object + `","status":"` + status + `"` + strings.Join(more, "") + `}`
}

func read(intent, object, status string, more ...string) string {
	return `{"type":"read","intent":"` + intent + `","object":"` + object + `","status":"` + status + `"` + strings.Join(more, "") + `}`
}

func at(t string) string { return `,"start":"2026-12-01T10:00:` + t + `Z"` }

func expect(t *testing.T, name string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: %v, want %v", name, got, want)
	}
}

// An object's records are its status history: the last one is its final
// status, by time where the records carry times, by line where not.
func TestTheLastRecordIsTheFinalStatus(t *testing.T) {
	a := att("i", "k", "ok", `,"object":"re_2"`)
	expect(t, "failed, then succeeded, plus another", kinds(t, a, rec("i", "k", "re_1", "failed"), rec("i", "k", "re_1", "succeeded"), rec("i", "k", "re_2", "succeeded")),
		"duplicate_effect@3,4")
	expect(t, "succeeded, then failed, plus another", kinds(t, a, rec("i", "k", "re_1", "succeeded"), rec("i", "k", "re_1", "failed"), rec("i", "k", "re_2", "succeeded")))
	// With times, the time decides, whatever the line order.
	expect(t, "times against the line order", kinds(t, a, rec("i", "k", "re_1", "failed", at("09")), rec("i", "k", "re_1", "succeeded", at("05")), rec("i", "k", "re_2", "succeeded", at("06"))))
	expect(t, "every object alike: pending, then succeeded", kinds(t, att("i", "k", "info"), rec("i", "k", "re_1", "pending"), read("i", "re_1", "pending"), rec("i", "k", "re_1", "succeeded")))
}

// A read clears effect_never_learned only when it showed that effect,
// after the attempt began.
func TestAReadMustShowTheEffect(t *testing.T) {
	expect(t, "a read of the same object after the attempt", kinds(t, att("i", "k", "info"), read("i", "re_1", "succeeded"), rec("i", "k", "re_1", "succeeded")))
	expect(t, "a read of another object", kinds(t, att("i", "k", "info"), read("i", "re_9", "succeeded"), rec("i", "k", "re_1", "succeeded")),
		"effect_never_learned@1,3")
	expect(t, "a read before the attempt, by line", kinds(t, read("i", "re_1", "succeeded"), att("i", "k", "info"), rec("i", "k", "re_1", "succeeded")),
		"effect_never_learned@2,3")
	expect(t, "a read before the attempt, by time", kinds(t, att("i", "k", "info", at("10")), read("i", "re_1", "succeeded", at("05")), rec("i", "k", "re_1", "succeeded")),
		"effect_never_learned@1,3")
	expect(t, "a read that showed it failed", kinds(t, att("i", "k", "info"), read("i", "re_1", "failed"), rec("i", "k", "re_1", "succeeded")),
		"effect_never_learned@1,3")
	expect(t, "two effects, one read", kinds(t, att("i", "a", "info"), att("i", "b", "info"), read("i", "re_1", "succeeded"), rec("i", "a", "re_1", "succeeded"), rec("i", "b", "re_2", "succeeded")),
		"key_changed@1,2", "effect_never_learned@2,5", "duplicate_effect@4,5")
}

// Every line that can show an anomaly is read for it.
func TestAnomaliesFromEveryLine(t *testing.T) {
	expect(t, "a later ok names another intent's refund", kinds(t,
		att("i", "k", "ok", `,"object":"re_1"`), att("j", "m", "ok", `,"object":"re_2"`), att("j", "m", "ok", `,"object":"re_1"`),
		rec("i", "k", "re_1", "succeeded"), rec("j", "m", "re_2", "succeeded")),
		"ok_without_effect@3,4,5")
	expect(t, "one key recorded for two intents", kinds(t, att("i", "k", "ok"), att("j", "m", "ok"), rec("i", "k", "re_1", "succeeded"), rec("j", "k", "re_2", "succeeded")),
		"key_shared_by_intents@3,4")
	expect(t, "a record under a key no attempt sent", kinds(t, att("i", "k", "ok"), rec("i", "other", "re_1", "succeeded")),
		"record_under_unsent_key@2")
	// The object is its last record's intent's: j's, which never learned
	// of it, while i was told of a refund that is not its own.
	expect(t, "one object recorded for two intents", kinds(t, att("i", "k", "ok"), att("j", "m", "info"), rec("i", "k", "re_1", "succeeded"), rec("j", "m", "re_1", "succeeded")),
		"ok_without_effect@1", "effect_never_learned@2,4", "object_shared_by_intents@3,4")
	expect(t, "a key sent and recorded for two intents is said once", kinds(t, att("i", "k", "ok"), att("j", "k", "ok"), rec("i", "k", "re_1", "succeeded"), rec("j", "k", "re_1", "succeeded")),
		"ok_without_effect@1", "key_shared_by_intents@1,2", "object_shared_by_intents@3,4")
}

// What does not read is refused with its line, never read as something
// else.
func TestInputIsReadExactly(t *testing.T) {
	for _, c := range []struct{ name, line, want string }{
		{"bytes that are not UTF-8", "{\"type\":\"attempt\",\"intent\":\"refund-\xff\",\"outcome\":\"info\"}", "byte 36 is not UTF-8"},
		{"a key that is null", `{"type":"attempt","intent":"i","key":null,"outcome":"info"}`, `"key" is null`},
		{"a read's start that is no time", read("i", "re_1", "succeeded", `,"start":"soon"`), `start "soon" is not a time`},
		{"a record's start that is no time", rec("i", "k", "re_1", "succeeded", `,"start":"2026-13-01"`), `is not a time`},
	} {
		_, err := check.History("h.jsonl", strings.NewReader(att("i", "k", "ok")+"\n"+c.line+"\n"))
		var he *export.HistoryError
		if !errors.As(err, &he) || he.Line != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want line 2: %s", c.name, err, c.want)
		}
	}
	// Two intents that differ only in bytes that are not UTF-8 are not
	// merged into one (and a false duplicate): the line is refused.
	_, err := check.History("h.jsonl", strings.NewReader(strings.Join([]string{
		"{\"type\":\"attempt\",\"intent\":\"r\xfe\",\"key\":\"a\",\"outcome\":\"ok\"}",
		"{\"type\":\"attempt\",\"intent\":\"r\xff\",\"key\":\"b\",\"outcome\":\"ok\"}",
	}, "\n")))
	if err == nil || !strings.Contains(err.Error(), "h.jsonl:1:") {
		t.Errorf("invalid UTF-8 intents: %v", err)
	}
}

// From a review: cases that each broke a rule the docs state.
func TestReviewedCases(t *testing.T) {
	// An object is its last record's intent's, whatever the line order.
	x := att("x", "kx", "ok", `,"object":"o"`, at("00"))
	r1, r2 := rec("x", "kx", "o", "succeeded", at("01")), rec("z", "kz", "o", "succeeded", at("02"))
	a, b := kinds(t, x, r1, r2), kinds(t, x, r2, r1)
	norm := func(ks []string) []string {
		var out []string
		for _, k := range ks {
			kind, _, _ := strings.Cut(k, "@")
			out = append(out, kind)
		}
		slices.Sort(out)
		return out
	}
	expect(t, "ownership by the last record, lines swapped", norm(b), norm(a)...)
	if !slices.Contains(norm(a), "record_without_attempt") {
		t.Errorf("z's record, the last of o, is an orphan: %v", a)
	}
	// A first use without a digest does not hide two digests after it.
	expect(t, "an empty first digest", kinds(t, att("x", "k", "info"), att("x", "k", "info", `,"digest":"A"`), att("x", "k", "info", `,"digest":"B"`)),
		"key_reused_with_other_payload@1,3")
	// A clean history has an empty list of anomalies, not none.
	rep, err := check.History("h.jsonl", strings.NewReader(att("i", "k", "fail")+"\n"))
	if err != nil || rep.Anomalies == nil {
		t.Errorf("clean: %v, %#v", err, rep)
	}
	// Next copies every string it hands out.
	hr := export.NewHistoryReader("h.jsonl", strings.NewReader(strings.Repeat(read("i", "re_1", "pending")+"\n", 5000)))
	var kept []export.HistoryLine
	for {
		var l export.HistoryLine
		if _, err := hr.Next(&l); err != nil {
			break
		}
		kept = append(kept, l)
	}
	for _, l := range kept {
		if l.Type != "read" || l.Status != "pending" || l.Object != "re_1" {
			t.Fatalf("a line Next handed out changed: %+v", l)
		}
	}
}

// From a second review: an object recorded for two intents names its
// earliest record, in any line order; and a result says the same each
// time it is written, even where timed and untimed records of one object
// mix.
func TestSharedObjectsAndRepeatedRendering(t *testing.T) {
	a1 := rec("A", "ka", "X", "pending", at("01"))
	a2 := rec("A", "ka", "X", "succeeded", at("03"))
	b := rec("B", "kb", "X", "succeeded", at("02"))
	for _, order := range [][]string{{a1, a2, b}, {b, a1, a2}, {a2, b, a1}} {
		rep, err := check.History("h.jsonl", strings.NewReader(strings.Join(order, "\n")+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(rep.Anomalies, func(a check.Anomaly) bool { return a.Kind == check.ObjectShared })
		if i < 0 || rep.Anomalies[i].Intent != "A" || !strings.Contains(rep.Anomalies[i].Message, "for intent A and for intent B") {
			t.Errorf("order %v: %+v", order, rep.Anomalies)
		}
	}
	var lines []string
	for j := range 40 {
		stamp := ""
		if j%2 == 0 {
			stamp = at(fmt.Sprintf("%02d", 59-j))
		}
		lines = append(lines, rec(fmt.Sprintf("i%02d", j), "k", "X", "succeeded", stamp))
	}
	res, err := check.Check("m.jsonl", strings.NewReader(strings.Join(lines, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	var first, second strings.Builder
	if err := res.WriteJSON(&first); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteJSON(&second); err != nil {
		t.Fatal(err)
	}
	if first.String() != second.String() {
		t.Error("a result written twice says two things")
	}
}
