package missions

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/replaylab/replaylab/ledger"
)

func exploreOne(t *testing.T, id string, depth int, alphabet []Fixture, s ...Settings) *Exploration {
	t.Helper()
	m, err := BuiltIn().Get(id)
	if err != nil {
		t.Fatal(err)
	}
	o := ExploreOptions{Depth: depth, MaxSchedules: DefaultMaxSchedules, Settings: s}
	for _, f := range alphabet {
		o.Alphabet = append(o.Alphabet, AlphabetStep(m, f))
	}
	if alphabet == nil {
		o.Alphabet = DefaultAlphabet(m)
	}
	x, err := Explore(m, o)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func settingsOf(t *testing.T, id string, stable bool, p Policy, c ledger.Contract) Settings {
	m, err := BuiltIn().Get(id)
	if err != nil {
		t.Fatal(err)
	}
	return m.Settings(Overrides{StableKeys: &stable, Policy: &p, Contract: &c})
}

func pow(b, e int) int64 {
	n := int64(1)
	for range e {
		n *= int64(b)
	}
	return n
}

func binom(n, k int) int64 {
	r := int64(1)
	for i := 1; i <= k; i++ {
		r = r * int64(n-k+i) / int64(i)
	}
	return r
}

// TestExploreCountsMatchClosedForms: the schedules covered are exactly
// the sequences the bounds allow, whatever the dedupe merged, and the
// distinct states run are no more than them.
func TestExploreCountsMatchClosedForms(t *testing.T) {
	for _, p := range Policies {
		for depth := 1; depth <= 4; depth++ {
			s := settingsOf(t, "timeout-then-success", false, p, ledger.V1)
			r := exploreOne(t, "timeout-then-success", depth, CoreFixtures, s).Reports[0]
			var want int64
			for d := 1; d <= depth; d++ {
				want += pow(4, d)
			}
			if r.Schedules != want || r.Depth != depth || r.Levels != depth || r.Stopped != "" {
				t.Errorf("%s depth %d: %d schedules, depth %d, levels %d, stopped %q; want %d (4+16+…), complete", p, depth, r.Schedules, r.Depth, r.Levels, r.Stopped, want)
			}
			if int64(r.States) > want || r.States < 1 {
				t.Errorf("%s depth %d: %d states for %d schedules", p, depth, r.States, want)
			}
		}
	}
	// Two intents, an alphabet of 2, depth 2: every interleaving of a ≤ 2
	// attempts of one with b ≤ 2 of the other, C(a+b, a)·2^(a+b) each.
	s := settingsOf(t, "two-intended-refunds", true, Guarded, ledger.V1)
	r := exploreOne(t, "two-intended-refunds", 2, []Fixture{Success, TimeoutAfterCommit}, s).Reports[0]
	var want int64
	for a := 0; a <= 2; a++ {
		for b := 0; b <= 2; b++ {
			if a+b > 0 {
				want += binom(a+b, a) * pow(2, a+b)
			}
		}
	}
	if want != 164 || r.Schedules != want || r.Levels != 4 || r.Depth != 2 {
		t.Errorf("two intents: %d schedules, %d levels, depth %d; want %d, 4, 2", r.Schedules, r.Levels, r.Depth, want)
	}
}

// TestExploreKnownAnswers: the shortest counterexamples the lesson
// teaches.
func TestExploreKnownAnswers(t *testing.T) {
	off := settingsOf(t, "timeout-then-success", false, Naive, ledger.V1)
	r := exploreOne(t, "timeout-then-success", 3, nil, off).Reports[0]
	c, ok := r.Reached(Duplicate)
	if !ok || len(c.Moves) != 2 || r.Depth != 3 {
		t.Fatalf("naive, stable keys off: duplicate %v in %+v", ok, c.Moves)
	}
	x := exploreOne(t, "timeout-then-success", 3, nil, off)
	if got := fmt.Sprint(x.Alphabet[c.Moves[0].Fixture].Fixture, ",", x.Alphabet[c.Moves[1].Fixture].Fixture); got != "timeout_after_commit,success" {
		t.Errorf("the shortest duplicate is %s, want timeout_after_commit,success", got)
	}
	if c, ok := r.Reached(HiddenEffect); !ok || len(c.Moves) != 1 || x.Alphabet[c.Moves[0].Fixture].Fixture != TimeoutAfterCommit {
		t.Errorf("naive: the shortest hidden effect is one timeout_after_commit, got %v %+v", ok, c.Moves)
	}
	on := settingsOf(t, "timeout-then-success", true, Naive, ledger.V1)
	r = exploreOne(t, "timeout-then-success", 4, nil, on).Reports[0]
	if c, ok := r.Reached(Duplicate); ok || r.Depth != 4 {
		t.Errorf("stable keys on, v1: duplicate found %+v (depth %d); want none up to depth 4", c.Moves, r.Depth)
	}
	// The guarded caller with stable keys under v1 is never fooled.
	g := settingsOf(t, "timeout-then-success", true, Guarded, ledger.V1)
	r = exploreOne(t, "timeout-then-success", 4, nil, g).Reports[0]
	if len(r.Found) != 0 {
		t.Errorf("guarded, stable keys, v1: found %+v", r.Found)
	}
	// Without a contract, even stable keys cannot stop a duplicate from
	// the naive caller.
	none := settingsOf(t, "timeout-then-success", true, Naive, ledger.None)
	r = exploreOne(t, "timeout-then-success", 2, nil, none).Reports[0]
	if _, ok := r.Reached(Duplicate); !ok {
		t.Error("naive, contract none: no duplicate found in 2 attempts")
	}
}

// TestExploreDedupeIsSound: exploring with every schedule run on its own
// finds counterexamples of the same lengths and covers the same schedules.
func TestExploreDedupeIsSound(t *testing.T) {
	for _, m := range BuiltIn().Missions {
		depth := 3
		if len(m.Intents) > 1 {
			depth = 2
		}
		for _, p := range Policies {
			for _, stable := range []bool{true, false} {
				s := m.Settings(Overrides{StableKeys: &stable, Policy: &p})
				o := ExploreOptions{Depth: depth, MaxSchedules: DefaultMaxSchedules, Settings: []Settings{s}, Alphabet: DefaultAlphabet(m)}
				a, err := Explore(m, o)
				if err != nil {
					t.Fatal(err)
				}
				o.noDedupe = true
				b, err := Explore(m, o)
				if err != nil {
					t.Fatal(err)
				}
				ra, rb := a.Reports[0], b.Reports[0]
				if ra.Schedules != rb.Schedules {
					t.Errorf("%s %s: %d schedules with dedupe, %d without", m.ID, SettingsWords(s), ra.Schedules, rb.Schedules)
				}
				if int64(rb.States) != rb.Schedules {
					t.Errorf("%s: without dedupe %d states for %d schedules", m.ID, rb.States, rb.Schedules)
				}
				for _, v := range BadVerdicts {
					ca, oka := ra.Reached(v)
					cb, okb := rb.Reached(v)
					if oka != okb || len(ca.Moves) != len(cb.Moves) {
						t.Errorf("%s %s: %s found %v in %d with dedupe, %v in %d without", m.ID, SettingsWords(s), v, oka, len(ca.Moves), okb, len(cb.Moves))
					}
				}
			}
		}
	}
}

// TestCounterexamplesReplay: every counterexample the explorer writes, for
// every catalog mission and setting, is a mission that parses, validates,
// and run under its setting ends with the verdict claimed and the outcome
// its expect block states.
func TestCounterexamplesReplay(t *testing.T) {
	n := 0
	for _, m := range BuiltIn().Missions {
		depth := 3
		if len(m.Intents) > 1 {
			depth = 2
		}
		var all []Settings
		for _, stable := range []bool{true, false} {
			for _, p := range Policies {
				for _, c := range ShortContracts {
					all = append(all, m.Settings(Overrides{StableKeys: &stable, Policy: &p, Contract: &c}))
				}
			}
		}
		x, err := Explore(m, ExploreOptions{Depth: depth, MaxSchedules: DefaultMaxSchedules, Settings: all, Alphabet: DefaultAlphabet(m)})
		if err != nil {
			t.Fatal(err)
		}
		for i := range x.Reports {
			r := &x.Reports[i]
			for _, c := range r.Found {
				n++
				cm := x.CounterMission(r, c)
				data, err := Format(cm)
				if err != nil {
					t.Fatal(err)
				}
				back, err := Parse(cm.ID+".yaml", data)
				if err != nil {
					t.Fatalf("%s: the written mission does not parse: %v\n%s", cm.ID, err, data)
				}
				e := back.Expect[0]
				cs, err := Run(back, back.Settings(e.When))
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]Verdict{}
				for _, v := range cs.Outcome.Verdicts {
					got[v.Intent] = v.Verdict
				}
				if got[c.Intent] != c.Verdict {
					t.Errorf("%s: run gives %s for %s; the explorer claimed %s", cm.ID, got[c.Intent], c.Intent, c.Verdict)
				}
				if err := Check(cs, e); err != nil {
					t.Errorf("%s: %v", cm.ID, err)
				}
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d counterexamples checked", n)
	}
}

// TestExploreStopsAtBoundsAndWhenAsked: the schedule bound and a Progress
// that says stop each end the exploration with what was found so far, and
// say so.
func TestExploreStopsAtBoundsAndWhenAsked(t *testing.T) {
	m, _ := BuiltIn().Get("timeout-then-success")
	s := settingsOf(t, "timeout-then-success", false, Naive, ledger.V1)
	x, err := Explore(m, ExploreOptions{Depth: 6, MaxSchedules: 100, Settings: []Settings{s, s}, Alphabet: DefaultAlphabet(m)})
	if err != nil {
		t.Fatal(err)
	}
	r := x.Reports[0]
	// 4 + 16 + 64 = 84 schedules complete three levels; the bound falls
	// in the fourth.
	if r.Stopped == "" || r.Schedules != 100 || r.Levels != 3 || r.Depth != 3 {
		t.Errorf("bounded at 100: stopped %q, %d schedules, %d levels complete", r.Stopped, r.Schedules, r.Levels)
	}
	if _, ok := r.Reached(Duplicate); !ok {
		t.Error("what was found before the bound is kept")
	}
	calls := 0
	x, err = Explore(m, ExploreOptions{Depth: 8, MaxSchedules: DefaultMaxSchedules * 100, Settings: []Settings{s, s}, Alphabet: DefaultAlphabet(m),
		Progress: func(Progress) bool { calls++; return calls < 2 }})
	if err != nil {
		t.Fatal(err)
	}
	if !x.Interrupted || len(x.Reports) != 1 || x.Reports[0].Stopped != "interrupted" {
		t.Errorf("asked to stop: interrupted %v, %d reports, %q", x.Interrupted, len(x.Reports), x.Reports[0].Stopped)
	}
	for _, bad := range []ExploreOptions{
		{Depth: 0, MaxSchedules: 1, Settings: []Settings{s}, Alphabet: DefaultAlphabet(m)},
		{Depth: MaxExploreDepth + 1, MaxSchedules: 1, Settings: []Settings{s}, Alphabet: DefaultAlphabet(m)},
		{Depth: 2, MaxSchedules: 1, Settings: []Settings{s}},
		{Depth: 2, MaxSchedules: 1, Settings: []Settings{s}, Alphabet: []Step{{Fixture: "sucess"}}},
		{Depth: 2, MaxSchedules: 0, Settings: []Settings{s}, Alphabet: DefaultAlphabet(m)},
	} {
		if _, err := Explore(m, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestFormatReadsBack: every catalog mission, written by Format, parses
// back as the same mission.
func TestFormatReadsBack(t *testing.T) {
	for _, m := range BuiltIn().Missions {
		data, err := Format(m)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(m.ID+".yaml", data)
		if err != nil {
			t.Fatalf("%s: %v\n%s", m.ID, err, data)
		}
		a, _ := json.Marshal(m)
		b, _ := json.Marshal(back)
		if string(a) != string(b) {
			t.Errorf("%s: read back differs\n%s\n%s", m.ID, a, b)
		}
	}
}

// TestExploreStopsAtTheMemoryBound: a mission of many intents stops when
// its states would outgrow the memory bound, and says so.
func TestExploreStopsAtTheMemoryBound(t *testing.T) {
	m := &Mission{ID: "wide", Title: "wide", Goal: "many intents", Contract: ledger.V1, Retention: 100, KeySource: KeyPerIntent}
	for i := range 40 {
		id := fmt.Sprintf("refund-%d", i)
		m.Intents = append(m.Intents, Intent{ID: id, Op: "refund", Principal: "agent", Payload: map[string]string{"order": id}})
		m.Schedule = append(m.Schedule, Step{Attempt: id, Fixture: Success})
	}
	s := m.Settings(Overrides{})
	x, err := Explore(m, ExploreOptions{Depth: 2, MaxSchedules: DefaultMaxSchedules, MaxStateBytes: 4 << 20, Settings: []Settings{s}, Alphabet: DefaultAlphabet(m)})
	if err != nil {
		t.Fatal(err)
	}
	r := x.Reports[0]
	if !strings.Contains(r.Stopped, "memory bound (4 MiB of states)") || r.Levels < 1 {
		t.Errorf("stopped %q after %d levels", r.Stopped, r.Levels)
	}
}

// TestCounterIDsStayApart: however long the mission's id, the ids of its
// counterexamples are valid, at most 64 characters, and all different.
func TestCounterIDsStayApart(t *testing.T) {
	long := strings.Repeat("a", 64)
	seen := map[string]bool{}
	for _, stable := range []bool{true, false} {
		for _, p := range Policies {
			for _, c := range ShortContracts {
				for _, v := range BadVerdicts {
					id := counterID(long, Settings{StableKeys: stable, Policy: p, Contract: c}, v)
					if !ValidID(id) || seen[id] {
						t.Errorf("%q: valid %v, seen before %v", id, ValidID(id), seen[id])
					}
					seen[id] = true
				}
			}
		}
	}
}
