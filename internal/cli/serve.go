package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/atomicfile"
	"github.com/replaylab/replaylab/internal/infile"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/render"
	"github.com/replaylab/replaylab/serve"
	"github.com/replaylab/replaylab/traces"
)

// serveFlags are serve's settings as given.
type serveFlags struct {
	addr, contract, provider, mission, intentField, record, resolve, db string
	shouldRetry, toolErrors, mcpRevision, wire, webhook, webhookHMAC    string
	webhookFaults                                                       []string
	faults, failOn                                                      []string
	tick, retention, hold                                               time.Duration
	delay, until, lag                                                   int
	tlsCert                                                             string
	force, compareMetadata, mcp, stdio, tls                             bool
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve a Stripe-shaped refunds API (and MCP tools) with faults, for your own client",
		Long: `Serve the simulated provider over HTTP, speaking enough of Stripe's v1 refunds
API (POST /v1/refunds, GET /v1/refunds/{id}, GET /v1/refunds) that a Stripe
client library works unchanged, so you can see what your own client does to
the ledger when replies are lost.

Each create meets a fault from the fixture table, as a mission's attempts do:
--faults gives the faults successive creates meet (then success), --mission
plays a mission's schedule, each intent's creates meeting that intent's
fixtures in order. On the wire:
  timeout_after_commit       commits, holds the reply until the client gives
                             up, then closes without one (--hold caps it)
  timeout_before_commit      never executes; held and closed the same way
  server_error_after_commit  commits and saves a 500
  late_commit                holds the request; it commits --delay ticks later
  pending                    a pending refund that resolves --delay ticks later
  crash_after_send           commits, then closes the connection at once
  failure_before_commit      refused before execution; nothing saved
Reads (GET /v1/refunds, GET /v1/refunds/{id}, the MCP read tools) meet the
read faults in --faults, or a mission's reads, in order (then none):
  read_server_error          answers 500 and shows nothing
  read_timeout               never answers; held until the client gives up
  read_lagging               shows the ledger as it was --lag ticks ago, as
                             a search index that is not read-after-write does

The API spoken is the provider profile's own where serve speaks it (--provider
adyen, paypal, square or checkout), else Stripe's; --wire chooses another:
  stripe    POST /v1/refunds, GET /v1/refunds[/{id}]
  adyen     POST /checkout/v71/payments/{pspReference}/refunds (Idempotency-Key),
            the outcome as signed REFUND webhooks to --webhook
  paypal    POST /v1/oauth2/token, POST /v2/payments/captures/{id}/refund
            (PayPal-Request-Id), GET /v2/payments/refunds/{id}
  square    POST /v2/refunds (idempotency_key in the body), GET /v2/refunds[/{id}]
  checkout  POST /payments/{id}/refunds (Cko-Idempotency-Key),
            GET /payments/{id}/actions

A create is linked to its intent by --intent-field (default metadata[intent];
reference on Adyen's and Checkout.com's wires, custom_id on PayPal's, reason
on Square's).
A create without it is refused with a 400 that names the field, before it
executes: the provider cannot judge a refund it cannot link.

As Stripe does, a repeated key must come with the same parameters,
metadata included (--compare-metadata=false leaves metadata out); every reply
carries Request-Id and Stripe-Version, and Stripe-Should-Retry where Stripe
sends it (--should-retry forces it); a pending refund can be canceled
(POST /v1/refunds/{id}/cancel), and a refund's metadata updated
(POST /v1/refunds/{id}).

The control endpoint under /_replaylab/ sets faults (POST faults), moves the
clock (POST advance), reads the state (GET state, GET session) and starts
over (POST reset) without a restart.

With --mcp, the same provider is also served as MCP tools for agents
(create_refund, get_refund, list_refunds) over Streamable HTTP at /mcp: one
ledger, one clock, one set of faults and verdicts for both. A lost reply is a
tool call that never answers (a cancellation is recorded and undoes nothing);
crash_after_send closes the call's response stream after the commit.
--mcp --stdio speaks MCP over standard input and output instead, for hosts
that launch a server command, with the banner and verdicts on standard error.
--tool-errors opaque makes every error result of a refund create say only
"Failed to create refund", so that an agent cannot tell a refusal from a
saved server error (a refusal of the call itself, a missing argument, stays
in words).

On Ctrl-C, SIGTERM or --until N requests, serve settles the clock, prints a
verdict per intent and, with --record, writes the session: compare sets it
beside simulated cases, and replay re-submits its requests to a fresh ledger.`,
		Example: `  replaylab serve --faults timeout_after_commit,success
  replaylab serve --mission timeout-then-success --record session.json
  replaylab serve --contract v2 --faults server_error_after_commit --until 4
  replaylab serve --mcp --faults timeout_after_commit
  replaylab serve --mcp --stdio --mission the-model-calls-again --record s.json
  curl -s -u sk_test_123: localhost:12111/v1/refunds -H 'Idempotency-Key: k1' \
    -d charge=ch_1042 -d amount=4500 -d 'metadata[intent]=refund-1042'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", serve.DefaultAddr, "listen on `HOST:PORT` (loopback unless you name another host; port 0 picks a free one)")
	fl.StringVar(&f.provider, missions.FlagProvider, "", "the provider's profile: a built-in (replaylab providers lists them) or a profile `FILE` (default: the mission's, else stripe-v1)")
	fl.StringVar(&f.contract, missions.FlagContract, "", "the provider's contract by its old name: v1, v2 or none")
	fl.StringSliceVar(&f.faults, "faults", nil, "faults successive creates meet, comma-separated; then success")
	fl.StringVar(&f.mission, "mission", "", "play mission `ID`'s schedule: each intent's creates meet its fixtures in order")
	fl.StringVar(&f.intentField, "intent-field", "", "the request field that links a create to its intent: on Stripe's wire metadata[NAME], charge or payment_intent (default metadata[intent]); on Adyen's and Checkout.com's reference, PayPal's custom_id or invoice_id, Square's reason")
	fl.StringVar(&f.webhook, "webhook", "", "on Adyen's wire: post each refund's outcome as a signed REFUND notification to `URL` (http or https, loopback)")
	fl.StringVar(&f.webhookHMAC, "webhook-hmac", "", "the HMAC key (`HEX`) notifications are signed with (default "+serve.DefaultWebhookHMAC+")")
	fl.StringSliceVar(&f.webhookFaults, "webhook-faults", nil, "what successive notifications meet, comma-separated: lost, late (--delay ticks), twice or delivered; then delivered")
	fl.BoolVar(&f.tls, "tls", false, "serve HTTPS, with a certificate made at start for 127.0.0.1, ::1 and localhost (Adyen's library speaks only HTTPS)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "with --tls: write the certificate's PEM to `FILE`, for a client to trust (NODE_EXTRA_CA_CERTS=FILE)")
	fl.StringVar(&f.wire, "wire", "", "the provider API to speak: stripe, adyen, paypal, square or checkout (default: the profile's own, else stripe)")
	fl.DurationVar(&f.tick, "tick", serve.DefaultTick, "how long one ledger tick lasts")
	fl.DurationVar(&f.retention, "retention", 0, "how long keys are kept (default: the mission's retention in ticks, else 24h)")
	fl.DurationVar(&f.hold, "hold", serve.DefaultHold, "safety cap on a lost reply, held until the client gives up (stripe-node and stripe-go wait 80s)")
	fl.StringVar(&f.shouldRetry, "should-retry", serve.ShouldRetryAuto, "the Stripe-Should-Retry header: auto (what Stripe sends), true, false or omit")
	fl.BoolVar(&f.compareMetadata, "compare-metadata", true, "a repeated key must come with the same metadata too, as at Stripe; false leaves metadata out of the comparison")
	fl.Var(newWholeFlag(&f.delay, serve.DefaultDelay, 1, serve.MaxDelay, fmt.Sprintf("a whole number of ticks from 1 to %d", serve.MaxDelay)), "delay", "ticks until a listed late_commit lands or a pending refund resolves")
	fl.StringVar(&f.resolve, "resolve", "succeeded", "what a listed pending refund ends as: succeeded or failed")
	fl.Var(newWholeFlag(&f.lag, serve.DefaultLag, 1, missions.MaxTicks, fmt.Sprintf("a whole number of ticks from 1 to %d", missions.MaxTicks)), "lag", "ticks behind the ledger a listed read_lagging read shows it")
	fl.Var(newWholeFlag(&f.until, 0, 0, 1<<30, "a whole number of requests (0: until Ctrl-C)"), "until", "stop after `N` API requests (0: until Ctrl-C or SIGTERM)")
	fl.StringVar(&f.record, "record", "", "write the session to `FILE` when serve stops: a session (.json) for compare and replay, a history (.jsonl) for check, or the provider's spans (.otlp.jsonl) for a trace viewer")
	fl.StringVar(&f.db, "db", "", "keep the provider's state in the database `FILE` (made if missing, recovered after a crash); without it, in memory")
	fl.BoolVar(&f.force, "force", false, "overwrite the --record file if it exists")
	fl.BoolVar(&f.mcp, "mcp", false, "serve the provider as MCP tools too, over Streamable HTTP at /mcp")
	fl.BoolVar(&f.stdio, "stdio", false, "with --mcp: speak MCP over standard input and output instead of listening (banner and verdicts on standard error)")
	fl.StringVar(&f.mcpRevision, "mcp-revision", "", "with --mcp, serve one MCP revision only: 2025-11-25 (initialize and sessions) or 2026-07-28 (no sessions: each request carries its revision) (default: both)")
	fl.StringVar(&f.toolErrors, "tool-errors", serve.ToolErrorsPlain, "with --mcp, what a refused or failed create says: plain (the provider's words) or opaque (only \"Failed to create refund\")")
	fl.StringSliceVar(&f.failOn, "fail-on", nil, "exit 1 when an intent ends with one of these verdicts, e.g. duplicate,hidden_effect,phantom")
	registerMissionsDir(cmd)
	return cmd
}

// options turns the flags into the provider's options.
func (f *serveFlags) options(cmd *cobra.Command) (serve.Options, error) {
	if err := serve.CheckWire(f.wire); err != nil {
		return serve.Options{}, badInput(fmt.Errorf("--%w", err))
	}
	o := serve.Options{Tick: f.tick, Retention: f.retention, Hold: f.hold, Delay: f.delay, IntentField: f.intentField, Wire: f.wire,
		Webhook: f.webhook, WebhookHMAC: f.webhookHMAC, WebhookFaults: f.webhookFaults,
		ShouldRetry: f.shouldRetry, MetadataOutsideDigest: !f.compareMetadata, MCP: f.mcp, ToolErrors: f.toolErrors, MCPRevision: f.mcpRevision}
	switch {
	case f.stdio && !f.mcp:
		return o, badInput(errors.New("--stdio speaks MCP over standard input and output; give --mcp with it (replaylab serve --mcp --stdio)"))
	case f.stdio && cmd.Flags().Changed("addr"):
		return o, badInput(errors.New("--addr and --stdio do not go together: with --stdio, serve listens on no port; leave out one of them"))
	case cmd.Flags().Changed("tool-errors") && !f.mcp:
		return o, badInput(errors.New("--tool-errors shapes the MCP tools' error results; give --mcp with it"))
	case cmd.Flags().Changed("mcp-revision") && (!f.mcp || f.stdio):
		return o, badInput(errors.New("--mcp-revision narrows the MCP revisions served over HTTP at /mcp; give --mcp without --stdio with it"))
	}
	// Each bound given is checked as given; serve.Run validates the rest.
	for _, name := range []string{"mcp-revision", "tool-errors", "should-retry", "tick", "hold", "retention"} {
		if name != "retention" || cmd.Flags().Changed(name) {
			if err := o.Check(name); err != nil {
				return o, badInput(fmt.Errorf("--%w", err))
			}
		}
	}
	c, prof, err := providerFlags(cmd, f.provider, f.contract)
	if err != nil {
		return o, err
	}
	if c != nil {
		o.Contract, o.Profile = *c, prof
	}
	st, err := ledger.ParseStatus(f.resolve)
	if err != nil || !st.Terminal() {
		return o, badInput(fmt.Errorf("--resolve %q: a pending refund ends succeeded or failed", f.resolve))
	}
	o.Resolve = st
	if cmd.Flags().Changed("faults") {
		// A fixture is for creates, a read fault for reads: each list
		// keeps its order.
		type fault struct {
			create missions.Fixture
			read   missions.ReadFault
		}
		parse := func(w string) (fault, error) {
			if strings.HasPrefix(w, "read_") {
				r, err := missions.ParseReadFault(w)
				return fault{read: r}, err
			}
			fx, err := missions.ParseFixture(w)
			if err != nil {
				err = fmt.Errorf("%w, or for reads: %s", err, termtext.JoinWords(missions.ReadFaults))
			}
			return fault{create: fx}, err
		}
		faults, err := parseWords("faults", f.faults, parse, false, "give fixtures and read faults, comma-separated, or leave --faults out for success every time")
		if err != nil {
			return o, err
		}
		for _, ft := range faults {
			if ft.read != "" {
				rs := missions.ReadStep{Fault: ft.read}
				if ft.read == missions.ReadLagging {
					rs.Lag = f.lag
				}
				o.ReadFaults = append(o.ReadFaults, rs)
			} else {
				o.Faults = append(o.Faults, ft.create)
			}
		}
	}
	if cmd.Flags().Changed("lag") && !slices.ContainsFunc(o.ReadFaults, func(r missions.ReadStep) bool { return r.Fault == missions.ReadLagging }) {
		if f.mission != "" {
			return o, badInput(errors.New("--lag is how far behind a read_lagging read in --faults shows the ledger; a mission's reads carry their own lag, so leave --lag out"))
		}
		return o, badInput(errors.New("--lag is how far behind a read_lagging read shows the ledger; give read_lagging in --faults, or leave --lag out"))
	}
	if f.mission != "" {
		m, err := missionArg(cmd, f.mission)
		if err != nil {
			return o, err
		}
		o.Mission = m
	}
	// Checked now, before any file is looked at, as serve.Run will.
	if err := o.Validate(); err != nil {
		return o, badInput(err)
	}
	return o, nil
}

func runServe(cmd *cobra.Command, f *serveFlags) error {
	o, err := f.options(cmd)
	if err != nil {
		return err
	}
	fail, err := parseFailOn(f.failOn, cmd.Flags().Changed("fail-on"))
	if err != nil {
		return err
	}
	if f.record == "" && cmd.Flags().Changed("record") {
		return badInput(errors.New("--record is empty; give a file path, or leave --record out"))
	}
	if f.record != "" {
		// Refuse now, so the session is not lost at the end.
		if err := checkWritable(f.record, f.force, false); err != nil {
			return err
		}
		if err := probeWrite(f.record); err != nil {
			return err
		}
		// What a serve killed while it wrote its session left there.
		atomicfile.Sweep(filepath.Dir(f.record), atomicfile.TempPrefix)
	}
	if f.db != "" && f.record != "" && atomicfile.SamePath(f.db, f.record) {
		return badInput(fmt.Errorf("--record %s is the --db file: the session would overwrite the database; give --record another file", f.record))
	}
	if f.db == "" && cmd.Flags().Changed("db") {
		return badInput(errors.New("--db is empty; give a database file, or leave --db out to keep the ledger in memory"))
	}
	if (f.tls || f.tlsCert != "") && f.stdio {
		return badInput(errors.New("--tls and --tls-cert are for serving over HTTP; with --stdio serve listens on no port"))
	}
	cfg := serve.RunConfig{Options: o, Addr: f.addr, Stdio: f.stdio, DB: f.db, Until: f.until, TLS: f.tls || f.tlsCert != "", TLSCert: f.tlsCert,
		In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), Log: cmd.ErrOrStderr()}
	if point := os.Getenv("REPLAYLAB_FAILPOINT"); point != "" {
		cfg.Options.Hooks.Failpoint = serve.KillAt(point)
	}
	sess, runErr := serve.Run(cmd.Context(), cfg)
	var setup *serve.SetupError
	var storage *serve.StorageError
	switch {
	case errors.As(runErr, &setup):
		return badInput(setup.Err)
	case errors.As(runErr, &storage):
		return &exitError{code: exitStorage, err: storage}
	case sess == nil:
		return runErr
	}
	// Over stdio, standard output is the protocol's: the verdicts go to
	// standard error with the banner.
	out := cmd.OutOrStdout()
	if f.stdio {
		out = cmd.ErrOrStderr()
	}
	fmt.Fprint(out, render.SessionText(sess))
	if err := writeRecord(cmd.ErrOrStderr(), f.record, f.force, sess); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	return failedVerdicts(sess.Outcome.Verdicts, fail)
}

// writeRecord writes the session to path, if one was given: a history
// where path ends in .jsonl, else the session.
func writeRecord(log io.Writer, path string, force bool, sess *export.Session) error {
	if path == "" {
		return nil
	}
	format := export.RecordFormatOf(path)
	write := func(w io.Writer) error { return traces.WriteRecord(w, format, sess) }
	if err := writeFileAtomicWith(path, write, force); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		return infile.Error(path, err)
	}
	switch format {
	case export.RecordTraces:
		fmt.Fprintf(log, "wrote the provider's spans to %s (OTLP/JSON lines: open them in your trace viewer beside your agent's own)\n", path)
	case export.RecordHistory:
		fmt.Fprintf(log, "wrote the history to %s (check it with: replaylab check %s)\n", path, termtext.ShellWord(path))
	default:
		fmt.Fprintf(log, "wrote the session to %s (compare it with cases, replay it, or check it)\n", path)
	}
	return nil
}

// probeWrite makes and removes a file beside path: a directory that
// cannot be written is found before serving, not when the session ends.
func probeWrite(path string) error {
	if err := atomicfile.Probe(filepath.Dir(path)); err != nil {
		return badInput(fmt.Errorf("--record %s: cannot write in %s: %v", path, filepath.Dir(path), err))
	}
	return nil
}
