package check_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/replaylab/replaylab/check"
	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/serve"
)

// A known run, in the terms check reads it in: what each attempt of the
// client saw, and what the provider holds. The runs below know these
// facts as structures; check sees only the history's lines.
type knownAttempt struct {
	intent, key string
	outcome     string // ok, fail, info
	object      string // what an ok named
	pending     string // the refund a reply showed pending
}

type knownRecord struct {
	intent, key, object string
	live                bool
}

// truth is the anomalies the facts imply, as "kind intent".
func truth(atts []knownAttempt, recs []knownRecord) []string {
	var out []string
	live := map[string][]string{}
	for _, r := range recs {
		if r.live {
			live[r.intent] = append(live[r.intent], r.object)
		}
	}
	var intents []string
	keysOf := map[string][]string{}
	keyOwner := map[string]string{}
	for _, a := range atts {
		if !slices.Contains(intents, a.intent) {
			intents = append(intents, a.intent)
		}
		if !slices.Contains(keysOf[a.intent], a.key) {
			keysOf[a.intent] = append(keysOf[a.intent], a.key)
		}
		if a.key == "" {
			continue
		}
		if o, ok := keyOwner[a.key]; !ok {
			keyOwner[a.key] = a.intent
		} else if o != a.intent && !slices.Contains(out, check.KeyShared+" "+o) {
			out = append(out, check.KeyShared+" "+o)
		}
	}
	for _, in := range intents {
		ls := live[in]
		if len(ls) > 1 {
			out = append(out, check.Duplicate+" "+in)
		}
		if len(keysOf[in]) > 1 {
			out = append(out, check.KeyChanged+" "+in)
		}
		ok, unsure := false, false
		shown := map[string]bool{}
		okNamesOther := false
		for _, a := range atts {
			if a.intent != in {
				continue
			}
			switch a.outcome {
			case "ok":
				ok = true
				if a.object != "" && !slices.Contains(ls, a.object) && len(ls) > 0 {
					okNamesOther = true
				}
			default:
				unsure = true
			}
			if a.pending != "" {
				shown[a.pending] = true
			}
		}
		if ok && (len(ls) == 0 || okNamesOther) {
			out = append(out, check.OKNoEffect+" "+in)
		}
		if !ok && unsure && slices.ContainsFunc(ls, func(o string) bool { return !shown[o] }) {
			out = append(out, check.Unlearned+" "+in)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// linesOf writes the facts as a history, every line with a time, in a
// drawn order.
func linesOf(t *rapid.T, atts []knownAttempt, recs []knownRecord) string {
	var ls []string
	stamp := func(n int) string {
		return fmt.Sprintf(`,"start":"%s"`, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(n)*time.Second).Format(time.RFC3339))
	}
	n := 0
	for _, a := range atts {
		n++
		more := []string{stamp(n)}
		if a.object != "" {
			more = append(more, `,"object":"`+a.object+`"`)
		}
		ls = append(ls, att(a.intent, a.key, a.outcome, more...))
		if a.pending != "" {
			n++
			ls = append(ls, read(a.intent, a.pending, "pending", stamp(n)))
		}
	}
	for _, r := range recs {
		n++
		st := "failed"
		if r.live {
			st = "succeeded"
		}
		ls = append(ls, rec(r.intent, r.key, r.object, st, stamp(n)))
	}
	return strings.Join(rapid.Permutation(ls).Draw(t, "order"), "\n") + "\n"
}

func reported(t *rapid.T, history string) []string {
	rep, err := check.History("d.jsonl", strings.NewReader(history))
	if err != nil {
		t.Fatalf("%v\n%s", err, history)
	}
	var out []string
	for _, a := range rep.Anomalies {
		out = append(out, a.Kind+" "+a.Intent)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Simulated runs of random missions, under random settings: check reports
// exactly what the runner's own record of the run implies.
func TestCheckAgreesWithTheSimulator(t *testing.T) {
	fixtures := []missions.Fixture{missions.FailureBeforeCommit, missions.TimeoutAfterCommit, missions.Success, missions.TimeoutBeforeCommit,
		missions.ServerErrorAfterCommit, missions.LateCommit, missions.PendingFixture}
	rapid.Check(t, func(t *rapid.T) {
		m := &missions.Mission{ID: "gen", Title: "generated", Goal: "generated", Contract: ledger.V1, Retention: rapid.IntRange(1, 20).Draw(t, "retention"), KeySource: missions.KeyPerIntent}
		for i := range rapid.IntRange(1, 2).Draw(t, "intents") {
			id := fmt.Sprintf("refund-%d", i)
			m.Intents = append(m.Intents, missions.Intent{ID: id, Op: "refund", Principal: "p", Label: id, Payload: map[string]string{"amount": "20.00"}})
		}
		for n := range rapid.IntRange(len(m.Intents), 5).Draw(t, "steps") {
			who := rapid.SampledFrom(m.Intents).Draw(t, "who").ID
			if n < len(m.Intents) {
				who = m.Intents[n].ID // each intent is attempted
			}
			st := missions.Step{Attempt: who, Fixture: rapid.SampledFrom(fixtures).Draw(t, "fixture")}
			switch st.Fixture {
			case missions.LateCommit:
				st.Delay = rapid.IntRange(1, 3).Draw(t, "delay")
			case missions.PendingFixture:
				st.Delay = rapid.IntRange(1, 3).Draw(t, "delay")
				st.Resolve = rapid.SampledFrom([]ledger.Status{ledger.Succeeded, ledger.Failed}).Draw(t, "resolve")
			}
			m.Schedule = append(m.Schedule, st)
			if rapid.Bool().Draw(t, "wait") {
				m.Schedule = append(m.Schedule, missions.Step{Wait: rapid.IntRange(1, 25).Draw(t, "ticks")})
			}
		}
		stable := rapid.Bool().Draw(t, "stable")
		policy := rapid.SampledFrom(missions.Policies).Draw(t, "policy")
		contract := rapid.SampledFrom([]ledger.Contract{ledger.V1, ledger.V2, ledger.None}).Draw(t, "contract")
		source := rapid.SampledFrom(missions.KeySources).Draw(t, "key source")
		c, err := missions.Run(m, m.Settings(missions.Overrides{StableKeys: &stable, Policy: &policy, Contract: &contract, KeySource: &source}))
		if err != nil {
			t.Fatal(err)
		}
		var atts []knownAttempt
		for _, e := range c.Events {
			if e.Kind != missions.EventAttempt {
				continue
			}
			a := knownAttempt{intent: e.Intent, key: e.Key, outcome: "info"}
			switch e.Observed {
			case missions.ObservedSuccess:
				a.outcome, a.object = "ok", e.Response.Object.String()
			case missions.ObservedPending:
				a.pending = e.Response.Object.String()
			case missions.ObservedError, missions.ObservedConflict, missions.ObservedMismatch:
				if e.Response != nil && e.Response.Code < 500 {
					a.outcome = "fail"
				}
			}
			atts = append(atts, a)
		}
		var recs []knownRecord
		for _, o := range c.Ledger.Objects {
			recs = append(recs, knownRecord{intent: o.Intent, key: o.Key, object: o.ID.String(), live: o.Status != ledger.Failed})
		}
		want, got := truth(atts, recs), reported(t, linesOf(t, atts, recs))
		if !slices.Equal(got, want) {
			t.Fatalf("check reports %v; the run implies %v", got, want)
		}
	})
}

// Sessions serve records under random fault lists, as its own history:
// check reports exactly what the session's requests and ledger imply.
func TestCheckAgreesWithServeSessions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		faults := rapid.SliceOfN(rapid.SampledFrom(missions.Fixtures), 0, 5).Draw(t, "faults")
		// The facts below know nothing of payloads: every create sends
		// the same parameters but for its intent, so metadata is left out
		// of the digest and a key shared by the intents replays.
		srv, err := serve.New(serve.Options{Faults: faults, Tick: 2 * time.Millisecond, Hold: 20 * time.Millisecond, Delay: 2, MetadataOutsideDigest: true,
			Contract: rapid.SampledFrom([]ledger.Contract{ledger.V1, ledger.V2, ledger.None}).Draw(t, "contract")})
		if err != nil {
			t.Fatal(err)
		}
		h := httptest.NewServer(srv)
		client := &http.Client{Timeout: 200 * time.Millisecond}
		for range rapid.IntRange(1, 5).Draw(t, "creates") {
			intent := rapid.SampledFrom([]string{"refund-a", "refund-b"}).Draw(t, "intent")
			key := rapid.SampledFrom([]string{intent + "-k1", intent + "-k2", "shared", ""}).Draw(t, "key")
			form := url.Values{"charge": {"ch_1"}, "amount": {"100"}, "metadata[intent]": {intent}}
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, h.URL+"/v1/refunds", strings.NewReader(form.Encode()))
			req.SetBasicAuth("sk_test", "")
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if key != "" {
				req.Header.Set("Idempotency-Key", key)
			}
			if resp, err := client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		srv.Release()
		h.Close()
		s := srv.Finish()
		var atts []knownAttempt
		for _, r := range s.Requests {
			if r.Kind != export.RequestCreate || r.Intent == "" {
				continue
			}
			a := knownAttempt{intent: r.Intent, key: r.Key, outcome: "info"}
			if r.Wire == export.WireDelivered {
				switch {
				case r.Status == 200 && len(r.Shown) > 0 && r.Shown[0].Status == ledger.Pending:
					a.pending = r.Shown[0].Object.String()
				case r.Status == 200:
					a.outcome = "ok"
					if len(r.Shown) > 0 {
						a.object = r.Shown[0].Object.String()
					}
				case r.Status >= 400 && r.Status < 500:
					a.outcome = "fail"
				}
			}
			atts = append(atts, a)
		}
		var recs []knownRecord
		for _, o := range s.Ledger.Objects {
			recs = append(recs, knownRecord{intent: o.Intent, key: o.Key, object: o.ID.String(), live: o.Status != ledger.Failed})
		}
		want := truth(atts, recs)
		data, err := export.MarshalHistory(s.History())
		if err != nil {
			t.Fatal(err)
		}
		if got := reported(t, string(data)); !slices.Equal(got, want) {
			t.Fatalf("check reports %v; the session implies %v\n%s", got, want, data)
		}
	})
}
