package conform

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/providers"
	"github.com/replaylab/replaylab/serve"
)

// Defaults.
const (
	DefaultTick = 100 * time.Millisecond
	// DefaultTimeoutTicks bounds a scenario when no timeout is given:
	// 20 s at the default tick, and as long in ticks at any other.
	DefaultTimeoutTicks = 200
	// RequestTimeoutTicks is the per-request timeout the client is told
	// to use, in ticks: long enough for a late commit of a few ticks to
	// land while the client waits, and for a client that starts slowly
	// (Node, a JVM) to get its first request out while every row starts
	// at once on a small machine; short enough that a row takes about a
	// second.
	RequestTimeoutTicks = 10
	// MinTimeoutTicks is the shortest bound on a scenario: room for a
	// request timeout, what follows it, and a second run.
	MinTimeoutTicks = 3 * RequestTimeoutTicks
	// RetentionTicks is how long keys are kept in a row that does not
	// make them expire: far beyond any retry the row provokes.
	RetentionTicks = 200
	// maxRestarts bounds the runs a row's crashes can start.
	maxRestarts = 4
	// APIKey is the test secret key the client authenticates with.
	APIKey = "sk_test_replaylab_conform"
)

// Config is what a conform run is asked to do.
type Config struct {
	// Command is the client command and its arguments.
	Command []string
	// Tick is how long one ledger tick lasts; Timeout bounds each
	// scenario from its client's first request; Parallel limits the
	// scenarios run at once (0: PerCore per core).
	Tick     time.Duration
	Timeout  time.Duration
	Parallel int
	// Env is the environment the client runs in, before the contract's
	// variables are added; nil is this process's.
	Env []string
	// TempDir is where state directories are made; "" is the system's.
	TempDir string
	// MCP serves each scenario's provider as MCP tools too, and tells the
	// client where (REPLAYLAB_MCP_URL): the client under test is an agent
	// that reaches its refund tool through MCP.
	MCP bool
	// MCPRevision, with MCP, narrows the MCP revisions the provider
	// serves to one (serve.MCPRevisionSession or
	// serve.MCPRevisionPerRequest), and tells the client which
	// (REPLAYLAB_MCP_REVISION); "" serves both.
	MCPRevision string
	// Provider, when set, is the profile every row's provider plays: its
	// retention (wall time), the answers it keeps, its in-flight and
	// mismatch answers. A row that cannot happen under it is graded n/a.
	// Nil plays each row's own provider, as the matrix is written.
	Provider *ledger.Profile
}

// transport is how the client reaches the provider, as the report says it.
func (c Config) transport() string {
	if c.MCP {
		return "mcp"
	}
	return "http"
}

func (c Config) withDefaults() Config {
	if c.Tick == 0 {
		c.Tick = DefaultTick
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeoutTicks * c.Tick
	}
	if c.Env == nil {
		c.Env = os.Environ()
	}
	return c
}

// MaxTick is the longest tick a row runs under: its request timeout is
// RequestTimeoutTicks ticks of wall time, which a row waits out.
const MaxTick = time.Minute

// CheckTick is the provider's bound on a tick (serve.CheckTickUpTo), up to
// MaxTick, for Validate and the command's --tick.
func CheckTick(tick time.Duration) error {
	return serve.CheckTickUpTo(tick, MaxTick, fmt.Sprintf("e.g. 100ms (the client's request timeout is %d ticks)", RequestTimeoutTicks))
}

// CheckTimeout is the one bound on a scenario's timeout, for Validate and
// the command's --timeout: room for a request timeout and what follows
// it, and at most a day.
func CheckTimeout(timeout, tick time.Duration) error {
	if least := MinTimeoutTicks * tick; timeout < least || timeout > 24*time.Hour {
		return fmt.Errorf("timeout %v: give a duration from %v (%d ticks of %v: room for a request timeout and what follows it) to 24h, e.g. 20s", timeout, least, MinTimeoutTicks, tick)
	}
	return nil
}

// Validate rejects a configuration that cannot run, saying what would.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case len(c.Command) == 0:
		return errors.New("no client command; give it after --, e.g. replaylab conform -- ./my-client")
	case CheckTick(c.Tick) != nil:
		return CheckTick(c.Tick)
	case CheckTimeout(c.Timeout, c.Tick) != nil:
		return CheckTimeout(c.Timeout, c.Tick)
	case c.Parallel < 0:
		return fmt.Errorf("parallel %d: give 0 (%d per core) or more", c.Parallel, PerCore)
	case serve.CheckMCPRevision(c.MCPRevision) != nil:
		return serve.CheckMCPRevision(c.MCPRevision)
	case c.MCPRevision != "" && !c.MCP:
		return errors.New("--mcp-revision is the revision of the MCP tools an agent is graded over; give --mcp with it")
	}
	if err := findCommand(c.Command[0]); err != nil {
		return err
	}
	// State directories go here; find out now if they cannot.
	probe, err := os.MkdirTemp(c.TempDir, "replaylab-conform-probe-*")
	if err != nil {
		return fmt.Errorf("no place for the clients' state directories: %v (set TMPDIR to a writable directory)", errors.Unwrap(err))
	}
	return os.Remove(probe)
}

// stateDirPrefix names the clients' state directories.
const stateDirPrefix = "replaylab-conform-"

// PerCore is how many rows run at once per core when Parallel is 0: a
// row mostly waits on its client's timeouts, so a core keeps a few busy,
// and a machine's load never decides a grade.
const PerCore = 4

// slots is how many rows run at once.
func (c Config) slots() int {
	if c.Parallel > 0 {
		return c.Parallel
	}
	return PerCore * runtime.NumCPU()
}

// RequestTimeout is the per-request timeout the client is told to use.
func (c Config) RequestTimeout() time.Duration { return RequestTimeoutTicks * c.withDefaults().Tick }

// Run plays each scenario against the client command and grades it. The
// rows come in the order of scenarios. When ctx ends (Ctrl-C), every
// client is killed with its group, every provider stopped and every
// state directory removed; the rows that did not end are graded not_run.
func Run(ctx context.Context, cfg Config, scenarios []*Scenario) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	// The state directories a conform killed mid-run left behind.
	tmp := cfg.TempDir
	if tmp == "" {
		tmp = os.TempDir()
	}
	atomicfile.Sweep(tmp, stateDirPrefix)
	began := time.Now()
	rep := &Report{
		Command: cfg.Command, Transport: cfg.transport(), MCPRevision: cfg.MCPRevision, Provider: providerID(cfg.Provider),
		TickMillis: cfg.Tick.Milliseconds(), RequestTimeoutMillis: cfg.RequestTimeout().Milliseconds(), TimeoutMillis: cfg.Timeout.Milliseconds(),
		Rows: make([]Row, len(scenarios)),
	}
	// Rows start in the order given, as slots free up.
	rep.Rows = runRows(ctx, cfg, scenarios)
	rep.Millis = time.Since(began).Milliseconds()
	if err := unstartable(rep); err != nil {
		return nil, err
	}
	for _, row := range rep.Rows {
		if row.Grade == GradePass {
			rep.Passed++
		}
		if row.Grade == GradeNA {
			rep.NA++
		}
		if row.Grade == GradeNotRun {
			rep.Interrupted = ctx.Err() != nil
		}
	}
	return rep, nil
}

// couldNotStart opens the standard error of a run whose command could not
// be started, followed by why.
const couldNotStart = "could not start: "

// unstartable is the error every run of every row met when the command
// could not be started at all (a file that is not a program): bad usage,
// not a grade.
func unstartable(rep *Report) error {
	var first string
	for _, row := range rep.Rows {
		for _, run := range row.Runs {
			msg, ok := strings.CutPrefix(run.Stderr, couldNotStart)
			if !ok || (first != "" && msg != first) {
				return nil
			}
			first = msg
		}
	}
	if first == "" {
		return nil
	}
	return fmt.Errorf("the client command %q could not be started: %s", rep.Command[0], first)
}

// rowRun is one run of the command within a row.
type rowRun struct {
	why      string
	intents  []Intent
	child    *child
	startErr error
}

// runScenario plays one row: a fresh provider, the runs the row needs,
// then the judgement.
func runScenario(ctx context.Context, cfg Config, sc *Scenario) Row {
	began := time.Now()
	row := Row{Scenario: sc.ID(), Title: sc.Mission.Title, Intents: blankIntents(sc), Runs: []ClientRun{}}
	notRun := func(why string) Row {
		row.Grade, row.Why, row.Millis = GradeNotRun, why, time.Since(began).Milliseconds()
		return row
	}

	retention := RetentionTicks * cfg.Tick
	if sc.Expires {
		retention = (RequestTimeoutTicks / 2) * cfg.Tick
	}
	opts := serve.Options{Mission: sc.Mission}
	if p := cfg.Provider; p != nil {
		if why := notApplicable(cfg, sc); why != "" {
			row.Grade, row.Why = GradeNA, why
			return row
		}
		opts.Contract, opts.Profile = providers.CaseName(p), p
		if !p.Keyless() {
			retention = time.Duration(p.Retention) * time.Second
		}
	}
	// The provider counts a key's life in whole ticks from the tick its
	// first request arrived in; the client is told a tick less, so that a
	// window it counts from before its send never outlives the key.
	retentionMs := (retention - cfg.Tick).Milliseconds()
	if sc.NoContract() && cfg.Provider == nil || cfg.Provider != nil && cfg.Provider.Keyless() {
		retentionMs = 0
	}
	var (
		mu      sync.Mutex
		runs    []*rowRun
		live    []*rowRun
		crashed bool
	)
	// A create that meets crash_after_send commits; before its connection
	// closes, the client dies, as a process that crashed after sending.
	onCrash := func(string) {
		mu.Lock()
		var victims []*rowRun
		for _, r := range live {
			if r.child.running() {
				victims = append(victims, r)
			}
		}
		// Set before the kill, which lets the batch end: the restart
		// must already be due when launch returns.
		crashed = crashed || len(victims) > 0
		mu.Unlock()
		for _, r := range victims {
			r.child.kill("when its refund committed (crash_after_send)")
		}
	}
	// A run's budget counts from its first request, so that a client
	// slow to start (Node on a loaded machine) is graded as one that
	// starts at once; a run that sends nothing has as long again to
	// start. The budget's timer is made once the provider is: onRequest
	// reads it only after arm, which runs once the timer is set and before
	// the listener takes a request.
	var (
		awaitFirst atomic.Bool
		budget     *time.Timer
	)
	onRequest := func() {
		if awaitFirst.CompareAndSwap(true, false) {
			budget.Reset(cfg.Timeout)
		}
	}
	opts.Tick, opts.Retention, opts.Hold, opts.MCP, opts.MCPRevision = cfg.Tick, retention, cfg.Timeout+time.Minute, cfg.MCP, cfg.MCPRevision
	opts.Hooks = serve.Hooks{OnCrash: onCrash, OnRequest: onRequest}
	srv, err := serve.New(opts)
	if err != nil {
		return notRun("the provider could not start: " + err.Error())
	}

	// What the client still waited on is taken as the row ends.
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var waitingOn []export.SessionRequest
	budget = time.AfterFunc(time.Hour, func() {
		open := openRequests(srv.Session())
		mu.Lock()
		waitingOn = open
		mu.Unlock()
		if awaitFirst.Load() {
			cancel(killReason(fmt.Sprintf("at the scenario's timeout (%v: it sent no request in twice its budget)", 2*cfg.Timeout)))
			return
		}
		cancel(killReason(fmt.Sprintf("at the scenario's timeout (%v from the run's first request)", cfg.Timeout)))
	})
	defer budget.Stop()
	arm := func() {
		awaitFirst.Store(true)
		budget.Reset(2 * cfg.Timeout)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return notRun("no loopback port: " + err.Error())
	}
	// Adyen's library speaks HTTPS alone: on Adyen's wire (REST) the
	// provider serves TLS, with a certificate the client is given.
	wire, scheme, certFile := srv.Options().Wire, "http://", ""
	if wire == serve.WireAdyen && !cfg.MCP {
		tln, certPEM, err := serve.WrapTLS(ln, time.Now())
		if err == nil {
			certFile, err = writeCert(cfg.TempDir, certPEM)
		}
		if err != nil {
			ln.Close()
			return notRun("no TLS for Adyen's wire: " + err.Error())
		}
		defer os.Remove(certFile)
		ln, scheme = tln, "https://"
	}
	hs := serve.NewHTTPServer(srv)
	served := make(chan struct{})
	go func() { _ = hs.Serve(ln); close(served) }()
	stopServer := func() {
		srv.Release()
		hs.Stop(2 * time.Second)
		<-served
	}
	state, err := os.MkdirTemp(cfg.TempDir, atomicfile.TempPattern(stateDirPrefix, ""))
	if err != nil {
		stopServer()
		return notRun("no state directory: " + err.Error())
	}
	defer removeAll(state)

	// The token marks every process of this row, for the sweep at its end.
	var raw [12]byte
	_, _ = rand.Read(raw[:])
	token := "REPLAYLAB_CONFORM_RUN=" + hex.EncodeToString(raw[:])
	mcpURL := ""
	if cfg.MCP {
		mcpURL = "http://" + ln.Addr().String() + serve.MCPPath
	}
	base := contractEnv(cfg.Env, map[string]string{
		"REPLAYLAB_MCP_URL":            mcpURL,
		"REPLAYLAB_MCP_REVISION":       cfg.MCPRevision,
		"REPLAYLAB_API_BASE":           scheme + ln.Addr().String(),
		"REPLAYLAB_WIRE":               wire,
		"REPLAYLAB_INTENT_FIELD":       srv.Options().IntentField,
		"REPLAYLAB_TLS_CERT":           certFile,
		"REPLAYLAB_API_KEY":            APIKey,
		"REPLAYLAB_SCENARIO":           sc.ID(),
		"REPLAYLAB_STATE_DIR":          state,
		"REPLAYLAB_REQUEST_TIMEOUT_MS": strconv.FormatInt(cfg.RequestTimeout().Milliseconds(), 10),
		"REPLAYLAB_KEY_RETENTION_MS":   strconv.FormatInt(retentionMs, 10),
	})
	base = append(base, token)
	launch := func(batch []*rowRun) {
		// The batch is started under mu, so that a crash the first of
		// them provokes finds every one of them to kill.
		arm()
		mu.Lock()
		live = nil
		for _, r := range batch {
			intentsJSON, _ := json.Marshal(r.intents)
			env := append(append([]string{}, base...), "REPLAYLAB_INTENTS="+string(intentsJSON))
			r.child, r.startErr = start(rctx, cfg.Command, env, "")
			runs = append(runs, r)
			if r.child != nil {
				live = append(live, r)
			}
		}
		mu.Unlock()
		for _, r := range batch {
			if r.child != nil {
				<-r.child.done
			}
		}
		// Between runs the budget does not run: the next is armed anew.
		budget.Stop()
	}
	first := make([]*rowRun, sc.Workers)
	for w := range first {
		first[w] = &rowRun{why: "first run", intents: sc.Intents}
		if sc.Workers > 1 {
			first[w].why = fmt.Sprintf("worker %d of %d, at once", w+1, sc.Workers)
		}
	}
	launch(first)
	for restarts := 0; rctx.Err() == nil && restarts < maxRestarts; restarts++ {
		mu.Lock()
		again := crashed
		crashed = false
		mu.Unlock()
		if !again {
			break
		}
		launch([]*rowRun{{why: "restarted after the kill, same state", intents: sc.Intents}})
	}
	if sc.Changed != nil && rctx.Err() == nil {
		launch([]*rowRun{{why: "again, with " + changeWords(sc), intents: sc.Changed}})
	}
	interrupted := ctx.Err() != nil
	sweep(token)
	// What the client left behind, before the clock is settled: a pending
	// belief is judged against this.
	before := srv.Session()
	stopServer()
	after := srv.Finish()

	row.Session = after
	row.Millis = time.Since(began).Milliseconds()
	var hung []string
	silent := false
	got := newBeliefs(sc)
	for i, r := range runs {
		run := ClientRun{Run: i + 1, Why: r.why, Exit: -1}
		if r.startErr != nil {
			run.Stderr = couldNotStart + r.startErr.Error()
			row.Problems = append(row.Problems, fmt.Sprintf("run %d could not start: %v", i+1, r.startErr))
			row.Runs = append(row.Runs, run)
			continue
		}
		c := r.child
		run.Exit, run.Killed = c.exitCode(), c.reason()
		run.Stdout, run.Stderr = c.out.String(), c.errs.String()
		if run.Killed != "" {
			run.Exit = -1
		}
		if strings.HasPrefix(run.Killed, "at the scenario's timeout") {
			hung = append(hung, strconv.Itoa(i+1))
			silent = silent || strings.Contains(run.Killed, "sent no request")
		}
		lines, overflow := c.out.beliefLines()
		got.read(i+1, lines, overflow)
		row.Runs = append(row.Runs, run)
	}
	row.Problems = append(row.Problems, got.problems...)
	if interrupted {
		row.Grade, row.Why = GradeNotRun, "Interrupted before the row ended."
		row.Intents = intentsOf(sc, after, got)
		return row
	}
	row.Intents = intentsOf(sc, after, got)
	held := ""
	if len(hung) > 0 {
		mu.Lock()
		held = heldWords(waitingOn, cfg)
		mu.Unlock()
	}
	row.Grade, row.Why, row.Hung = judge(sc, before, after, row.Intents, row.Runs,
		conduct{hung: hung, silent: silent, timeout: cfg.Timeout, held: held, problems: row.Problems})
	return row
}

// removeAll removes a state directory, even one in which the client took
// away its own write permission.
func removeAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(path, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// writeCert writes the provider's certificate (PEM) for the client to
// trust, in dir.
func writeCert(dir string, pem []byte) (string, error) {
	f, err := os.CreateTemp(dir, atomicfile.TempPattern(stateDirPrefix, "cert.pem"))
	if err != nil {
		return "", err
	}
	_, err = f.Write(pem)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// contractEnv is env without any REPLAYLAB_ variable, then vars (those
// given empty left out: REPLAYLAB_MCP_URL without --mcp).
func contractEnv(env []string, vars map[string]string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "REPLAYLAB_") {
			out = append(out, kv)
		}
	}
	for _, k := range []string{"REPLAYLAB_API_BASE", "REPLAYLAB_WIRE", "REPLAYLAB_INTENT_FIELD", "REPLAYLAB_TLS_CERT", "REPLAYLAB_MCP_URL", "REPLAYLAB_MCP_REVISION", "REPLAYLAB_API_KEY", "REPLAYLAB_SCENARIO", "REPLAYLAB_STATE_DIR", "REPLAYLAB_REQUEST_TIMEOUT_MS", "REPLAYLAB_KEY_RETENTION_MS"} {
		if vars[k] != "" {
			out = append(out, k+"="+vars[k])
		}
	}
	return out
}

// changeWords says what the later run changes: "amount 4000 for refund-1042".
func changeWords(sc *Scenario) string {
	var parts []string
	for i, in := range sc.Changed {
		if in.Amount != sc.Intents[i].Amount {
			parts = append(parts, fmt.Sprintf("amount %d for %s (was %d)", in.Amount, in.Intent, sc.Intents[i].Amount))
		}
	}
	return strings.Join(parts, ", ")
}

// blankIntents are the scenario's intents with nothing known of them yet.
func blankIntents(sc *Scenario) []RowIntent {
	out := make([]RowIntent, len(sc.Intents))
	for i, in := range sc.Intents {
		out[i] = RowIntent{Intent: in.Intent, Beliefs: []Belief{}}
	}
	return out
}

// liveObjects are the refunds standing for intent in a ledger: those that
// did not end failed.
func liveObjects(l ledger.Snapshot, intent string) []ledger.Object {
	var out []ledger.Object
	for _, o := range l.Objects {
		if o.Intent == intent && o.Status.Stands() {
			out = append(out, o)
		}
	}
	return out
}

// openRequests are the requests of a session whose replies were still
// held or being written when it was taken.
func openRequests(s *export.Session) []export.SessionRequest {
	var out []export.SessionRequest
	for _, r := range s.Requests {
		if r.Wire == export.WireOpen {
			out = append(out, r)
		}
	}
	return out
}

// heldWords says what the client still waited on as its row ended: the
// request, held since which tick, and that the client's own timeout is
// longer than the one it was told to use; "" when it waited on none.
func heldWords(open []export.SessionRequest, cfg Config) string {
	if len(open) == 0 {
		return ""
	}
	r := open[0]
	what := r.Kind
	switch {
	case r.Call != nil:
		what = r.Call.Tool
	case r.Kind == export.RequestCreate:
		what = "POST /v1/refunds"
	case r.Kind == export.RequestList:
		what = "GET /v1/refunds"
	case r.Kind == export.RequestRetrieve:
		what = "GET /v1/refunds/" + r.Payload
	}
	return fmt.Sprintf("It was still waiting on %s (request %d, held since tick %d, %v in): its own request timeout is longer than REPLAYLAB_REQUEST_TIMEOUT_MS (%dms), which a lost reply is held for; docs/agents.md says where each agent framework sets it.",
		what, r.Seq, r.Tick, time.Duration(r.Tick)*cfg.Tick, cfg.RequestTimeout().Milliseconds())
}

// notApplicable says why a row cannot happen under the provider's
// profile, or "" when it can: a row written for a provider without a
// contract, under one that has one; a row whose retry comes after the
// key expired, under a profile that keeps keys longer than any run.
func notApplicable(cfg Config, sc *Scenario) string {
	p := cfg.Provider
	switch {
	case sc.NoContract() && !p.Keyless():
		return fmt.Sprintf("%s has an idempotency contract; this row plays a provider without one (the profile none)", p.ID)
	case sc.Expires && p.Keyless():
		return fmt.Sprintf("%s keeps no keys, so no key can expire before the retry", p.ID)
	case sc.Expires && time.Duration(p.Retention)*time.Second > cfg.Timeout:
		return fmt.Sprintf("%s keeps keys %s; no retry inside a run (at most %v) outlives them", p.ID, p.Retention.Words(), cfg.Timeout)
	}
	return ""
}

// providerID is the id a report names the profile by, "" for none.
func providerID(p *ledger.Profile) string {
	if p == nil {
		return ""
	}
	return p.ID
}
