package conform

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/replaylab/replaylab/missions"
)

var exploreCfg = func(bin string) Config {
	return Config{Command: []string{bin}, Tick: 20 * time.Millisecond, TempDir: os.TempDir()}
}

// TestExploreFindsTheListingClientsFlaw: listing-refund passes every row
// of the matrix, and a search of 60 schedules finds the schedule it
// fails, shrunk to one intent whose create commits late past its key.
// Every schedule one step smaller passes: the shrunk schedule is
// minimal, and the mission written for it validates.
func TestExploreFindsTheListingClientsFlaw(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a client process per schedule")
	}
	bin := example(t, "listing-refund")
	cfg := exploreCfg(bin)
	matrix, err := Run(context.Background(), cfg, Scenarios(missions.BuiltIn()))
	if err != nil {
		t.Fatal(err)
	}
	if matrix.Passed != len(matrix.Rows) {
		t.Fatalf("listing-refund passes %d of %d rows of the matrix; it should pass them all:\n%s", matrix.Passed, len(matrix.Rows), Text(matrix, 100))
	}
	rep, err := Explore(context.Background(), cfg, ExploreConfig{Count: 60, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	x := rep.Explore
	if len(x.Failures) == 0 {
		t.Fatalf("60 schedules found no failure of listing-refund:\n%s", ExploreText(rep, 100))
	}
	f := x.Failures[0]
	if !f.Minimal || len(f.Mission.Intents) != 1 {
		t.Fatalf("the first failure is not shrunk to one intent, minimal: %+v", f)
	}
	data, err := missions.Format(f.Mission)
	if err != nil {
		t.Fatal(err)
	}
	if _, problems := missions.ValidateFile(f.Mission.ID+".yaml", data, missions.BuiltIn(), missions.Run); len(problems) > 0 {
		t.Fatalf("the shrunk mission does not validate: %v\n%s", problems, data)
	}
	// Minimal: every schedule one step smaller passes against the
	// client, and the shrunk one still fails.
	var smaller []*Scenario
	for _, c := range Smaller(f.Mission) {
		sc, err := FromMission(c)
		if err != nil {
			t.Fatal(err)
		}
		smaller = append(smaller, sc)
	}
	sc, _ := FromMission(f.Mission)
	rows := runRows(context.Background(), cfg.withDefaults(), append(smaller, sc))
	for i, row := range rows[:len(smaller)] {
		if row.Grade == GradeUnsafe {
			t.Errorf("smaller schedule %d (%s) still fails: the shrunk one is not minimal", i, smaller[i].Plays())
		}
	}
	if last := rows[len(rows)-1]; last.Grade != GradeUnsafe {
		t.Errorf("the shrunk schedule passes when run again: %s", last.Why)
	}
}

// TestExploreFindsTheNaiveClientsFailuresEarly: the naive examples'
// unsafe schedules (over REST and over MCP) come within the first 50, and the same seed draws the same
// schedules on a second search.
func TestExploreFindsTheNaiveClientsFailuresEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a client process per schedule")
	}
	for _, name := range []string{"naive-refund", "naive-agent"} {
		cfg := exploreCfg(example(t, name))
		cfg.MCP = name == "naive-agent"
		rep, err := Explore(context.Background(), cfg, ExploreConfig{Count: 50, Seed: 9, ShrinkRuns: -1})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Explore.Failures) == 0 {
			t.Fatalf("50 schedules found no failure of %s:\n%s", name, ExploreText(rep, 100))
		}
		for i := range 50 {
			if rep.Rows[i].Scenario != Generate(9, i).ID {
				t.Fatalf("%s: row %d is %s; the search runs the schedules in the order drawn", name, i, rep.Rows[i].Scenario)
			}
		}
		t.Logf("%s: %d of the first 50 schedules unsafe", name, len(rep.Explore.Failures))
	}
}

// TestExploreGuardedClientIsSafe: the guarded executor meets no unsafe
// schedule in 150 (the 500 of the issue are measured by
// BenchmarkExploreGuarded).
func TestExploreGuardedClientIsSafe(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a client process per schedule")
	}
	bin := example(t, "guarded-refund")
	rep, err := Explore(context.Background(), exploreCfg(bin), ExploreConfig{Count: 150, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rep.Explore.Failures); n > 0 {
		t.Fatalf("guarded-refund fails %d generated schedules:\n%s", n, ExploreText(rep, 100))
	}
}

// TestShardsSplitAndMerge: the shards of a search take every schedule
// once, and their reports merge into the whole search's counts.
func TestShardsSplitAndMerge(t *testing.T) {
	seen := map[int]int{}
	for i := 1; i <= 3; i++ {
		for j := range 30 {
			if (Shard{I: i, N: 3}).Has(j) {
				seen[j]++
			}
		}
	}
	for j := range 30 {
		if seen[j] != 1 {
			t.Fatalf("schedule %d is taken by %d shards of 3", j, seen[j])
		}
	}
	for _, bad := range []string{"0/3", "4/3", "3", "a/b", "1/0", "-1/2"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
	m := Generate(1, 0)
	a := &Report{Command: []string{"c"}, Transport: "http", TickMillis: 20, Rows: []Row{{Scenario: "a", Grade: GradePass}}, Passed: 1,
		Explore: &Exploration{Seed: 1, Asked: 4, Shard: "1/2", Ran: 1, Passed: 1, Failures: []Failure{}}}
	b := &Report{Command: []string{"c"}, Transport: "http", TickMillis: 20, Rows: []Row{{Scenario: "b", Grade: GradeUnsafe}},
		Explore: &Exploration{Seed: 1, Asked: 4, Shard: "2/2", Ran: 1, Failures: []Failure{{Found: []string{"b"}, Mission: m}}}}
	got, err := Merge([]string{"a.json", "b.json"}, []*Report{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != 2 || got.Passed != 1 || got.Explore.Ran != 2 || len(got.Explore.Failures) != 1 || !got.Explore.Failed() {
		t.Fatalf("merged: %+v %+v", got, got.Explore)
	}
	data, err := MarshalReport(got)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalReport("merged.json", data)
	if err != nil || back.Explore.Ran != 2 {
		t.Fatalf("a merged report does not read back: %v", err)
	}
	if _, err := Merge([]string{"a.json", "a2.json"}, []*Report{a, a}); err == nil {
		t.Error("two copies of one shard merged")
	}
}

// TestExploreStopsOnAHangingClient: a client that hangs on every
// schedule stops the search after DefaultMaxHangs, and the report says
// so; nothing of it is left behind.
func TestExploreStopsOnAHangingClient(t *testing.T) {
	tmp := t.TempDir()
	cfg := Config{Command: script(`sleep 30`), Tick: 5 * time.Millisecond, Timeout: 150 * time.Millisecond, TempDir: tmp}
	rep, err := Explore(context.Background(), cfg, ExploreConfig{Count: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	x := rep.Explore
	if x.Ran >= 200 || x.Ran < DefaultMaxHangs || !strings.Contains(x.Stopped, "hung on") {
		t.Fatalf("ran %d, stopped %q: want the search stopped after %d hangs", x.Ran, x.Stopped, DefaultMaxHangs)
	}
	if !strings.Contains(ExploreText(rep, 100), "stopped: the client hung") {
		t.Errorf("the scorecard does not say why it stopped:\n%s", ExploreText(rep, 100))
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestExploreInterrupted: a search stopped midway (Ctrl-C) returns the
// schedules that ended, marked interrupted, and releases every state
// directory.
func TestExploreInterrupted(t *testing.T) {
	tmp := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := Config{Command: script(`sleep 0.05; echo '{"intent":"refund-1","belief":"failed"}'`), Tick: 5 * time.Millisecond, TempDir: tmp}
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	rep, err := Explore(ctx, cfg, ExploreConfig{Count: 100000, Seed: 1, ShrinkRuns: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || rep.Explore.Stopped != "interrupted" || rep.Explore.Ran >= 100000 {
		t.Fatalf("interrupted %v, stopped %q, ran %d", rep.Interrupted, rep.Explore.Stopped, rep.Explore.Ran)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestARowEndingOnAHeldRequestSaysWhich: a client whose own timeout is
// longer than the row's budget is told which request it still waited
// on, since when, and that its timeout is too long.
func TestARowEndingOnAHeldRequestSaysWhich(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is needed for this client")
	}
	client := script(curl + ` -s -m 60 -u "$REPLAYLAB_API_KEY:" -d charge=ch_1042 -d amount=4500 -d "metadata[intent]=refund-1042" "$REPLAYLAB_API_BASE/v1/refunds"`)
	// The row's budget is room for a loaded machine to start curl; the
	// client's own timeout (60 s) is far past it all the same.
	cfg := Config{Command: client, Tick: 5 * time.Millisecond, Timeout: 2 * time.Second}
	rep := run(t, context.Background(), cfg, scenario(t, "timeout-then-success"))
	why := rep.Rows[0].Why
	for _, want := range []string{"still waiting on POST /v1/refunds", "request 1", "held since tick", "longer than REPLAYLAB_REQUEST_TIMEOUT_MS (50ms)"} {
		if !strings.Contains(why, want) {
			t.Errorf("the reason %q does not say %q", why, want)
		}
	}
	if !rep.Rows[0].Hung {
		t.Error("the row is not marked hung")
	}
}

// TestExploreReportsAreWellFormed: a search's JSON report matches the
// report schema; the scorecard, the Markdown write-up and JUnit each
// carry the seed, the failure with its shrunk mission and commands, the
// flaky schedule with both outcomes, the unsettled ones, and the
// throughput; JUnit fails the unsafe schedule only.
func TestExploreReportsAreWellFormed(t *testing.T) {
	m := Generate(5, 3)
	rep := &Report{Command: []string{"./c"}, Transport: "http", TickMillis: 20, RequestTimeoutMillis: 200, TimeoutMillis: 4000,
		Rows: []Row{
			{Scenario: "explore-5-1", Title: "t", Grade: GradePass, Why: "ok.", Intents: []RowIntent{}, Runs: []ClientRun{}},
			{Scenario: "explore-5-2", Title: "t", Grade: GradeUnsettled, Why: "escalated.", Intents: []RowIntent{}, Runs: []ClientRun{}},
			{Scenario: "explore-5-3", Title: "t", Grade: GradeUnsafe, Why: "two refunds.", Intents: []RowIntent{}, Runs: []ClientRun{}},
			{Scenario: "explore-5-4", Title: "t", Grade: GradeUnsafe, Why: "once.", Intents: []RowIntent{}, Runs: []ClientRun{}},
		},
		Passed: 1,
		Explore: &Exploration{Seed: 5, Asked: 4, Ran: 4, Passed: 1, Unsettled: []string{"explore-5-2"},
			Failures:  []Failure{{Found: []string{"explore-5-3"}, Mission: m, Plays: "it plays", Why: "two refunds.", Reproduce: "replaylab conform --missions found --scenario explore-5-3 -- ./c", Lab: "replaylab lab --missions found explore-5-3", Minimal: true}},
			Flaky:     []Flaky{{Schedule: "explore-5-4", First: "unsafe: once.", Again: "pass: fine."}},
			PerSecond: 12.5, SearchMillis: 320},
	}
	data, err := MarshalReport(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := matchesSchema(t, data); err != nil {
		t.Fatalf("the JSON report of a search does not match its schema: %v", err)
	}
	text := ExploreText(rep, 100)
	md := string(Markdown(rep))
	for _, want := range []string{"seed 5", "explore-5-3", "--missions found --scenario explore-5-3", "lab --missions found", "FLAKY", "explore-5-2", "12.5 schedules a second"} {
		if !strings.Contains(text, want) {
			t.Errorf("the scorecard lacks %q:\n%s", want, text)
		}
	}
	for _, want := range []string{"seed 5", "## explore-5-3: unsafe", "```yaml\nid: explore-5-3", "## Flaky", "## Unsettled"} {
		if !strings.Contains(md, want) {
			t.Errorf("the write-up lacks %q:\n%s", want, md)
		}
	}
	x, err := JUnit(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(x, []byte(`failures="1"`)) || !bytes.Contains(x, []byte("shrunk to explore-5-3")) {
		t.Errorf("JUnit fails the unsafe schedule alone, with what it shrank to:\n%s", x)
	}
}

// TestMergeRefusesWhatIsNotOneRun: a file with more after its report,
// a report whose counts its rows belie, shards of two splits, a split
// with a shard missing, and two shards holding one schedule are each
// refused, naming what is wrong.
func TestMergeRefusesWhatIsNotOneRun(t *testing.T) {
	shard := func(s string, rows ...string) *Report {
		r := &Report{Command: []string{"c"}, Transport: "http", TickMillis: 20, Rows: []Row{},
			Explore: &Exploration{Seed: 1, Asked: 6, Shard: s, Unsettled: []string{}, Failures: []Failure{}, Flaky: []Flaky{}}}
		for _, id := range rows {
			r.Rows = append(r.Rows, Row{Scenario: id, Grade: GradePass})
			r.Passed++
			r.Explore.Ran++
			r.Explore.Passed++
		}
		return r
	}
	data, _ := MarshalReport(shard("1/2", "a"))
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"two reports in one file", append(append([]byte{}, data...), data...), "more follows the report"},
		{"trailing junk", append(append([]byte{}, data...), []byte("junk\n")...), "more follows the report"},
		{"empty", nil, "the file is empty"},
		{"an array", []byte("[]"), "not a JSON object"},
		{"counts its rows belie", bytes.Replace(data, []byte(`"passed": 1,`), []byte(`"passed": 9,`), 1), "passed is 9"},
		{"an unknown grade", bytes.Replace(data, []byte(`"grade": "pass"`), []byte(`"grade": "bogus"`), 1), `unknown grade "bogus"`},
	} {
		if _, err := UnmarshalReport("r.json", tc.data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		reps []*Report
		want string
	}{
		{"two splits", []*Report{shard("1/2", "a"), shard("2/3", "b")}, "split in 2"},
		{"a shard missing", []*Report{shard("1/3", "a"), shard("3/3", "c")}, "shard 2/3 is missing"},
		{"one schedule twice", []*Report{shard("1/2", "a"), shard("2/2", "a")}, "both hold a"},
		{"the whole beside a shard", []*Report{shard("", "a"), shard("1/2", "b")}, "split in 1"},
	} {
		names := []string{"x.json", "y.json"}
		if _, err := Merge(names, tc.reps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestASearchFailsOnAClientThatPassesNothing: a client that answers no
// schedule, or hangs until the search stops, fails the search, though
// no schedule was unsafe.
func TestASearchFailsOnAClientThatPassesNothing(t *testing.T) {
	rep, err := Explore(context.Background(), Config{Command: script(`true`), Tick: 5 * time.Millisecond, TempDir: t.TempDir()}, ExploreConfig{Count: 5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if x := rep.Explore; x.Passed != 0 || len(x.Failures) != 0 || !x.Failed() {
		t.Fatalf("a client that prints nothing: passed %d, failures %d, failed %v", x.Passed, len(x.Failures), x.Failed())
	}
}
