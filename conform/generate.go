package conform

// Generated schedules: missions drawn from the world table with a seed,
// and the smaller missions a failing one shrinks to. Both are pure: the
// same seed and index give the same mission, and the same mission the
// same candidates, in the same order.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// The numbers a generated schedule draws from, placed around the
// request timeout (RequestTimeoutTicks) and the short retention of a row
// whose keys expire (RequestTimeoutTicks/2): a late commit or a pending
// refund that lands before the client gives up, just after, or after the
// key is gone.
var (
	genDelays  = []int{3, 8, 15, 25}
	genLags    = []int{3, 8, 15, 25}
	genAmounts = []string{"45.00", "12.50", "80.00"}
)

// Generate is schedule i of the search that seed names: one to three
// intents (sometimes two with equal parameters), a fixture per create
// from the world table, waits around the retention, sends made together,
// a changed amount, faults on reads, and now and then a provider with no
// key contract. Its expect block is what the engine's guarded caller
// gets; its goal says what it plays.
func Generate(seed uint64, i int) *missions.Mission {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	m := &missions.Mission{
		ID: ScheduleID(seed, i), Title: fmt.Sprintf("Generated schedule %d of seed %d", i, seed),
		Contract: ledger.V1, Retention: ledger.DefaultRetention, KeySource: missions.KeyPerIntent,
	}
	if r.IntN(10) == 0 {
		m.Contract = ledger.None
	}
	n := 1 + r.IntN(3)
	for k := 1; k <= n; k++ {
		order := strconv.Itoa(1040 + k)
		amount := genAmounts[r.IntN(len(genAmounts))]
		if k == 2 && r.IntN(4) == 0 {
			// Two intended refunds with equal parameters: a key made
			// from the payload merges them.
			order, amount = m.Intents[0].Payload["order"], m.Intents[0].Payload["amount"]
		}
		id := "refund-" + strconv.Itoa(k)
		m.Intents = append(m.Intents, missions.Intent{ID: id, Op: "refund", Principal: "support-agent",
			Label: "refund of " + amount + " on order " + order, Payload: map[string]string{"order": order, "amount": amount}})
	}
	// Each intent's creates, in order; then a random interleaving that
	// keeps each intent's order.
	per := make([][]missions.Step, n)
	for k := range per {
		for range 1 + r.IntN(3) {
			per[k] = append(per[k], drawAttempt(r, m.Intents[k].ID))
		}
	}
	if k := r.IntN(n); r.IntN(6) == 0 && len(per[k]) > 1 {
		// The same intent asked again with other arguments.
		last := &per[k][len(per[k])-1]
		amount := genAmounts[(slices.Index(genAmounts, m.Intents[k].Payload["amount"])+1)%len(genAmounts)]
		last.Payload = map[string]string{"amount": amount}
	}
	var steps []missions.Step
	for left := n; left > 0; {
		k := r.IntN(n)
		if len(per[k]) == 0 {
			continue
		}
		steps = append(steps, per[k][0])
		if per[k] = per[k][1:]; len(per[k]) == 0 {
			left--
		}
	}
	if r.IntN(6) == 0 && !slices.ContainsFunc(steps, func(st missions.Step) bool { return st.Fixture == missions.FailureBeforeCommit }) {
		// Two runs of the client send the first create at once, and
		// each settles every intent. Not with a refusal before
		// execution: which run's send is refused is the race of the
		// two, and each run is told of its own.
		first := steps[0]
		steps[0] = missions.Step{Together: []missions.Step{first, {Attempt: first.Attempt, Fixture: missions.Success}}}
	}
	switch r.IntN(3) {
	case 0:
		// A wait past the retention: the keys are gone before the retry.
		m.Retention = 8
		steps = slices.Insert(steps, 1, missions.Step{Wait: 12})
	case 1:
		steps = slices.Insert(steps, r.IntN(len(steps)+1), missions.Step{Wait: 3})
	}
	m.Schedule = steps
	if r.IntN(2) == 0 {
		for range 1 + r.IntN(3) {
			rs := missions.ReadStep{Fault: missions.ReadFaults[r.IntN(len(missions.ReadFaults))]}
			if rs.Fault == missions.ReadLagging {
				rs.Lag = genLags[r.IntN(len(genLags))]
			}
			m.Reads = append(m.Reads, rs)
		}
	}
	Complete(m, fmt.Sprintf("Drawn by replaylab conform --explore (seed %d, schedule %d)", seed, i))
	return m
}

// ScheduleID names schedule i of seed: explore-SEED-I.
func ScheduleID(seed uint64, i int) string { return fmt.Sprintf("explore-%d-%d", seed, i) }

// drawAttempt is one create with a fixture from the world table, and the
// delay and resolution the fixture takes.
func drawAttempt(r *rand.Rand, intent string) missions.Step {
	st := missions.Step{Attempt: intent, Fixture: missions.Fixtures[r.IntN(len(missions.Fixtures))]}
	switch st.Fixture {
	case missions.LateCommit:
		st.Delay = genDelays[r.IntN(len(genDelays))]
	case missions.PendingFixture:
		st.Delay = genDelays[r.IntN(len(genDelays))]
		st.Resolve = ledger.Succeeded
		if r.IntN(3) == 0 {
			st.Resolve = ledger.Failed
		}
	}
	return st
}

// Complete writes a generated mission's goal, from what it plays, and
// its expect block: what the engine's guarded caller gets on it.
func Complete(m *missions.Mission, origin string) {
	m.Expect = nil
	m.Goal = origin + ". " + plays(m) + "."
	guarded, on, own := missions.Guarded, true, missions.KeyPerIntent
	when := missions.Overrides{Policy: &guarded, StableKeys: &on}
	c, err := missions.Run(m, m.Settings(missions.Overrides{Policy: &guarded, StableKeys: &on, KeySource: &own}))
	if err != nil {
		return
	}
	e := missions.Expectation{When: when, Effects: c.Outcome.Effects, Verdicts: map[string]missions.Verdict{}}
	for _, v := range c.Outcome.Verdicts {
		e.Verdicts[v.Intent] = v.Verdict
	}
	m.Expect = []missions.Expectation{e}
	m.Goal += fmt.Sprintf(" The engine's guarded caller ends it with %s.", guardedWords(c.Outcome))
}

func guardedWords(o missions.Outcome) string {
	var parts []string
	for _, v := range o.Verdicts {
		parts = append(parts, v.Intent+" "+string(v.Verdict))
	}
	return termtext.Plural(o.Effects, "effect") + ": " + termtext.AndList(parts)
}

// plays is what a mission plays for a live client, in one line, or why
// a live client cannot meet it.
func plays(m *missions.Mission) string {
	sc, err := FromMission(m)
	if err != nil {
		return err.Error()
	}
	return sc.Plays()
}

// Smaller lists the missions one step smaller than m, most reduction
// first: an intent fewer, no reads or a read fewer, a step fewer, sends
// made one at a time, no changed amount, a simpler fixture, a shorter
// delay, wait or lag. Each keeps every intent attempted at least once.
func Smaller(m *missions.Mission) []*missions.Mission {
	var out []*missions.Mission
	add := func(c *missions.Mission) {
		if usable(c) {
			out = append(out, c)
		}
	}
	if len(m.Intents) > 1 {
		for k := range m.Intents {
			c := clone(m)
			gone := c.Intents[k].ID
			c.Intents = slices.Delete(c.Intents, k, k+1)
			c.Schedule = dropIntent(c.Schedule, gone)
			add(c)
		}
	}
	if len(m.Reads) > 0 {
		c := clone(m)
		c.Reads = nil
		add(c)
		for k := range m.Reads {
			if len(m.Reads) == 1 {
				break
			}
			c := clone(m)
			c.Reads = slices.Delete(c.Reads, k, k+1)
			add(c)
		}
	}
	for k := range m.Schedule {
		c := clone(m)
		c.Schedule = slices.Delete(c.Schedule, k, k+1)
		add(c)
	}
	for k, st := range m.Schedule {
		if st.Kind() == missions.StepTogether {
			c := clone(m)
			c.Schedule[k] = st.Together[0]
			add(c)
		}
	}
	each := func(fn func(st *missions.Step) bool) {
		for k := range m.Schedule {
			for part := -1; part < len(m.Schedule[k].Together); part++ {
				c := clone(m)
				st := &c.Schedule[k]
				if part >= 0 {
					st = &st.Together[part]
				}
				if st.Kind() == missions.StepAttempt && fn(st) {
					add(c)
				}
			}
		}
	}
	each(func(st *missions.Step) bool {
		if st.Payload == nil {
			return false
		}
		st.Payload = nil
		return true
	})
	for _, simpler := range []missions.Fixture{missions.Success, missions.TimeoutAfterCommit} {
		each(func(st *missions.Step) bool {
			if st.Fixture == missions.Success || st.Fixture == simpler {
				return false
			}
			st.Fixture, st.Delay, st.Resolve = simpler, 0, 0
			return true
		})
	}
	each(func(st *missions.Step) bool {
		if st.Delay <= 1 {
			return false
		}
		st.Delay = shorter(st.Delay, genDelays)
		return true
	})
	for k, st := range m.Schedule {
		if st.Kind() == missions.StepWait && st.Wait > 1 {
			c := clone(m)
			c.Schedule[k].Wait = st.Wait / 2
			add(c)
		}
	}
	for k, rs := range m.Reads {
		if rs.Lag > 1 {
			c := clone(m)
			c.Reads[k].Lag = shorter(rs.Lag, genLags)
			add(c)
		}
		if rs.Fault != missions.ReadOK {
			c := clone(m)
			c.Reads[k] = missions.ReadStep{Fault: missions.ReadOK}
			add(c)
		}
	}
	return out
}

// shorter is the next value below n among those drawn, so that a shrunk
// delay keeps the margin a drawn one has around the request timeout and
// the retention; half of n below them all.
func shorter(n int, drawn []int) int {
	for i := len(drawn) - 1; i >= 0; i-- {
		if drawn[i] < n {
			return drawn[i]
		}
	}
	return max(n/2, 1)
}

// usable: every intent is attempted, and a mission has at least one step.
// (A smaller schedule of one a live client meets is one it meets too.)
func usable(m *missions.Mission) bool {
	if len(m.Schedule) == 0 {
		return false
	}
	tried := map[string]bool{}
	for _, st := range m.Schedule {
		tried[st.Attempt] = true
		for _, t := range st.Together {
			tried[t.Attempt] = true
		}
	}
	for _, in := range m.Intents {
		if !tried[in.ID] {
			return false
		}
	}
	return true
}

// dropIntent is a schedule without the steps of one intent.
func dropIntent(steps []missions.Step, intent string) []missions.Step {
	var out []missions.Step
	for _, st := range steps {
		switch {
		case st.Attempt == intent:
			continue
		case st.Kind() == missions.StepTogether:
			var keep []missions.Step
			for _, t := range st.Together {
				if t.Attempt != intent {
					keep = append(keep, t)
				}
			}
			switch len(keep) {
			case 0:
				continue
			case 1:
				st = keep[0]
			default:
				st.Together = keep
			}
		}
		out = append(out, st)
	}
	return out
}

// clone is a deep copy of a mission's intents, schedule and reads.
func clone(m *missions.Mission) *missions.Mission {
	c := *m
	c.Intents = slices.Clone(m.Intents)
	c.Schedule = make([]missions.Step, len(m.Schedule))
	for k, st := range m.Schedule {
		st.Together = slices.Clone(st.Together)
		c.Schedule[k] = st
	}
	c.Reads = slices.Clone(m.Reads)
	c.Expect = nil
	return &c
}

// size orders schedules for shrinking and for telling failures apart:
// intents, steps, reads, then the sum of delays, waits and lags.
func size(m *missions.Mission) [4]int {
	var steps, ticks int
	for _, st := range m.Schedule {
		steps += 1 + len(st.Together)
		ticks += st.Delay + st.Wait
		for _, t := range st.Together {
			ticks += t.Delay
		}
	}
	for _, rs := range m.Reads {
		ticks += rs.Lag
	}
	return [4]int{len(m.Intents), steps, len(m.Reads), ticks}
}
