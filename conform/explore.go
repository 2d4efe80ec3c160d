package conform

// conform --explore: generated schedules run against the user's client as
// scenarios, each unsafe one run again (a failure that does not come back
// is flaky) and shrunk, re-running the client, until no smaller schedule
// fails. The judge is the matrix's.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
)

// Shard is part I of N of the work, numbered from 1: the schedules (and
// matrix rows) whose index modulo N is I-1.
type Shard struct{ I, N int }

// Has reports whether the shard takes the item at index i.
func (s Shard) Has(i int) bool { return s.N <= 1 || i%s.N == s.I-1 }

// String is the shard as --shard takes it: "2/4"; "" for the whole.
func (s Shard) String() string {
	if s.N <= 1 {
		return ""
	}
	return strconv.Itoa(s.I) + "/" + strconv.Itoa(s.N)
}

// ParseShard reads --shard I/N.
func ParseShard(v string) (Shard, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(v), "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || n > 1024 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("shard %q: give I/N with 1 ≤ I ≤ N ≤ 1024, e.g. 2/4 for the second of four CI jobs", v)
	}
	return Shard{I: i, N: n}, nil
}

// ExploreConfig is what a search is asked to do.
type ExploreConfig struct {
	// Count is how many schedules to draw; For, when set, stops drawing
	// once it has passed (a Count of 0 with For draws until then).
	Count int
	For   time.Duration
	Seed  uint64
	Shard Shard
	// FailOnUnsettled fails the search on an unsettled schedule too.
	FailOnUnsettled bool
	// MaxHangs stops the search after this many schedules on which the
	// client hung (0: DefaultMaxHangs).
	MaxHangs int
	// ShrinkRuns bounds the client runs one failure's shrinking may take
	// (0: DefaultShrinkRuns; below 0: no rerun and no shrinking, each
	// failure reported as drawn).
	ShrinkRuns int
	// Missions names the folder the shrunk missions go to, for the
	// commands the report prints; "" prints them for a folder named
	// explore-SEED.
	Missions string
}

// Defaults of a search.
const (
	DefaultMaxHangs   = 3
	DefaultShrinkRuns = 64
	// MaxSchedules bounds --explore.
	MaxSchedules = 1_000_000
)

// Exploration is what a search adds to the report.
type Exploration struct {
	Seed uint64 `json:"seed"`
	// Asked is --explore N (0 when --for alone bounded it); Shard the
	// part run, "" for the whole.
	Asked int    `json:"asked"`
	Shard string `json:"shard,omitempty"`
	// Ran counts the schedules run to their end; Passed, Unsettled and
	// the failures split them.
	Ran       int       `json:"ran"`
	Passed    int       `json:"passed"`
	Unsettled []string  `json:"unsettled"`
	Failures  []Failure `json:"failures"`
	Flaky     []Flaky   `json:"flaky"`
	// ShrinkRuns counts the client runs shrinking took.
	ShrinkRuns int `json:"shrink_runs"`
	// PerSecond is schedules run per second of wall time, shrinking
	// left out; ShrinkMillis is the time shrinking took.
	PerSecond    float64 `json:"per_second"`
	SearchMillis int64   `json:"search_ms"`
	ShrinkMillis int64   `json:"shrink_ms"`
	// Stopped says why the search ended before it drew every schedule
	// asked for ("" when it did not).
	Stopped         string `json:"stopped,omitempty"`
	FailOnUnsettled bool   `json:"fail_on_unsettled,omitempty"`
	// HungStop: the search stopped because the client hung on
	// MaxHangs schedules, which fails it.
	HungStop bool `json:"hung_stop,omitempty"`
	// Out is the folder the shrunk missions were written to (--out), ""
	// when they were not.
	Out string `json:"out,omitempty"`
}

// Failure is one distinct unsafe schedule: the schedules that shrank to
// it, the smallest schedule that still fails, and how to run it again.
type Failure struct {
	// Found lists the generated schedules that shrank to this one.
	Found []string `json:"found"`
	// Mission is the shrunk schedule, the mission file --out holds.
	Mission *missions.Mission `json:"mission"`
	// Plays is what it plays, in words; Why the grade's reason on it.
	Plays string `json:"plays"`
	Why   string `json:"why"`
	// Reproduce is the command that plays it against the client again;
	// Lab the one that opens it in the lab.
	Reproduce string `json:"reproduce"`
	Lab       string `json:"lab"`
	// Minimal: every smaller schedule passed (false when the shrinking
	// ran out of runs first).
	Minimal bool `json:"minimal"`
}

// Flaky is a schedule that failed and then passed when run again.
type Flaky struct {
	Schedule string `json:"schedule"`
	First    string `json:"first"`
	Again    string `json:"again"`
}

// Failed reports whether the search found what fails it: a failure that
// came back, an unsettled schedule under --fail-on unsettled, a client
// that hung until the search stopped, or one that passed no schedule at
// all (a search that ran none shows nothing either).
func (e *Exploration) Failed() bool {
	return len(e.Failures) > 0 || (e.FailOnUnsettled && len(e.Unsettled) > 0) || e.HungStop || e.Passed == 0
}

// Explore draws schedules, runs each against the client as a scenario,
// and shrinks every unsafe one. Rows holds each schedule run, in the order
// drawn. When ctx ends (Ctrl-C), the search stops, every client and
// provider is released, and the report holds what ended.
func Explore(ctx context.Context, cfg Config, ex ExploreConfig) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch {
	case ex.Count < 0 || ex.Count > MaxSchedules:
		return nil, fmt.Errorf("explore %d: give a number of schedules from 1 to %d", ex.Count, MaxSchedules)
	case ex.Count == 0 && ex.For <= 0:
		return nil, errors.New("explore: give a number of schedules from 1, or a duration with --for")
	}
	if ex.MaxHangs == 0 {
		ex.MaxHangs = DefaultMaxHangs
	}
	if ex.ShrinkRuns == 0 {
		ex.ShrinkRuns = DefaultShrinkRuns
	}
	cfg = cfg.withDefaults()
	began := time.Now()
	rep := &Report{
		Command: cfg.Command, Transport: cfg.transport(), MCPRevision: cfg.MCPRevision, Provider: providerID(cfg.Provider), Rows: []Row{},
		TickMillis: cfg.Tick.Milliseconds(), RequestTimeoutMillis: cfg.RequestTimeout().Milliseconds(), TimeoutMillis: cfg.Timeout.Milliseconds(),
	}
	x := &Exploration{Seed: ex.Seed, Asked: ex.Count, Shard: ex.Shard.String(), Unsettled: []string{}, Failures: []Failure{}, Flaky: []Flaky{}, FailOnUnsettled: ex.FailOnUnsettled, Out: ex.Missions}
	rep.Explore = x
	limit := ex.Count
	if limit == 0 {
		limit = MaxSchedules
	}
	var deadline time.Time
	if ex.For > 0 {
		deadline = began.Add(ex.For)
	}
	slots := cfg.slots()
	hangs := 0
	var searchTime time.Duration
	next := 0
	for next < limit && x.Stopped == "" {
		if ctx.Err() != nil {
			x.Stopped = "interrupted"
			break
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			x.Stopped = fmt.Sprintf("--for %v ran out", ex.For)
			break
		}
		// A batch of schedules, four times as many as run at once: they
		// stream through the slots, so that a slow one holds up only its
		// own slot, and the search looks at the hangs and the clock
		// between batches. The first batch, and every one after a hang,
		// is as many as run at once, so that a hanging client stops the
		// search soon.
		size := 4 * slots
		if x.Ran == 0 || hangs > 0 {
			size = slots
		}
		var batch []*Scenario
		for ; next < limit && len(batch) < size; next++ {
			if !ex.Shard.Has(next) {
				continue
			}
			sc, err := FromMission(generateUnder(cfg.Provider, ex.Seed, next))
			if err != nil {
				return nil, fmt.Errorf("schedule %d of seed %d: %w", next, ex.Seed, err)
			}
			batch = append(batch, sc)
		}
		t0 := time.Now()
		bctx, stop := ctx, context.CancelFunc(func() {})
		if !deadline.IsZero() {
			// --for ends the schedules still running too: they are not
			// counted.
			bctx, stop = context.WithDeadline(ctx, deadline)
		}
		rows := runRows(bctx, cfg, batch)
		stop()
		searchTime += time.Since(t0)
		if err := unstartable(&Report{Command: cfg.Command, Rows: rows}); err != nil {
			return nil, err
		}
		for k, row := range rows {
			if !row.Graded() {
				continue
			}
			rep.Rows = append(rep.Rows, row)
			x.Ran++
			if row.Hung {
				hangs++
			}
			switch row.Grade {
			case GradePass:
				x.Passed++
			case GradeUnsettled:
				x.Unsettled = append(x.Unsettled, row.Scenario)
			case GradeUnsafe:
				sctx, stop := ctx, func() {}
				if !deadline.IsZero() {
					// --for bounds the shrinking too.
					sctx, stop = context.WithDeadline(ctx, deadline)
				}
				x.consider(sctx, cfg, ex, batch[k], row)
				stop()
			}
		}
		if hangs >= ex.MaxHangs {
			x.HungStop = true
			x.Stopped = fmt.Sprintf("the client hung on %s; a client that hangs on most schedules is graded by the matrix first (replaylab conform -- COMMAND)", termtext.Plural(hangs, "schedule"))
		}
	}
	if ctx.Err() != nil {
		x.Stopped = "interrupted"
		rep.Interrupted = true
	}
	rep.Millis = time.Since(began).Milliseconds()
	x.SearchMillis = searchTime.Milliseconds()
	if searchTime > 0 {
		x.PerSecond = float64(x.Ran) / searchTime.Seconds()
	}
	for _, row := range rep.Rows {
		if row.Grade == GradePass {
			rep.Passed++
		}
	}
	x.sortFailures()
	return rep, nil
}

// consider runs an unsafe schedule again: a failure that does not come
// back is flaky; one that does is shrunk, and kept unless an earlier one
// shrank to the same schedule.
func (x *Exploration) consider(ctx context.Context, cfg Config, ex ExploreConfig, sc *Scenario, row Row) {
	t0 := time.Now()
	defer func() { x.ShrinkMillis += time.Since(t0).Milliseconds() }()
	if ex.ShrinkRuns < 0 {
		// Found, not shrunk: the schedule as drawn.
		x.Failures = append(x.Failures, failureOf(cfg, ex, sc.Mission, row.Why, sc.ID(), false))
		return
	}
	again := runScenario(ctx, cfg, sc)
	x.ShrinkRuns++
	switch {
	case !again.Graded():
		// Stopped before it could run again: kept as found.
		x.Failures = append(x.Failures, failureOf(cfg, ex, sc.Mission, row.Why, sc.ID(), false))
		return
	case again.Grade != GradeUnsafe:
		x.Flaky = append(x.Flaky, Flaky{Schedule: sc.ID(), First: string(row.Grade) + ": " + row.Why, Again: string(again.Grade) + ": " + again.Why})
		return
	}
	m, last, runs, minimal := shrink(ctx, cfg, sc.Mission, again, ex.ShrinkRuns)
	x.ShrinkRuns += runs
	m, rename := renumbered(m)
	last.Why = rename.Replace(last.Why)
	Complete(m, fmt.Sprintf("A client failed this schedule: found by replaylab conform --explore (seed %d, schedule %s) and shrunk to the smallest schedule that still fails", ex.Seed, strings.TrimPrefix(sc.ID(), fmt.Sprintf("explore-%d-", ex.Seed))))
	m.Title = fmt.Sprintf("Found by conform --explore, seed %d", ex.Seed)
	x.addFailure(failureOf(cfg, ex, m, last.Why, sc.ID(), minimal))
}

// failureOf is a failure of mission m, found by the schedule of that id,
// with the commands that play it again from the folder --out writes.
func failureOf(cfg Config, ex ExploreConfig, m *missions.Mission, why, found string, minimal bool) Failure {
	dir := "DIR"
	if ex.Missions != "" {
		dir = termtext.ShellWord(ex.Missions)
	}
	again := fmt.Sprintf("replaylab conform --missions %s --scenario %s --tick %v", dir, m.ID, cfg.Tick)
	if cfg.Timeout != DefaultTimeoutTicks*cfg.Tick {
		again += fmt.Sprintf(" --timeout %v", cfg.Timeout)
	}
	if cfg.MCP {
		again += " --mcp"
	}
	if cfg.MCPRevision != "" {
		again += " --mcp-revision " + cfg.MCPRevision
	}
	return Failure{Found: []string{found}, Mission: m, Plays: plays(m), Why: why, Minimal: minimal,
		Reproduce: again + " -- " + commandWords(cfg.Command),
		Lab:       fmt.Sprintf("replaylab lab --missions %s %s", dir, m.ID)}
}

// shrink makes a failing schedule smaller, re-running the client on each
// candidate (as many at once as rows run), until no smaller one fails or
// the runs are spent. It returns the smallest failing schedule, its row,
// the runs it took, and whether every smaller schedule passed.
func shrink(ctx context.Context, cfg Config, m *missions.Mission, row Row, budget int) (*missions.Mission, Row, int, bool) {
	runs := 0
	best := clone(m)
	tried := map[string]bool{}
	for ctx.Err() == nil {
		var cands []*Scenario
		// Two candidates that play alike for a live client are one.
		for _, c := range Smaller(best) {
			if sc, err := FromMission(c); err == nil && !tried[sc.Plays()] {
				tried[sc.Plays()] = true
				cands = append(cands, sc)
			}
		}
		if len(cands) == 0 {
			return best, row, runs, true
		}
		found, skipped := false, false
		for len(cands) > 0 && !found && ctx.Err() == nil {
			// The first candidate, the largest cut, alone: it fails
			// more often than not, and a batch beside it would be
			// spent for nothing. The rest go as many at once as rows.
			n := min(len(cands), cfg.slots(), budget-runs)
			if runs == 0 || len(cands) == len(Smaller(best)) {
				n = min(n, 1)
			}
			if n <= 0 {
				return best, row, runs, false
			}
			rows := runRows(ctx, cfg, cands[:n])
			runs += n
			for k, r := range rows {
				// The first of the batch that fails, in the order the
				// candidates come: the most reduction first. It is
				// taken when it fails again, so that the schedule
				// handed over fails on its own, not by a slow moment.
				if r.Grade != GradeUnsafe {
					continue
				}
				if runs >= budget {
					// Failed once, not run again: not ruled out.
					skipped = true
					continue
				}
				again := runScenario(ctx, cfg, cands[k])
				runs++
				if again.Grade == GradeUnsafe {
					best, row, found = cands[k].Mission, again, true
					break
				}
			}
			cands = cands[n:]
		}
		if !found {
			return best, row, runs, ctx.Err() == nil && !skipped && len(cands) == 0
		}
	}
	return best, row, runs, false
}

// runRows plays scenarios, as many at once as the configuration lets,
// and returns their rows in the order given.
func runRows(ctx context.Context, cfg Config, scenarios []*Scenario) []Row {
	rows := make([]Row, len(scenarios))
	for i, sc := range scenarios {
		rows[i] = Row{Scenario: sc.ID(), Title: sc.Mission.Title, Grade: GradeNotRun,
			Why: "Did not run: conform was interrupted first.", Intents: blankIntents(sc), Runs: []ClientRun{}}
	}
	sem := make(chan struct{}, max(cfg.slots(), 1))
	var wg sync.WaitGroup
start:
	for i, sc := range scenarios {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			break start
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rows[i] = runScenario(ctx, cfg, sc)
		}()
	}
	wg.Wait()
	return rows
}

// flaky reports whether the schedule of that id failed only once.
func (x *Exploration) flaky(id string) bool {
	return slices.ContainsFunc(x.Flaky, func(f Flaky) bool { return f.Schedule == id })
}

// shrunkWords says what the schedule of that id shrank to, and how to
// run that again, for JUnit's failure text.
func (x *Exploration) shrunkWords(id string) string {
	for _, f := range x.Failures {
		if slices.Contains(f.Found, id) {
			return fmt.Sprintf("shrunk to %s: %s\nagain: %s\nlab: %s\n", f.Mission.ID, f.Plays, f.Reproduce, f.Lab)
		}
	}
	return ""
}

// renumbered names a shrunk schedule's intents refund-1, refund-2, … in
// order, so that two failures alike but for which intent was left are
// told as one.
func renumbered(m *missions.Mission) (*missions.Mission, *strings.Replacer) {
	c := clone(m)
	names := map[string]string{}
	var pairs []string
	for k := range c.Intents {
		names[c.Intents[k].ID] = "refund-" + strconv.Itoa(k+1)
		pairs = append(pairs, c.Intents[k].ID, names[c.Intents[k].ID])
		c.Intents[k].ID = names[c.Intents[k].ID]
	}
	for k := range c.Schedule {
		st := &c.Schedule[k]
		if st.Attempt != "" {
			st.Attempt = names[st.Attempt]
		}
		if st.Read != "" {
			st.Read = names[st.Read]
		}
		for j := range st.Together {
			st.Together[j].Attempt = names[st.Together[j].Attempt]
		}
	}
	return c, strings.NewReplacer(pairs...)
}

// generateUnder is schedule i of the seed, played under p where one is
// given: the mission names the profile, so the shrunk failure written out
// is opened under it again. A profile file has no name a mission could
// carry: conform refuses it with --explore.
func generateUnder(p *ledger.Profile, seed uint64, i int) *missions.Mission {
	m := Generate(seed, i)
	if p != nil && providers.Builtin(p.ID) != nil {
		m.Contract = providers.CaseName(p)
	}
	return m
}
