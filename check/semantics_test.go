package check_test

import (
	"errors"
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
	expect(t, "one object recorded for two intents", kinds(t, att("i", "k", "ok"), att("j", "m", "info"), rec("i", "k", "re_1", "succeeded"), rec("j", "m", "re_1", "succeeded")),
		"object_shared_by_intents@3,4")
	expect(t, "a key sent and recorded for two intents is said once", kinds(t, att("i", "k", "ok"), att("j", "k", "ok"), rec("i", "k", "re_1", "succeeded"), rec("j", "k", "re_1", "succeeded")),
		"key_shared_by_intents@1,2", "ok_without_effect@2", "object_shared_by_intents@3,4")
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
