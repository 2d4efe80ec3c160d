package conform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// UnmarshalReport reads a report MarshalReport wrote (conform --json),
// refusing another document, another version, a field it does not know,
// anything after the report, and counts the report's own rows belie.
func UnmarshalReport(name string, data []byte) (*Report, error) {
	expected := "expected a report written by replaylab conform --json"
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return nil, fmt.Errorf("%s: the file is empty (%s)", name, expected)
	case trimmed[0] != '{':
		return nil, fmt.Errorf("%s: not a JSON object (%s)", name, expected)
	}
	var doc struct {
		Schema string `json:"schema"`
		*Report
	}
	doc.Report = &Report{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return nil, fmt.Errorf("%s: not JSON at byte %d: %v (%s)", name, syn.Offset, err, expected)
		case errors.As(err, &typ):
			return nil, fmt.Errorf("%s: field %s holds a JSON %s where a report has a %s (%s)", name, typ.Field, typ.Value, typ.Type, expected)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("%s: the report is cut short (%s)", name, expected)
		}
		return nil, fmt.Errorf("%s: %v (%s)", name, err, expected)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: more follows the report, at byte %d; give one report a file (%s)", name, dec.InputOffset(), expected)
	}
	if doc.Schema != SchemaID {
		return nil, fmt.Errorf("%s: schema %q is not a conform report (expected %q, as replaylab conform --json writes)", name, doc.Schema, SchemaID)
	}
	if err := doc.check(); err != nil {
		return nil, fmt.Errorf("%s: %w (%s)", name, err, expected)
	}
	return doc.Report, nil
}

// check holds a report read from a file to what conform writes: its
// rows graded with the grades there are, and its counts those of its
// rows.
func (r *Report) check() error {
	if len(r.Command) == 0 {
		return errors.New("the report has no command")
	}
	if r.Rows == nil {
		return errors.New("the report has no rows")
	}
	passed, na := 0, 0
	seen := map[string]bool{}
	for i, row := range r.Rows {
		switch row.Grade {
		case GradePass:
			passed++
		case GradeNA:
			na++
			if r.Provider == "" {
				return fmt.Errorf("row %d (%s): graded n/a, which only a run under --provider grades", i+1, row.Scenario)
			}
		case GradeUnsafe, GradeUnsettled, GradeNotRun:
		default:
			return fmt.Errorf("row %d (%s): unknown grade %q (accepted: pass, unsafe, unsettled, not_run, n/a)", i+1, row.Scenario, row.Grade)
		}
		if row.Scenario == "" || seen[row.Scenario] {
			return fmt.Errorf("row %d: scenario %q is empty or named twice", i+1, row.Scenario)
		}
		seen[row.Scenario] = true
	}
	if passed != r.Passed {
		return fmt.Errorf("passed is %d, but %d of its rows pass", r.Passed, passed)
	}
	if na != r.NA {
		return fmt.Errorf("n_a is %d, but %d of its rows are graded n/a", r.NA, na)
	}
	if r.Shard != "" {
		if _, err := ParseShard(r.Shard); err != nil {
			return err
		}
	}
	x := r.Explore
	if x == nil {
		return nil
	}
	if x.Shard != "" {
		if _, err := ParseShard(x.Shard); err != nil {
			return err
		}
	}
	graded := 0
	for _, row := range r.Rows {
		if row.Graded() {
			graded++
		}
	}
	if x.Ran != graded || x.Passed != passed || x.Asked < 0 {
		return fmt.Errorf("the search ran %d schedules and passed %d, but its rows show %d and %d", x.Ran, x.Passed, graded, passed)
	}
	for _, f := range x.Failures {
		if f.Mission == nil {
			return errors.New("a failure has no mission")
		}
	}
	return nil
}

// orBoth is an MCP revision, "" said as both.
func orBoth(rev string) string {
	if rev == "" {
		return "both"
	}
	return rev
}

// Merge joins the reports of every shard of one run into one: the rows
// of each in turn, the counts added, and for a search each distinct
// failure once. It refuses shards of other runs (another command,
// transport, MCP revision, tick, timeout, seed, count or --fail-on), a shard given
// twice, shards of another split, and a split with a shard missing.
func Merge(names []string, reps []*Report) (*Report, error) {
	if len(reps) == 0 {
		return nil, errors.New("no reports to merge")
	}
	first := reps[0]
	out := &Report{Command: first.Command, Transport: first.Transport, MCPRevision: first.MCPRevision, TickMillis: first.TickMillis,
		RequestTimeoutMillis: first.RequestTimeoutMillis, TimeoutMillis: first.TimeoutMillis, Rows: []Row{}}
	if first.Explore != nil {
		x := first.Explore
		out.Explore = &Exploration{Seed: x.Seed, Asked: x.Asked, Unsettled: []string{}, Failures: []Failure{}, Flaky: []Flaky{}, FailOnUnsettled: x.FailOnUnsettled}
	}
	shardOf := func(r *Report) string {
		if r.Explore != nil {
			return r.Explore.Shard
		}
		return r.Shard
	}
	split := 0
	have := map[int]string{}
	seen := map[string]string{}
	for i, r := range reps {
		differs := func(what string, a, b any) error {
			return fmt.Errorf("%s: its %s is %v, where %s's is %v; merge the shards of one run", names[i], what, a, names[0], b)
		}
		switch {
		case !slices.Equal(r.Command, first.Command):
			return nil, differs("command", commandWords(r.Command), commandWords(first.Command))
		case r.Transport != first.Transport:
			return nil, differs("transport", r.Transport, first.Transport)
		case r.MCPRevision != first.MCPRevision:
			return nil, differs("MCP revision", orBoth(r.MCPRevision), orBoth(first.MCPRevision))
		case r.Provider != first.Provider:
			return nil, differs("provider", r.Provider, first.Provider)
		case r.TickMillis != first.TickMillis:
			return nil, differs("tick (ms)", r.TickMillis, first.TickMillis)
		case r.TimeoutMillis != first.TimeoutMillis:
			return nil, differs("timeout (ms)", r.TimeoutMillis, first.TimeoutMillis)
		case (r.Explore == nil) != (first.Explore == nil):
			return nil, fmt.Errorf("%s and %s: one is a search (--explore) and the other the matrix; merge the shards of one run", names[0], names[i])
		case r.Explore != nil && r.Explore.Seed != first.Explore.Seed:
			return nil, differs("seed", r.Explore.Seed, first.Explore.Seed)
		case r.Explore != nil && r.Explore.Asked != first.Explore.Asked:
			return nil, differs("number of schedules", r.Explore.Asked, first.Explore.Asked)
		case r.Explore != nil && r.Explore.FailOnUnsettled != first.Explore.FailOnUnsettled:
			return nil, differs("--fail-on unsettled", r.Explore.FailOnUnsettled, first.Explore.FailOnUnsettled)
		}
		sh := Shard{I: 1, N: 1}
		if s := shardOf(r); s != "" {
			sh, _ = ParseShard(s)
		}
		if split == 0 {
			split = sh.N
		}
		if sh.N != split {
			return nil, fmt.Errorf("%s is shard %s, and %s is of a split in %d; merge the shards of one split", names[i], sh, names[0], split)
		}
		if other, dup := have[sh.I]; dup {
			return nil, fmt.Errorf("%s and %s are both shard %d/%d; give each shard once", other, names[i], sh.I, sh.N)
		}
		have[sh.I] = names[i]
		for _, row := range r.Rows {
			if other, dup := seen[row.Scenario]; dup {
				return nil, fmt.Errorf("%s and %s both hold %s; merge the shards of one run", other, names[i], row.Scenario)
			}
			seen[row.Scenario] = names[i]
		}
	}
	var missing []string
	for i := 1; i <= split; i++ {
		if _, ok := have[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, split))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("shard %s is missing: give the report of every shard of the run", strings.Join(missing, ", "))
	}
	for _, r := range reps {
		out.Rows = append(out.Rows, r.Rows...)
		out.Passed += r.Passed
		out.NA += r.NA
		out.Millis = max(out.Millis, r.Millis)
		out.Interrupted = out.Interrupted || r.Interrupted
		x := r.Explore
		if x == nil {
			continue
		}
		o := out.Explore
		o.Ran += x.Ran
		o.Passed += x.Passed
		o.Unsettled = append(o.Unsettled, x.Unsettled...)
		o.Flaky = append(o.Flaky, x.Flaky...)
		o.ShrinkRuns += x.ShrinkRuns
		o.ShrinkMillis += x.ShrinkMillis
		o.SearchMillis = max(o.SearchMillis, x.SearchMillis)
		o.HungStop = o.HungStop || x.HungStop
		if x.Stopped != "" {
			o.Stopped = x.Stopped
		}
		for _, f := range x.Failures {
			o.addFailure(f)
		}
	}
	if o := out.Explore; o != nil {
		o.sortFailures()
		if o.SearchMillis > 0 {
			// The shards ran side by side: the throughput of them all.
			o.PerSecond = float64(o.Ran) / (float64(o.SearchMillis) / 1000)
		}
	}
	return out, nil
}

// addFailure keeps a failure once by what it plays for a live client,
// whatever it is named: found again, the
// schedules that found it are added, and the copy kept is the one shown
// minimal, else the smaller.
func (x *Exploration) addFailure(f Failure) {
	for j := range x.Failures {
		g := &x.Failures[j]
		if plays(g.Mission) != plays(f.Mission) {
			continue
		}
		found := append(slices.Clone(g.Found), f.Found...)
		a, b := size(f.Mission), size(g.Mission)
		if f.Minimal && !g.Minimal || f.Minimal == g.Minimal && slices.Compare(a[:], b[:]) < 0 {
			*g = f
		}
		g.Found = found
		return
	}
	x.Failures = append(x.Failures, f)
}

// sortFailures orders the failures smallest first.
func (x *Exploration) sortFailures() {
	slices.SortStableFunc(x.Failures, func(a, b Failure) int {
		sa, sb := size(a.Mission), size(b.Mission)
		return slices.Compare(sa[:], sb[:])
	})
}
