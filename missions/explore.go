package missions

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
)

// The explorer runs every fault schedule of a mission's intents up to a
// depth, breadth first, and finds for each bad verdict the shortest
// schedule that reaches it. A schedule is a sequence of moves; a move is
// one attempt of one intent meeting one fixture of the alphabet, after
// which the clock moves a tick, as an attempt step of a mission does. At
// the end of a schedule the clock settles and the caller closes its books,
// as at the end of a mission.
//
// States that two schedules reach alike (the same ledger and the same
// caller state, by a hash of their encodings) are run once: their futures
// are the same. Every schedule is still counted, through the number of
// schedules that reach each state.

// BadVerdicts are the verdicts the explorer hunts: outcomes where the
// ledger and the caller disagree without a person being told.
var BadVerdicts = []Verdict{Duplicate, HiddenEffect, Phantom}

// CoreFixtures are the four fixtures every exploration tries by default.
var CoreFixtures = []Fixture{FailureBeforeCommit, TimeoutAfterCommit, Success, TimeoutBeforeCommit}

// Exploration bounds.
const (
	MaxExploreDepth     = 12
	DefaultExploreDepth = 3
	DefaultMaxSchedules = 1_000_000
	MaxSchedulesBound   = 1 << 40
	// MaxStateBytes bounds the memory the states of two levels may take
	// (an estimate from the mission's size): a wide mission stops at it
	// rather than exhaust the machine.
	MaxStateBytes          = 512 << 20
	defaultExploreDelay    = 2
	progressEverySchedules = 1 << 14
)

// ExploreOptions say what to explore.
type ExploreOptions struct {
	// Alphabet is the fixtures a move may meet, each with its parameters
	// (a late_commit's delay, a pending's delay and resolve).
	Alphabet []Step
	// Depth is the most attempts a schedule makes per intent.
	Depth int
	// MaxSchedules stops the exploration once this many schedules are
	// covered.
	MaxSchedules int64
	// MaxStateBytes stops it once the states it holds would take more
	// memory than this (an estimate); 0 means MaxStateBytes.
	MaxStateBytes int64
	// Settings are the settings to explore under, each on its own.
	Settings []Settings
	// Progress, when set, is called now and then with the report so far;
	// returning false stops the exploration (as Ctrl-C does).
	Progress func(Progress) bool

	// noDedupe runs every schedule on its own, for tests of the dedupe.
	noDedupe bool
}

// Progress is where an exploration is.
type Progress struct {
	Setting   int // index into Settings
	Settings  int // how many there are
	Level     int
	Schedules int64
	States    int
}

// DefaultAlphabet is the mission's own fixtures, with their parameters as
// the mission gives them, then the core four.
func DefaultAlphabet(m *Mission) []Step {
	var out []Step
	seen := map[Fixture]bool{}
	add := func(st Step) {
		if seen[st.Fixture] {
			return
		}
		seen[st.Fixture] = true
		out = append(out, Step{Fixture: st.Fixture, Delay: st.Delay, Resolve: st.Resolve})
	}
	for _, st := range m.Schedule {
		if st.Attempt != "" {
			add(st)
		}
		for _, t := range st.Together {
			add(t)
		}
	}
	for _, f := range CoreFixtures {
		add(Step{Fixture: f})
	}
	return out
}

// AlphabetStep is fixture f as a move: with the parameters the mission's
// own steps give it, or, for late_commit and pending where the mission has
// none, a delay of 2 ticks (and, for pending, ending succeeded).
func AlphabetStep(m *Mission, f Fixture) Step {
	for _, st := range DefaultAlphabet(m) {
		if st.Fixture == f {
			return st
		}
	}
	st := Step{Fixture: f}
	switch f {
	case LateCommit:
		st.Delay = defaultExploreDelay
	case PendingFixture:
		st.Delay, st.Resolve = defaultExploreDelay, ledger.Succeeded
	}
	return st
}

// Move is one attempt of a schedule: intent Intent meets Alphabet[Fixture].
type Move struct {
	Intent  int
	Fixture int
}

// Counterexample is the shortest schedule found to reach a bad verdict.
type Counterexample struct {
	Verdict Verdict
	// Intent is the intent that ends with the verdict.
	Intent string
	Moves  []Move
	// Outcome is the run's outcome at the end of the schedule.
	Effects   int
	Succeeded int
	Verdicts  map[string]Verdict
}

// SettingReport is what the exploration found under one setting.
type SettingReport struct {
	Settings Settings
	// Schedules counts the schedules covered, States the distinct states
	// run (after deduplication).
	Schedules int64
	States    int
	// Attempts counts the attempts the explorer played: one per child of
	// each distinct state.
	Attempts int64
	// Levels is how many moves deep the exploration is complete: every
	// schedule of up to that many attempts is covered.
	Levels int
	// Depth is the deepest per-intent depth complete: every schedule
	// with up to that many attempts per intent is covered.
	Depth int
	// Found holds the shortest counterexample for each bad verdict
	// reached, in the order of BadVerdicts.
	Found []Counterexample
	// Stopped says why the exploration ended before the depth asked, or
	// "" when it reached it.
	Stopped string
}

// Reached returns the counterexample for v, if the exploration found one.
func (r *SettingReport) Reached(v Verdict) (Counterexample, bool) {
	for _, c := range r.Found {
		if c.Verdict == v {
			return c, true
		}
	}
	return Counterexample{}, false
}

// Exploration is the whole report.
type Exploration struct {
	Mission  *Mission
	Alphabet []Step
	Depth    int
	Reports  []SettingReport
	// Settings is how many settings were asked for; Reports can hold fewer
	// when the exploration was interrupted.
	Settings int
	// Interrupted: Progress asked to stop.
	Interrupted bool
}

// Validate rejects options the explorer cannot run.
func (o ExploreOptions) Validate() error {
	if o.Depth < 1 || o.Depth > MaxExploreDepth {
		return fmt.Errorf("depth %d: must be from 1 to %d attempts per intent", o.Depth, MaxExploreDepth)
	}
	if len(o.Alphabet) == 0 {
		return fmt.Errorf("no fixtures to explore (accepted: %s)", termtext.JoinWords(Fixtures))
	}
	for _, st := range o.Alphabet {
		if _, err := ParseFixture(string(st.Fixture)); err != nil {
			return err
		}
	}
	if o.MaxSchedules < 1 {
		return fmt.Errorf("max schedules %d: must be at least 1", o.MaxSchedules)
	}
	if len(o.Settings) == 0 {
		return fmt.Errorf("no settings to explore under")
	}
	for _, s := range o.Settings {
		if err := s.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Explore runs the exploration. It is pure: what it does depends on its
// arguments only, and Progress is the driver's one hook.
func Explore(m *Mission, o ExploreOptions) (*Exploration, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("mission %s: %w", m.ID, err)
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	x := &Exploration{Mission: m, Alphabet: o.Alphabet, Depth: o.Depth, Settings: len(o.Settings)}
	for i, s := range o.Settings {
		e, err := newExplorer(m, s, o, i)
		if err != nil {
			return nil, err
		}
		rep := e.run()
		x.Reports = append(x.Reports, rep)
		if e.interrupted {
			x.Interrupted = true
			break
		}
	}
	return x, nil
}

// node is one distinct state of a level, with how many schedules reach it
// and the move from its representative parent.
type node struct {
	parent int32
	move   Move
	mult   int64
}

// state is a branch of the world: the ledger, the caller and whether the
// caller process is down.
type state struct {
	led    *ledger.Ledger
	caller Caller
	down   bool
	tally  tally
}

type explorer struct {
	// step is the move being played, which the runner points at.
	step     Step
	m        *Mission
	s        Settings
	o        ExploreOptions
	setting  int
	w        *Runner
	intents  int
	levels   [][]node
	cur, nxt []*state
	pool     []*state
	scratch  *state
	eval     *state
	seen     map[[2]uint64]int32
	buf      []byte
	rep      SettingReport
	nextTick int64
	chunk    int

	interrupted bool
}

func newExplorer(m *Mission, s Settings, o ExploreOptions, setting int) (*explorer, error) {
	// The search draws the creates' fixtures; the reads are answered as
	// the ledger stands, as in the counterexamples it writes, which list
	// no reads (conform --explore draws faults on reads).
	clean := *m
	clean.Reads = nil
	w, err := NewRunner(&clean, s)
	if err != nil {
		return nil, err
	}
	w.quiet = true
	e := &explorer{m: m, s: s, o: o, setting: setting, w: w, intents: len(m.Intents), seen: map[[2]uint64]int32{}}
	e.rep.Settings = s
	root := e.newState()
	root.led.CopyFrom(w.led)
	root.caller.CopyFrom(w.caller)
	root.tally.copyFrom(&w.tally)
	for i := range m.Intents {
		in := root.caller.Intent(i)
		if s.MaxAttempts == 0 {
			// No turn of a schedule is ever refused for budget: a
			// schedule offers as many turns as it makes.
			in.Budget = o.Depth
		}
	}
	e.cur = append(e.cur, root)
	e.levels = append(e.levels, []node{{parent: -1, mult: 1}})
	e.scratch, e.eval = e.newState(), e.newState()
	e.nextTick = progressEverySchedules
	return e, nil
}

func (e *explorer) newState() *state {
	if n := len(e.pool); n > 0 {
		st := e.pool[n-1]
		e.pool = e.pool[:n-1]
		return st
	}
	// States come a chunk at a time, their memory from a few shared
	// allocations, so that storing a new state allocates next to nothing.
	// A chunk doubles each time, from 4 to 64: a small exploration pays
	// little for room it does not use.
	chunk := min(max(4, 2*e.chunk), 64)
	e.chunk = chunk
	room := e.room()
	leds := ledger.Batch(e.w.led.Config(), chunk, room)
	callers := cloneBatch(e.w.caller, chunk)
	states := make([]state, chunk)
	live := make([]int, chunk*e.intents)
	for i := range states {
		st := &states[i]
		st.led, st.caller = leds[i], callers[i]
		st.tally.live = live[i*e.intents : (i+1)*e.intents : (i+1)*e.intents]
		if i > 0 {
			e.pool = append(e.pool, st)
		}
	}
	return &states[0]
}

func (st *state) copyFrom(src *state) {
	st.led.CopyFrom(src.led)
	st.caller.CopyFrom(src.caller)
	st.down = src.down
	st.tally.copyFrom(&src.tally)
}

// use points the runner at a branch; done takes back what moved.
func (e *explorer) use(st *state) {
	e.w.led, e.w.caller, e.w.down, e.w.tally = st.led, st.caller, st.down, st.tally
}

func (e *explorer) done(st *state) { st.down, st.tally = e.w.down, e.w.tally }

// apply plays one move on the branch the runner points at.
func (e *explorer) apply(st *state, mv Move) {
	e.use(st)
	e.step = e.o.Alphabet[mv.Fixture]
	e.step.Attempt = e.m.Intents[mv.Intent].ID
	if e.w.down {
		e.w.down = false
		e.w.caller.Restarted(e.w)
	}
	e.w.cur = &e.step
	e.w.caller.Turn(e.w, mv.Intent, Turn{Ahead: 1})
	e.w.tick(1)
	e.done(st)
}

// hash is a 128-bit hash of the branch's encoding: two states are taken
// as one only when all 128 bits agree.
func (e *explorer) hash(st *state, counts []int, moved int) [2]uint64 {
	b := st.led.AppendState(e.buf[:0])
	b = st.caller.AppendState(b)
	// The moves each intent has left are part of a state: two schedules
	// alike but for them have different futures.
	for i, n := range counts {
		if i == moved {
			n++
		}
		b = appendU(b, uint64(n))
	}
	if st.down {
		b = append(b, 1)
	}
	e.buf = b
	return hash128(b)
}

// outcome settles a copy of the branch and judges every intent.
func (e *explorer) outcome(st *state, verdicts []Verdict) (effects, succeeded int) {
	if _, naive := st.caller.(*naiveCaller); naive && !st.led.Busy() {
		// Nothing left to land, and the naive loop closes no books:
		// the state is its own end.
		for i := range verdicts {
			verdicts[i] = Judge(st.caller.Belief(i), st.tally.live[i])
		}
		return st.led.Effects(), st.tally.succeeded
	}
	e.eval.copyFrom(st)
	e.use(e.eval)
	for guard := 0; guard < 10000 && e.w.led.Busy(); guard++ {
		e.w.tick(1)
	}
	e.w.caller.Finish(e.w)
	e.done(e.eval)
	for i := range verdicts {
		verdicts[i] = Judge(e.w.caller.Belief(i), e.eval.tally.live[i])
	}
	return e.w.led.Effects(), e.eval.tally.succeeded
}

// used counts an intent's moves on the path to a node.
func (e *explorer) used(level int, idx int32, intent int) int {
	n := 0
	for l := level; l > 0; l-- {
		nd := e.levels[l][idx]
		if nd.move.Intent == intent {
			n++
		}
		idx = nd.parent
	}
	return n
}

func (e *explorer) path(level int, idx int32, last Move) []Move {
	moves := make([]Move, level+1)
	moves[level] = last
	for l := level; l > 0; l-- {
		nd := e.levels[l][idx]
		moves[l-1] = nd.move
		idx = nd.parent
	}
	return moves
}

func (e *explorer) run() SettingReport {
	verdicts := make([]Verdict, e.intents)
	counts := make([]int, e.intents)
	maxLevel := e.o.Depth * e.intents
	for level := 0; level < maxLevel; level++ {
		clear(e.seen)
		var next []node
		e.nxt = e.nxt[:0]
		for pi, parent := range e.cur {
			pn := e.levels[level][pi]
			for i := range counts {
				counts[i] = e.used(level, int32(pi), i)
			}
			for intent := 0; intent < e.intents; intent++ {
				if counts[intent] >= e.o.Depth {
					continue
				}
				for f := range e.o.Alphabet {
					mv := Move{Intent: intent, Fixture: f}
					e.scratch.copyFrom(parent)
					e.apply(e.scratch, mv)
					e.rep.Attempts++
					e.rep.Schedules += pn.mult
					h := e.hash(e.scratch, counts, intent)
					if j, ok := e.seen[h]; ok && !e.o.noDedupe {
						next[j].mult += pn.mult
					} else {
						e.seen[h] = int32(len(next))
						next = append(next, node{parent: int32(pi), move: mv, mult: pn.mult})
						e.nxt = append(e.nxt, e.scratch)
						e.scratch = e.newState()
						e.rep.States++
						e.judgeNew(level, int32(pi), mv, e.nxt[len(e.nxt)-1], verdicts)
					}
					if e.rep.Schedules >= e.nextTick {
						e.nextTick = e.rep.Schedules + progressEverySchedules
						if e.o.Progress != nil && !e.o.Progress(Progress{Setting: e.setting, Settings: len(e.o.Settings), Level: level + 1, Schedules: e.rep.Schedules, States: e.rep.States}) {
							e.interrupted = true
							e.rep.Stopped = "interrupted"
							return e.rep
						}
					}
					if e.rep.Schedules >= e.o.MaxSchedules {
						e.rep.Stopped = fmt.Sprintf("stopped at the bound of %s schedules, in level %d", termtext.Thousands(e.o.MaxSchedules), level+1)
						return e.rep
					}
					if bound := e.memoryBound(); int64(len(e.cur)+len(e.nxt))*e.stateBytes(level+1) > bound {
						e.rep.Stopped = fmt.Sprintf("stopped at the memory bound (%s of states), in level %d", bytesWords(bound), level+1)
						return e.rep
					}
				}
			}
		}
		if len(next) == 0 {
			break
		}
		e.levels = append(e.levels, next)
		e.pool = append(e.pool, e.cur...)
		e.cur, e.nxt = e.nxt, e.cur[:0]
		e.rep.Levels = level + 1
		e.rep.Depth = e.rep.Levels / e.intents
	}
	e.rep.Depth = e.o.Depth
	return e.rep
}

// room is how many objects, records and queued entries a state's ledger
// holds before it grows on its own: enough for a shallow schedule, small
// enough that a wide exploration does not pay for room it never uses.
func (e *explorer) room() int { return min(e.o.Depth*e.intents+2, 8) }

// stateBytes estimates what one stored state takes after level attempts:
// the caller's record of each intent, and room for an object, a record and
// three queue entries per attempt (about 256 bytes), at least the room the
// state was made with.
func (e *explorer) stateBytes(level int) int64 {
	return int64(512 + 256*e.intents + 256*max(e.room(), level+1))
}

func (e *explorer) memoryBound() int64 {
	if e.o.MaxStateBytes > 0 {
		return e.o.MaxStateBytes
	}
	return MaxStateBytes
}

func bytesWords(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", max(1, n>>10))
}

// judgeNew records the first, and so shortest, schedule that reaches each
// bad verdict.
func (e *explorer) judgeNew(level int, parent int32, mv Move, st *state, verdicts []Verdict) {
	effects, succeeded := e.outcome(st, verdicts)
	for _, bad := range BadVerdicts {
		have, ok := e.rep.Reached(bad)
		if ok && len(have.Moves) <= level {
			continue // one shorter is known
		}
		for i, v := range verdicts {
			if v != bad {
				continue
			}
			moves := e.path(level, parent, mv)
			if ok && e.faults(moves) >= e.faults(have.Moves) {
				break
			}
			c := Counterexample{Verdict: bad, Intent: e.m.Intents[i].ID, Moves: moves, Effects: effects, Succeeded: succeeded, Verdicts: map[string]Verdict{}}
			for j, v := range verdicts {
				c.Verdicts[e.m.Intents[j].ID] = v
			}
			if ok {
				// As short, with fewer faults: the plainer story wins.
				for k := range e.rep.Found {
					if e.rep.Found[k].Verdict == bad {
						e.rep.Found[k] = c
					}
				}
			} else {
				e.rep.Found = append(e.rep.Found, c)
			}
			break
		}
	}
	// Keep Found in the order of BadVerdicts.
	for i := 1; i < len(e.rep.Found); i++ {
		for j := i; j > 0 && verdictOrder(e.rep.Found[j].Verdict) < verdictOrder(e.rep.Found[j-1].Verdict); j-- {
			e.rep.Found[j], e.rep.Found[j-1] = e.rep.Found[j-1], e.rep.Found[j]
		}
	}
}

// faults counts the moves of a schedule that meet something other than a
// success.
func (e *explorer) faults(moves []Move) int {
	n := 0
	for _, mv := range moves {
		if e.o.Alphabet[mv.Fixture].Fixture != Success {
			n++
		}
	}
	return n
}

func verdictOrder(v Verdict) int {
	for i, b := range BadVerdicts {
		if b == v {
			return i
		}
	}
	return len(BadVerdicts)
}

// Mission turns a counterexample into a mission a person can open in the
// lab: the explored mission's intents, the schedule's attempts, and the
// outcome it reaches expected under the setting explored.
func (x *Exploration) CounterMission(r *SettingReport, c Counterexample) *Mission {
	m := x.Mission
	out := &Mission{
		ID:        counterID(m.ID, r.Settings, c.Verdict),
		Title:     fmt.Sprintf("%s: %s in %d attempts", m.Title, c.Verdict, len(c.Moves)),
		Contract:  r.Settings.Contract,
		Retention: m.Retention,
		KeySource: r.Settings.KeySource,
	}
	// The intents the schedule attempts, in the mission's order: a
	// mission attempts every intent it declares.
	used := map[int]bool{}
	for _, mv := range c.Moves {
		used[mv.Intent] = true
	}
	verdicts := map[string]Verdict{}
	for i, in := range m.Intents {
		if used[i] {
			out.Intents = append(out.Intents, in)
			verdicts[in.ID] = c.Verdicts[in.ID]
		}
	}
	var fx []string
	for _, mv := range c.Moves {
		st := x.Alphabet[mv.Fixture]
		st.Attempt = m.Intents[mv.Intent].ID
		out.Schedule = append(out.Schedule, st)
		fx = append(fx, string(st.Fixture))
	}
	out.Goal = fmt.Sprintf("Found by replaylab explore on mission %s: under %s, the schedule %s is the shortest that ends with %s for %s. Open it with %s to see it happen.",
		m.ID, SettingsWords(r.Settings), strings.Join(fx, ", "), c.Verdict, c.Intent, strings.Join(CounterFlags(r.Settings), " "))
	o := SettingsOverrides(r.Settings)
	e := Expectation{When: o, Effects: c.Effects, Verdicts: verdicts}
	succeeded := c.Succeeded
	e.Succeeded = &succeeded
	out.Expect = []Expectation{e}
	return out
}

// counterID names a counterexample mission: the mission's id, then the
// verdict and the setting, which tell the counterexamples of one
// exploration apart. A long mission id is cut, never the part after it.
func counterID(mission string, s Settings, v Verdict) string {
	tail := fmt.Sprintf("-%s-keys-%s-%s-%s", strings.ReplaceAll(string(v), "_", "-"), OnOff(s.StableKeys), s.Policy, s.Contract)
	if len(mission)+len(tail) > 64 {
		mission = strings.TrimRight(mission[:64-len(tail)], "-")
	}
	return mission + tail
}

// CounterFile is a counterexample as a mission file: its name, its id,
// its YAML, and the flags that open it under the settings it was found
// under.
type CounterFile struct {
	Name, ID string
	Data     []byte
	Flags    []string
}

// CounterFiles are the exploration's counterexamples as mission files,
// each named after its id; two that would share a name are refused.
func (x *Exploration) CounterFiles() ([]CounterFile, error) {
	var out []CounterFile
	seen := map[string]bool{}
	for i := range x.Reports {
		r := &x.Reports[i]
		for _, c := range r.Found {
			m := x.CounterMission(r, c)
			data, err := Format(m)
			if err != nil {
				return nil, err
			}
			name := m.ID + ".yaml"
			if seen[name] {
				return nil, fmt.Errorf("two counterexamples would be written to %s", name)
			}
			seen[name] = true
			out = append(out, CounterFile{Name: name, ID: m.ID, Data: data, Flags: CounterFlags(r.Settings)})
		}
	}
	return out, nil
}

// CounterFlags are the command-line flags that run a counterexample
// mission under the setting it was found in: the caller settings a mission
// file cannot make its own.
func CounterFlags(s Settings) []string {
	return Overrides{StableKeys: &s.StableKeys, Policy: &s.Policy}.Flags()
}

// SettingsProduct is every combination of the stable keys, policies and
// contracts given, in that order of nesting, as settings of m: what
// explore and conform run a mission under.
func (m *Mission) SettingsProduct(keys []bool, policies []Policy, contracts []ledger.Contract) []Settings {
	var out []Settings
	for _, k := range keys {
		for _, p := range policies {
			for _, c := range contracts {
				out = append(out, m.Settings(Overrides{StableKeys: &k, Policy: &p, Contract: &c}))
			}
		}
	}
	return out
}

// SettingsOverrides are the overrides that name every caller and provider
// setting of s.
func SettingsOverrides(s Settings) Overrides {
	stable, p, c, k := s.StableKeys, s.Policy, s.Contract, s.KeySource
	return Overrides{StableKeys: &stable, Policy: &p, Contract: &c, KeySource: &k}
}

// Fix is the cheapest setting change found to remove a bad verdict that a
// setting reaches: the settings nearest to it (fewest of stable keys,
// policy and contract changed) under which the exploration, to the same
// depth, found none.
type Fix struct {
	From    int // index into Reports
	Verdict Verdict
	// To lists the nearest settings without the verdict (indices into
	// Reports); empty when no setting explored removes it.
	To []int
}

// Fixes lists, for every bad verdict every setting reaches, its cheapest
// fix among the settings explored.
func (x *Exploration) Fixes() []Fix {
	var out []Fix
	for i := range x.Reports {
		from := &x.Reports[i]
		for _, c := range from.Found {
			f := Fix{From: i, Verdict: c.Verdict}
			best := 4
			for j := range x.Reports {
				to := &x.Reports[j]
				if j == i || to.Stopped != "" || to.Depth < from.Depth {
					continue
				}
				if _, bad := to.Reached(c.Verdict); bad {
					continue
				}
				d := settingDistance(from.Settings, to.Settings)
				switch {
				case d < best:
					best, f.To = d, []int{j}
				case d == best:
					f.To = append(f.To, j)
				}
			}
			out = append(out, f)
		}
	}
	return out
}

func settingDistance(a, b Settings) int {
	d := 0
	if a.StableKeys != b.StableKeys {
		d++
	}
	if a.Policy != b.Policy {
		d++
	}
	if a.Contract != b.Contract {
		d++
	}
	if a.KeySource != b.KeySource {
		d++
	}
	return d
}

// Change names what differs from a to b, e.g. "stable keys on" or
// "policy guarded, contract v2".
func Change(a, b Settings) string {
	var parts []string
	for _, f := range []Setting{SettingStableKeys, SettingPolicy, SettingContract, SettingKeySource} {
		if a.Words(f) != b.Words(f) {
			parts = append(parts, b.Words(f))
		}
	}
	return strings.Join(parts, ", ")
}

// hash128 hashes b eight bytes at a time into two 64-bit lanes with
// different multipliers, then mixes each lane (the finalizer of
// MurmurHash3). Deterministic: no seed from the process.
func hash128(b []byte) [2]uint64 {
	const (
		p1 = 0x9e3779b97f4a7c15
		p2 = 0xc2b2ae3d27d4eb4f
	)
	h1, h2 := uint64(len(b))*p1, uint64(len(b))^p2
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		h1 = bits.RotateLeft64((h1^w)*p1, 31)
		h2 = bits.RotateLeft64((h2^w)*p2, 27)
		b = b[8:]
	}
	var tail [8]byte
	copy(tail[:], b)
	w := binary.LittleEndian.Uint64(tail[:])
	h1 = fmix((h1 ^ w) * p1)
	h2 = fmix((h2^w)*p2 + h1)
	return [2]uint64{h1, h2}
}

func fmix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
