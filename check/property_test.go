package check_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/replaylab/replaylab/check"
)

// hline is a generated history line and whose it is.
type hline struct {
	text, intent string
}

// genLines makes a history over a few intents, keys and objects. Each
// object belongs to one intent: its records and the reads of it are that
// intent's lines. With timed, every line carries its own time, in the
// order made.
func genLines(t *rapid.T, timed bool) []hline {
	intents := []string{"i0", "i1", "i2"}
	n := rapid.IntRange(1, 24).Draw(t, "lines")
	var out []hline
	for j := range n {
		stamp := ""
		if timed {
			stamp = fmt.Sprintf(`,"start":"2026-12-01T10:%02d:%02dZ"`, j/60, j%60)
		}
		obj := rapid.IntRange(0, 3).Draw(t, "object")
		owner := intents[obj%len(intents)]
		o := fmt.Sprintf("re_%d", obj)
		switch rapid.IntRange(0, 2).Draw(t, "type") {
		case 0:
			in := rapid.SampledFrom(intents).Draw(t, "intent")
			key := rapid.SampledFrom([]string{"k-" + in, "k-" + in + "-b", "k-shared", ""}).Draw(t, "key")
			outcome := rapid.SampledFrom([]string{"ok", "fail", "info"}).Draw(t, "outcome")
			named := ""
			if outcome == "ok" && rapid.Bool().Draw(t, "names") {
				named = `,"object":"` + o + `"`
			}
			d := rapid.SampledFrom([]string{"d1", "d2"}).Draw(t, "digest")
			out = append(out, hline{att(in, key, outcome, `,"digest":"`+d+`"`, named, stamp), in})
		case 1:
			st := rapid.SampledFrom([]string{"pending", "succeeded", "failed"}).Draw(t, "status")
			out = append(out, hline{read(owner, o, st, stamp), owner})
		default:
			key := rapid.SampledFrom([]string{"k-" + owner, "k-shared", "k-server"}).Draw(t, "rkey")
			st := rapid.SampledFrom([]string{"pending", "succeeded", "failed", "canceled"}).Draw(t, "rstatus")
			out = append(out, hline{rec(owner, key, o, st, stamp), owner})
		}
	}
	return out
}

// normal is a report in a form line numbers and the order of unrelated
// lines do not change: per anomaly, its kind, the intents it names, its
// objects and keys, and, when withWords, its message.
func normal(t *rapid.T, ls []hline, withWords bool) []string {
	texts := make([]string, len(ls))
	for i, l := range ls {
		texts[i] = l.text
	}
	rep, err := check.History("p.jsonl", strings.NewReader(strings.Join(texts, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range rep.Anomalies {
		who := slices.Sorted(slices.Values(append([]string{a.Intent}, a.Others...)))
		s := fmt.Sprintf("%s %v %v %v", a.Kind, who, a.Objects, a.Keys)
		if withWords {
			s += " " + a.Message
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Lines that all carry times say the same in any order.
func TestAnyShuffleOfTimedLinesGivesTheSameReport(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ls := genLines(t, true)
		want := normal(t, ls, true)
		perm := rapid.Permutation(ls).Draw(t, "shuffle")
		if got := normal(t, perm, true); !slices.Equal(got, want) {
			t.Fatalf("shuffled:\n%s\ngives\n%s\nwhere in order it gives\n%s", join(perm), strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// Without times, the line order is the order of events: interleaving the
// intents' lines otherwise, each intent's (and so each object's records)
// kept in order, says the same.
func TestAnyInterleavingOfUntimedIntentsGivesTheSameReport(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ls := genLines(t, false)
		want := normal(t, ls, false)
		// Deal the lines out per intent, then merge them in a drawn order.
		queues := map[string][]hline{}
		var owners []string
		for _, l := range ls {
			queues[l.intent] = append(queues[l.intent], l)
			owners = append(owners, l.intent)
		}
		var merged []hline
		for _, who := range rapid.Permutation(owners).Draw(t, "interleaving") {
			merged = append(merged, queues[who][0])
			queues[who] = queues[who][1:]
		}
		if got := normal(t, merged, false); !slices.Equal(got, want) {
			t.Fatalf("interleaved:\n%s\ngives\n%s\nwhere in order it gives\n%s", join(merged), strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

func join(ls []hline) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.text + "\n")
	}
	return b.String()
}
