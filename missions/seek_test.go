package missions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"testing"

	"pgregory.net/rapid"

	"github.com/replaylab/replaylab/ledger"
)

// caseAt is a fresh run of m under s stepped to pos, as JSON.
func caseAt(t *rapid.T, m *Mission, s Settings, pos int) string {
	r, err := NewRunner(m, s)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < pos && r.Step(); i++ {
	}
	b, _ := json.Marshal(r.Case())
	return string(b)
}

// TestSeekIsAFreshRun: a runner moved about with Seek, back and forth
// across its marks, shows at every position the case a fresh run stepped
// to that position shows, and a case taken earlier keeps what it showed.
func TestSeekIsAFreshRun(t *testing.T) {
	all := BuiltIn().Missions
	long := longMission(300)
	rapid.Check(t, func(t *rapid.T) {
		m := rapid.SampledFrom(append(all, long)).Draw(t, "mission")
		stable := rapid.Bool().Draw(t, "stable")
		p := rapid.SampledFrom(Policies).Draw(t, "policy")
		c := rapid.SampledFrom(ShortContracts).Draw(t, "contract")
		s := m.Settings(Overrides{StableKeys: &stable, Policy: &p, Contract: &c})
		r, err := NewRunner(m, s)
		if err != nil {
			t.Fatal(err)
		}
		if m == long {
			r.markEvery = 7 // many marks, to rewind across
		}
		var kept []string
		var keptCases, keptLogs []*Case
		for range rapid.IntRange(1, 12).Draw(t, "moves") {
			pos := rapid.IntRange(0, r.Steps()).Draw(t, "pos")
			r.Seek(pos)
			if r.Position() != pos {
				t.Fatalf("Seek(%d) left the runner at %d", pos, r.Position())
			}
			cs := r.Case()
			got, _ := json.Marshal(cs)
			if want := caseAt(t, m, s, pos); string(got) != want {
				t.Fatalf("%s at %d after seeking: differs from a fresh run", m.ID, pos)
			}
			kept, keptCases = append(kept, string(got)), append(keptCases, cs)
			// A case that reads its events from the runner's records.
			keptLogs = append(keptLogs, r.Logged())
			// The tallies the verdicts read agree with the ledger itself.
			succeeded := 0
			for _, o := range cs.Ledger.Objects {
				if o.Status == ledger.Succeeded {
					succeeded++
				}
			}
			for _, v := range cs.Outcome.Verdicts {
				live := 0
				for _, o := range cs.Ledger.Objects {
					if o.Intent == v.Intent && o.Status != ledger.Failed {
						live++
					}
				}
				if live != v.Effects {
					t.Fatalf("%s at %d: %s has %d live effects, the verdict says %d", m.ID, pos, v.Intent, live, v.Effects)
				}
			}
			if succeeded != cs.Outcome.Succeeded {
				t.Fatalf("%s at %d: %d succeeded, the outcome says %d", m.ID, pos, succeeded, cs.Outcome.Succeeded)
			}
		}
		for i, cs := range keptCases {
			if b, _ := json.Marshal(cs); string(b) != kept[i] {
				t.Fatalf("case %d changed after the runner moved on", i)
			}
			if b, _ := json.Marshal(keptLogs[i].Whole()); string(b) != kept[i] {
				t.Fatalf("the log of case %d read otherwise after the runner moved on", i)
			}
		}
	})
}

// longMission has n attempt steps over three intents, every fixture in
// turn, with waits: a mission long enough to have many marks.
func longMission(n int) *Mission {
	m := &Mission{ID: "long", Title: "Long", Goal: "A long run.", Contract: ledger.V1, Retention: 9, KeySource: KeyPerIntent}
	for i := range 3 {
		id := string(rune('a' + i))
		m.Intents = append(m.Intents, Intent{ID: "refund-" + id, Op: "refund", Principal: "agent", Payload: map[string]string{"order": id}})
	}
	for i := range n {
		in := m.Intents[i%3].ID
		f := Fixtures[(i/3)%len(Fixtures)]
		st := Step{Attempt: in, Fixture: f}
		switch f {
		case LateCommit:
			st.Delay = 3
		case PendingFixture:
			st.Delay, st.Resolve = 4, ledger.Failed
		}
		m.Schedule = append(m.Schedule, st)
		if i%17 == 0 {
			m.Schedule = append(m.Schedule, Step{Wait: 5})
		}
		if i%29 == 0 {
			m.Schedule = append(m.Schedule, Step{Restart: true})
		}
	}
	return m
}

// TestDigestIsTheJSONDigest: the digest, computed without encoding/json,
// is the one encoding/json's bytes give, for any text, valid UTF-8 or not.
func TestDigestIsTheJSONDigest(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.OneOf(rapid.String(), rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
			rapid.SampledFrom([]string{"<&>", "\u2028\u2029", "\b\f\n\r\t\x00\x1f\x7f", `"\`, "\xff\xfe"}))
		op, principal := text.Draw(t, "op"), text.Draw(t, "principal")
		payload := rapid.MapOf(text, text).Draw(t, "payload")
		enc, _ := json.Marshal([]any{op, principal, payload})
		sum := sha256.Sum256(enc)
		if got, want := Digest(op, principal, payload), hex.EncodeToString(sum[:8]); got != want {
			t.Fatalf("Digest(%q, %q, %q) = %s; encoding/json gives %s (%s)", op, principal, payload, got, want, enc)
		}
	})
}

// TestValidIDIsThePattern: the hand-written id check accepts exactly what
// the documented pattern does.
func TestValidIDIsThePattern(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(rapid.StringMatching(`[a-z0-9-]{0,70}`), rapid.String()).Draw(t, "id")
		if ValidID(s) != idPattern.MatchString(s) {
			t.Fatalf("%q: ValidID %v, pattern %v", s, ValidID(s), idPattern.MatchString(s))
		}
	})
}

// idPattern is what ValidID checks, as a regexp.
var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// TestUnderIsAFreshRun: a runner made from another by Under, for every
// built-in mission and every setting in turn, each made from the one
// before, runs to the case a fresh run under those settings gives, moved
// about or not: what Under shares with the runner it came from is the
// mission's alone.
func TestUnderIsAFreshRun(t *testing.T) {
	cat := BuiltIn()
	for _, m := range cat.Missions {
		var prev *Runner
		for _, c := range ShortContracts {
			for _, p := range Policies {
				for _, stable := range []bool{true, false} {
					s := m.Settings(Overrides{Contract: &c, Policy: &p, StableKeys: &stable})
					var r *Runner
					var err error
					if prev == nil {
						r, err = NewRunner(m, s)
					} else {
						r, err = prev.Under(s)
					}
					if err != nil {
						t.Fatal(err)
					}
					r.Seek(r.Steps())
					r.Seek(r.Steps() / 2)
					r.Seek(r.Steps())
					fresh, err := Run(m, s)
					if err != nil {
						t.Fatal(err)
					}
					got, _ := json.Marshal(r.Case())
					want, _ := json.Marshal(fresh)
					if string(got) != string(want) {
						t.Fatalf("%s under %+v: a runner from Under differs from a fresh run", m.ID, s)
					}
					prev = r
				}
			}
		}
	}
}
