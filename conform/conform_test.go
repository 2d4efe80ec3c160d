package conform

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/replaylab/replaylab/check"
	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// example builds the example client name once per test binary and
// returns its path.
func example(t testing.TB, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "replaylab-conform-examples-*")
		if buildErr != nil {
			return
		}
		for _, ex := range []string{"naive-refund", "guarded-refund", "naive-agent", "guarded-agent", "listing-refund"} {
			out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, ex), "../examples/"+ex).CombinedOutput()
			if err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", ex, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, name)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// run plays the scenarios (all by default) against argv with a fresh
// temporary directory for state, and checks that nothing is left in it.
func run(t testing.TB, ctx context.Context, cfg Config, scenarios []*Scenario) *Report {
	t.Helper()
	if scenarios == nil {
		scenarios = Scenarios(missions.BuiltIn())
	}
	cfg.TempDir = t.TempDir()
	rep, err := Run(ctx, cfg, scenarios)
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(cfg.TempDir); len(left) > 0 {
		t.Errorf("conform left %d entries in its temporary directory, first %s", len(left), left[0].Name())
	}
	return rep
}

// Every catalog mission of the matrix is a scenario; the missions written
// to contrast a provider (their own provider, or captured amounts) are
// the lab's, and conform plays a contract with --provider.
func TestEveryCatalogMissionIsAScenario(t *testing.T) {
	cat := missions.BuiltIn()
	matrix, lab := 0, 0
	rows := map[string]bool{}
	for _, sc := range Scenarios(cat) {
		rows[sc.ID()] = true
	}
	for _, m := range cat.Missions {
		switch {
		case providers.Short(m.Contract) && len(m.Captured) == 0:
			matrix++
			if _, err := FromMission(m); err != nil || !rows[m.ID] {
				t.Errorf("%s is no row: %v", m.ID, err)
			}
		default:
			lab++
			if rows[m.ID] {
				t.Errorf("%s contrasts a provider, yet conform plays it as a row", m.ID)
			}
		}
	}
	if len(rows) != matrix || matrix != 15 || lab != 6 {
		t.Fatalf("%d scenarios of %d matrix missions (%d for the lab)", len(rows), matrix, lab)
	}
}

// The runner's acts come from the missions.
func TestScenarioActs(t *testing.T) {
	cat := missions.BuiltIn()
	get := func(id string) *Scenario {
		m, err := cat.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		s, err := FromMission(m)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := get("crash-after-send"); !s.Crash || s.Workers != 1 || s.Changed != nil || s.Expires {
		t.Errorf("crash-after-send: %+v", s)
	}
	if s := get("concurrent-duplicates"); s.Workers != 2 || s.Crash {
		t.Errorf("concurrent-duplicates: %+v", s)
	}
	if s := get("changed-parameters"); len(s.Changed) != 1 || s.Changed[0].Amount != 4000 || s.Intents[0].Amount != 4500 || !s.Escalates {
		t.Errorf("changed-parameters: %+v", s)
	}
	if s := get("rejected-before-execution"); s.Changed != nil {
		t.Errorf("rejected-before-execution: a first attempt's payload is the fault's to play, not a second run: %+v", s.Changed)
	}
	if s := get("retry-after-key-expiry"); !s.Expires || s.Escalates {
		t.Errorf("retry-after-key-expiry: %+v", s)
	}
	if s := get("refund-pending-then-failed"); s.Expires {
		t.Error("refund-pending-then-failed waits less than its retention; its keys must not expire")
	}
	if s := get("no-idempotency-contract"); !s.NoContract() || !s.Escalates {
		t.Errorf("no-idempotency-contract: %+v", s)
	}
	if s := get("two-intended-refunds"); len(s.Intents) != 2 || s.Intents[0].Charge != s.Intents[1].Charge || s.Intents[0].Amount != 2000 {
		t.Errorf("two-intended-refunds: %+v", s.Intents)
	}
}

func TestFromMissionRefusesWhatNoClientCanMeet(t *testing.T) {
	for name, in := range map[string]missions.Intent{
		"payment":   {ID: "pay-1", Op: "payment", Payload: map[string]string{"amount": "10.00"}},
		"no amount": {ID: "r-1", Op: "refund", Payload: map[string]string{"order": "1"}},
		"negative":  {ID: "r-1", Op: "refund", Payload: map[string]string{"amount": "-1.00"}},
		"3 places":  {ID: "r-1", Op: "refund", Payload: map[string]string{"amount": "1.005"}},
	} {
		m := &missions.Mission{ID: "m", Intents: []missions.Intent{in}, Schedule: []missions.Step{{Attempt: in.ID, Fixture: missions.Success}}}
		if _, err := FromMission(m); err == nil {
			t.Errorf("%s: accepted", name)
		} else if !strings.Contains(err.Error(), in.ID) {
			t.Errorf("%s: the error does not name the intent: %v", name, err)
		}
	}
}

func TestGuardedExamplePassesEveryScenario(t *testing.T) {
	for _, tc := range []struct {
		name string
		mcp  bool
	}{{"guarded-refund", false}, {"guarded-agent", true}} {
		t.Run(tc.name, func(t *testing.T) {
			guardedPassesEveryScenario(t, Config{Command: []string{example(t, tc.name)}, MCP: tc.mcp})
		})
	}
}

func guardedPassesEveryScenario(t *testing.T, cfg Config) {
	rep := run(t, context.Background(), cfg, nil)
	if want := cfg.transport(); rep.Transport != want {
		t.Errorf("transport %q, want %q", rep.Transport, want)
	}
	for _, r := range rep.Rows {
		if r.Grade != GradePass {
			t.Errorf("%s: %s: %s\n%s", r.Scenario, r.Grade, r.Why, runsText(r))
		}
	}
	if rep.Passed != len(rep.Rows) || rep.Passed != len(Scenarios(missions.BuiltIn())) {
		t.Errorf("%d of %d pass", rep.Passed, len(rep.Rows))
	}
	// check, reading the same sessions as histories, agrees: nothing
	// wrong in any row the guarded client passed.
	for _, r := range rep.Rows {
		if a := anomalies(t, r); len(a) > 0 {
			t.Errorf("%s: check finds %v in the session of a row that passed", r.Scenario, a)
		}
	}
}

// anomalies are the kinds of anomaly check finds in a row's session.
func anomalies(t *testing.T, r Row) []string {
	t.Helper()
	data, err := export.MarshalHistory(r.Session.History())
	if err != nil {
		t.Fatal(err)
	}
	h, err := check.History(r.Scenario, bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", r.Scenario, err)
	}
	var kinds []string
	for _, a := range h.Anomalies {
		kinds = append(kinds, a.Kind)
	}
	return kinds
}

func runsText(r Row) string {
	var b strings.Builder
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "run %d (%s) exit %d %s\nstdout:\n%s\nstderr:\n%s\n", run.Run, run.Why, run.Exit, run.Killed, run.Stdout, run.Stderr)
	}
	return b.String()
}

// naiveUnsafe is where the catalog says the naive caller with a fresh key
// per attempt ends badly.
func naiveUnsafe(t *testing.T) map[string]bool {
	out := map[string]bool{}
	off, naive := false, missions.Naive
	for _, m := range missions.BuiltIn().Missions {
		c, err := missions.Run(m, m.Settings(missions.Overrides{StableKeys: &off, Policy: &naive}))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range c.Outcome.Verdicts {
			if slices.Contains(missions.BadVerdicts, v.Verdict) {
				out[m.ID] = true
			}
		}
	}
	return out
}

func TestNaiveExampleIsUnsafeWhereTheCatalogSays(t *testing.T) {
	want := naiveUnsafe(t)
	if len(want) == 0 || len(want) == len(missions.BuiltIn().Missions) {
		t.Fatalf("the catalog's naive caller is unsafe on %d rows; the test needs some of each", len(want))
	}
	for _, tc := range []struct {
		name string
		mcp  bool
	}{{"naive-refund", false}, {"naive-agent", true}} {
		t.Run(tc.name, func(t *testing.T) {
			naiveUnsafeWhereTheCatalogSays(t, want, Config{Command: []string{example(t, tc.name)}, MCP: tc.mcp})
		})
	}
}

func naiveUnsafeWhereTheCatalogSays(t *testing.T, want map[string]bool, cfg Config) {
	rep := run(t, context.Background(), cfg, nil)
	for _, r := range rep.Rows {
		switch {
		case want[r.Scenario] && r.Grade != GradeUnsafe:
			t.Errorf("%s: %s (%s); the catalog's naive caller is unsafe there\n%s", r.Scenario, r.Grade, r.Why, runsText(r))
		case !want[r.Scenario] && r.Grade != GradePass:
			t.Errorf("%s: %s (%s); the catalog's naive caller is safe there\n%s", r.Scenario, r.Grade, r.Why, runsText(r))
		}
		// check sees the duplicates conform graded unsafe.
		if dup := slices.Contains(anomalies(t, r), check.Duplicate); dup != (r.Grade == GradeUnsafe) {
			t.Errorf("%s: graded %s, and check finds a duplicate_effect: %v", r.Scenario, r.Grade, dup)
		}
	}
}

// scorecard is a report without its timings, output, evidence and refund
// ids: what must come out the same every time.
func scorecard(rep *Report) string {
	var b strings.Builder
	for _, r := range rep.Rows {
		fmt.Fprintf(&b, "%s %s %q %s | %s | runs", r.Scenario, r.Grade, r.Why, Verdicts(&r), Beliefs(&r))
		for _, run := range r.Runs {
			fmt.Fprintf(&b, " [%s exit %d %s]", run.Why, run.Exit, run.Killed)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestTheSameClientGetsTheSameScorecard(t *testing.T) {
	for _, name := range []string{"guarded-refund", "naive-refund"} {
		cfg := Config{Command: []string{example(t, name)}}
		first := scorecard(run(t, context.Background(), cfg, nil))
		for i := 2; i <= 20; i++ {
			if got := scorecard(run(t, context.Background(), cfg, nil)); got != first {
				t.Fatalf("%s, run %d of 20: the scorecard changed\nfirst:\n%s\nnow:\n%s", name, i, first, got)
			}
		}
	}
}

func scenario(t testing.TB, id string) []*Scenario {
	m, err := missions.BuiltIn().Get(id)
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromMission(m)
	if err != nil {
		t.Fatal(err)
	}
	return []*Scenario{s}
}

// script is a shell client.
func script(body string) []string { return []string{"/bin/sh", "-c", body} }

func TestAClientThatDoesNotExistIsRefused(t *testing.T) {
	for _, argv := range [][]string{{"./no-such-client"}, {"no-such-client-on-path-at-all"}, {""}, nil} {
		err := Config{Command: argv}.Validate()
		if err == nil {
			t.Errorf("%q accepted", argv)
			continue
		}
		if len(argv) > 0 && argv[0] != "" && !strings.Contains(err.Error(), argv[0]) {
			t.Errorf("%q: the error does not name it: %v", argv, err)
		}
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "client.js")
	os.WriteFile(plain, []byte("console.log(1)\n"), 0o644)
	if err := (Config{Command: []string{plain}}).Validate(); err == nil || !strings.Contains(err.Error(), "not executable") {
		t.Errorf("a file without the execute bit: %v", err)
	}
}

func TestAClientThatExitsAtOnceIsNamedWithItsCode(t *testing.T) {
	rep := run(t, context.Background(), Config{Command: script("exit 3")}, scenario(t, "timeout-then-success"))
	r := rep.Rows[0]
	if r.Grade != GradeUnsettled || !strings.Contains(r.Why, "exited with code 3") || !strings.Contains(r.Why, "printing nothing") {
		t.Fatalf("%s: %s", r.Grade, r.Why)
	}
	if r.Runs[0].Exit != 3 {
		t.Errorf("exit %d recorded", r.Runs[0].Exit)
	}
}

// A client that hangs, and starts a child that would outlive it, is
// killed with its group at the timeout (twice the budget, as it sends no
// request); nothing of it is left.
func TestAHungClientIsKilledWithItsChildren(t *testing.T) {
	marks := t.TempDir()
	cfg := Config{
		Command: script(`sleep 300 & echo $! > "$MARKS/child"; echo $$ > "$MARKS/parent"; echo "$REPLAYLAB_API_BASE" > "$MARKS/base"; wait`),
		Tick:    10 * time.Millisecond,
		Timeout: time.Second,
		Env:     append(os.Environ(), "MARKS="+marks),
	}
	rep := run(t, context.Background(), cfg, scenario(t, "timeout-then-success"))
	r := rep.Rows[0]
	if r.Grade != GradeUnsettled || !strings.Contains(r.Why, "sent no request within 2s of its start") {
		t.Fatalf("%s: %s", r.Grade, r.Why)
	}
	if r.Runs[0].Killed == "" || r.Runs[0].Exit != -1 {
		t.Errorf("run: %+v", r.Runs[0])
	}
	assertGone(t, marks)
}

// assertGone checks that the processes whose pids are in marks/parent and
// marks/child have ended, and that the port in marks/base is closed.
func assertGone(t *testing.T, marks string) {
	t.Helper()
	for _, name := range []string{"parent", "child"} {
		data, err := os.ReadFile(filepath.Join(marks, name))
		if err != nil {
			t.Fatalf("the client did not write its %s pid: %v", name, err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		// SIGKILL is sent to the whole group before conform returns, but
		// the kernel ends a grandchild in its own time: on a loaded
		// machine that can be after kill(2) returns. A process the kill
		// never reached lives on for its 300 s sleep.
		for deadline := time.Now().Add(5 * time.Second); alive(pid) && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("the client's %s (pid %d) is still running 5 s after conform returned", name, pid)
		}
	}
	base, err := os.ReadFile(filepath.Join(marks, "base"))
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(strings.TrimSpace(string(base)), "http://")
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("the provider's port %s still takes connections", addr)
	}
}

// alive: the process exists and is not a zombie waiting for a parent
// that is not us.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

func TestMalformedBeliefLinesAreNamed(t *testing.T) {
	body := `echo '{"level":"info","msg":"starting"}'
echo '{"intent":"refund-1042","belief":"maybe"}'
echo '{"intent":"refund-9999","belief":"done"}'
echo '{"intent":"refund-1042","belief":'
echo 'plain text is output'`
	rep := run(t, context.Background(), Config{Command: script(body)}, scenario(t, "failure-then-failure"))
	r := rep.Rows[0]
	if len(r.Problems) != 3 {
		t.Fatalf("%d problems, want 3: %q", len(r.Problems), r.Problems)
	}
	for i, want := range []string{`line 2`, `line 3`, `line 4`} {
		if !strings.Contains(r.Problems[i], want) || !strings.Contains(r.Problems[i], "run 1") {
			t.Errorf("problem %d does not name its run and %s: %s", i, want, r.Problems[i])
		}
	}
	if !strings.Contains(r.Problems[0], `"maybe"`) || !strings.Contains(r.Problems[1], "refund-9999") {
		t.Errorf("problems do not say what was wrong: %q", r.Problems)
	}
	if r.Grade == GradePass {
		t.Error("a row with malformed belief lines passed")
	}
}

// A malformed line keeps an otherwise right answer from passing.
func TestAMalformedLineBesideARightAnswerIsUnsettled(t *testing.T) {
	body := `echo '{"intent":"refund-1042","belief":"failed"}'; echo '{"belief":"done"}'`
	rep := run(t, context.Background(), Config{Command: script(body)}, scenario(t, "failure-then-failure"))
	r := rep.Rows[0]
	if r.Grade != GradeUnsettled || !strings.Contains(r.Why, "malformed belief line") {
		t.Fatalf("%s: %s", r.Grade, r.Why)
	}
}

// Beliefs are held to the ledger: a client that claims without sending,
// or denies what it made, is unsafe; one that escalates everything is not
// a pass.
func TestBeliefsAreHeldToTheLedger(t *testing.T) {
	plain := oneCreate(t, "fixture: success")
	// One create, sent with Node (which CI has for the JavaScript client).
	send := `node -e 'fetch(process.env.REPLAYLAB_API_BASE + "/v1/refunds", {method: "POST", body: "charge=ch_1042&amount=4500&metadata[intent]=refund-1042",
		headers: {"Authorization": "Bearer " + process.env.REPLAYLAB_API_KEY, "Idempotency-Key": "k1", "Content-Type": "application/x-www-form-urlencoded"}}).then(r => r.text(), () => {})';`
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is needed for this test")
	}
	for _, c := range []struct {
		name, body string
		grade      Grade
		why        string
	}{
		{"done without sending", `echo '{"intent":"refund-1042","belief":"done"}'`, GradeUnsafe, "no refund stands"},
		{"failed after a success", send + `echo '{"intent":"refund-1042","belief":"failed"}'`, GradeUnsafe, "believes refund-1042 failed"},
		{"done with another id", send + `echo '{"intent":"refund-1042","belief":"done","refund":"re_9"}'`, GradeUnsafe, "with re_9"},
		{"pending, never shown one", send + `echo '{"intent":"refund-1042","belief":"pending"}'`, GradeUnsafe, "ever showed it a pending refund"},
		{"failed without sending", `echo '{"intent":"refund-1042","belief":"failed"}'`, GradeUnsettled, "a timeout is not a failure"},
		{"an escalation before a contradiction", send + `echo '{"intent":"refund-1042","belief":"escalated"}'; echo '{"intent":"refund-1042","belief":"failed"}'`, GradeUnsafe, "believes refund-1042 failed"},
		{"escalates what can be settled", send + `echo '{"intent":"refund-1042","belief":"escalated"}'`, GradeUnsettled, "can be settled"},
		{"silent after a success", send, GradeUnsettled, "printed no belief"},
		{"right", send + `echo '{"intent":"refund-1042","belief":"done"}'`, GradePass, "One refund"},
	} {
		graded(t, plain, c.name, c.body, c.grade, c.why)
	}

	// A refund that answers pending and succeeds 30 ticks later.
	pend := oneCreate(t, "fixture: pending\n    delay: 30\n    resolve: succeeded")
	for _, c := range []struct {
		name, body string
		grade      Grade
		why        string
	}{
		{"pending, as shown", send + `echo '{"intent":"refund-1042","belief":"pending"}'`, GradePass, "saw it still pending"},
		{"silent after a pending reply", send, GradeUnsettled, "printed no belief"},
		{"done on a pending reply", send + `echo '{"intent":"refund-1042","belief":"done"}'`, GradeUnsafe, "ever showed it refund re_0001 succeeded"},
	} {
		graded(t, pend, c.name, c.body, c.grade, c.why)
	}
}

// oneCreate is a scenario of one intent whose one create meets the
// fixture the YAML lines give.
func oneCreate(t *testing.T, fixture string) *Scenario {
	t.Helper()
	m, err := missions.Parse("one.yaml", []byte(`id: one
title: One create
goal: The one create meets its fixture.
intents:
  - id: refund-1042
    op: refund
    principal: support-agent
    payload: {order: "1042", amount: "45.00"}
schedule:
  - attempt: refund-1042
    `+fixture+`
expect:
  - when: {stable_keys: on}
    effects: 1
`))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := FromMission(m)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// graded runs the shell client body on sc and checks its grade and why.
func graded(t *testing.T, sc *Scenario, name, body string, grade Grade, why string) {
	t.Helper()
	r := run(t, context.Background(), Config{Command: script(body)}, []*Scenario{sc}).Rows[0]
	if r.Grade != grade || !strings.Contains(r.Why, why) {
		t.Errorf("%s: %s: %s (want %s, %q)\n%s", name, r.Grade, r.Why, grade, why, runsText(r))
	}
}

// Ctrl-C: every client killed, every port and state directory released,
// and the rows that did not end marked not run.
func TestInterruptReleasesEverything(t *testing.T) {
	marks := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := Config{
		Command: script(`sleep 300 & echo $! > "$MARKS/child"; echo $$ > "$MARKS/parent"; echo "$REPLAYLAB_API_BASE" > "$MARKS/base"; wait`),
		Env:     append(os.Environ(), "MARKS="+marks),
	}
	go func() {
		// Interrupt once the client is up.
		for range 200 {
			if _, err := os.Stat(filepath.Join(marks, "base")); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	scs := append(scenario(t, "timeout-then-success"), scenario(t, "saved-server-error")...)
	cfg.Parallel = 1
	rep := run(t, ctx, cfg, scs)
	if !rep.Interrupted {
		t.Error("the report does not say it was interrupted")
	}
	for _, r := range rep.Rows {
		if r.Grade != GradeNotRun {
			t.Errorf("%s: %s after an interrupt", r.Scenario, r.Grade)
		}
	}
	if !strings.Contains(rep.Rows[1].Why, "Did not run") {
		t.Errorf("the row that never started says: %s", rep.Rows[1].Why)
	}
	assertGone(t, marks)
}

func TestReportsAreWellFormed(t *testing.T) {
	rep := run(t, context.Background(), Config{Command: []string{example(t, "naive-refund")}}, nil)
	bad := len(rep.Rows) - rep.Passed

	data, err := MarshalReport(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := matchesSchema(t, data); err != nil {
		t.Errorf("the JSON report does not match its schema: %v", err)
	}
	if !bytes.HasPrefix(data, []byte("{\n  \"schema\": \""+SchemaID+"\"")) {
		t.Errorf("the report does not open with its schema id: %.60s", data)
	}

	x, err := JUnit(rep)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suite    []struct {
			Tests int `xml:"tests,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
				} `xml:"failure"`
				Out string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(x, &suites); err != nil {
		t.Fatalf("JUnit XML does not parse: %v", err)
	}
	if suites.Tests != len(rep.Rows) || suites.Failures != bad || len(suites.Suite) != 1 || len(suites.Suite[0].Cases) != len(rep.Rows) {
		t.Fatalf("JUnit: %d tests, %d failures; want %d and %d", suites.Tests, suites.Failures, len(rep.Rows), bad)
	}
	for i, c := range suites.Suite[0].Cases {
		row := rep.Rows[i]
		if c.Name != row.Scenario || (c.Failure != nil) != (row.Grade != GradePass) {
			t.Errorf("testcase %d: %s, failure %v; row %s %s", i, c.Name, c.Failure != nil, row.Scenario, row.Grade)
			continue
		}
		if c.Failure != nil && (c.Failure.Message != row.Why || c.Failure.Type != string(row.Grade)) {
			t.Errorf("%s: failure %q (%s), want the row's why %q", c.Name, c.Failure.Message, c.Failure.Type, row.Why)
		}
		if !strings.Contains(c.Out, "--- run 1") || !strings.Contains(c.Out, `"belief"`) {
			t.Errorf("%s: system-out lacks the client's output: %q", c.Name, c.Out)
		}
	}

	md := string(Markdown(rep))
	if n := strings.Count(md, "```mermaid"); n != bad {
		t.Errorf("the write-up has %d sequence diagrams for %d rows that did not pass", n, bad)
	}
	for _, r := range rep.Rows {
		if r.Grade != GradePass && !strings.Contains(md, "## "+r.Scenario+": "+string(r.Grade)) {
			t.Errorf("the write-up has no section for %s", r.Scenario)
		}
	}
}

// Each row's session is what the provider recorded: it replays.
func TestRowSessionsAreWholeSessions(t *testing.T) {
	rep := run(t, context.Background(), Config{Command: []string{example(t, "guarded-refund")}}, scenario(t, "crash-after-send"))
	s := rep.Rows[0].Session
	if s == nil || !s.Settled || s.Mission == nil || s.Mission.ID != "crash-after-send" {
		t.Fatalf("session: %+v", s)
	}
	data, err := export.MarshalSession(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := export.UnmarshalSession("crash-after-send.json", data)
	if err != nil {
		t.Fatalf("the session does not read back: %v", err)
	}
	var wires []string
	for _, r := range back.Requests {
		if r.Kind == export.RequestCreate {
			wires = append(wires, string(r.Fixture)+"/"+r.Wire)
		}
	}
	if len(wires) == 0 || wires[0] != "crash_after_send/closed" {
		t.Errorf("creates: %v; the first should meet crash_after_send with its connection closed", wires)
	}
	if r := rep.Rows[0].Runs; len(r) != 2 || !strings.Contains(r[0].Killed, "crash_after_send") || r[1].Exit != 0 {
		t.Errorf("runs: %+v", r)
	}
}

// matchesSchema holds a JSON report to report.schema.json.
func matchesSchema(t *testing.T, data []byte) error {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		t.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	if err := comp.AddResource("conform.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := comp.Compile("conform.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(inst)
}

// nodeClient is the command of examples/node-refund: Node and the
// client's path. Under CI a missing Node fails the test rather than
// skipping it.
func nodeClient(t *testing.T) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not on PATH; CI must have it (the contract is tested in a second language)")
		}
		t.Skip("node is not on PATH")
	}
	client, err := filepath.Abs("../examples/node-refund/client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	return []string{node, client}
}

// A client written from docs/conform.md alone, in another language, runs
// unchanged and passes every row.
func TestNodeClientWrittenFromTheDocs(t *testing.T) {
	rep := run(t, context.Background(), Config{Command: nodeClient(t)}, nil)
	for _, r := range rep.Rows {
		if r.Grade != GradePass {
			t.Errorf("%s: %s: %s\n%s", r.Scenario, r.Grade, r.Why, runsText(r))
		}
	}
}

// A process that leaves the client's process group (a daemon that calls
// setsid) is still found and killed when the row ends.
func TestADaemonThatLeftTheGroupIsKilled(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Fatal("setsid is needed for this test")
	}
	marks := t.TempDir()
	cfg := Config{
		Command: script(`setsid sleep 300 & echo $! > "$MARKS/daemon"; sleep 0.2; echo '{"intent":"refund-1042","belief":"failed"}'`),
		Env:     append(os.Environ(), "MARKS="+marks),
	}
	run(t, context.Background(), cfg, scenario(t, "failure-then-failure"))
	data, err := os.ReadFile(filepath.Join(marks, "daemon"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	for range 50 {
		if !alive(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("the daemon (pid %d) outlived its row", pid)
}

// TestTheMCPContract: with MCP the client is told where the tools are;
// without, REPLAYLAB_MCP_URL is not in its environment, even when the
// environment conform runs in has one.
func TestTheMCPContract(t *testing.T) {
	dump := script(`echo "base=$REPLAYLAB_API_BASE mcp=${REPLAYLAB_MCP_URL-unset}" >&2`)
	for _, tc := range []struct {
		mcp  bool
		want string
	}{{true, `mcp=http://127\.0\.0\.1:[0-9]+/mcp\b`}, {false, `mcp=unset`}} {
		cfg := Config{Command: dump, MCP: tc.mcp, Env: append(os.Environ(), "REPLAYLAB_MCP_URL=http://elsewhere/mcp")}
		rep := run(t, context.Background(), cfg, scenario(t, "timeout-then-success"))
		stderr := rep.Rows[0].Runs[0].Stderr
		if !regexp.MustCompile(tc.want).MatchString(stderr) {
			t.Errorf("mcp %v: the client saw %q, want %s", tc.mcp, stderr, tc.want)
		}
		if base, mcpURL, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(stderr), "base="), " mcp="); tc.mcp && mcpURL != base+"/mcp" {
			t.Errorf("the MCP endpoint is on the provider's own port: base %s, mcp %s", base, mcpURL)
		}
	}
}
