package serve

// The provider's options: their defaults and their bounds, each written
// once, for Validate and the command's flags.

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
)

// Defaults.
const (
	DefaultAddr      = "127.0.0.1:12111"
	DefaultTick      = time.Second
	DefaultRetention = 24 * time.Hour
	// DefaultHold is the safety cap on a held reply. A lost reply is held
	// until the client gives up: stripe-node and stripe-go time out after
	// 80 s, and a connection closed any sooner would read as a reset,
	// which stripe-node retries on its own. The cap only ends a hold no
	// client will ever end.
	DefaultHold = 10 * time.Minute
	// DefaultMCPIdle is how long an MCP session may sit idle before it
	// ends: one a client left without a DELETE is reclaimed after it.
	DefaultMCPIdle     = 10 * time.Minute
	DefaultIntentField = "metadata[intent]"
	// DefaultDelay is how many ticks a listed late_commit or pending
	// takes to land or resolve.
	DefaultDelay = 2
	// DefaultLag is how many ticks behind the ledger a listed
	// read_lagging read shows it.
	DefaultLag = 10
)

// Options configure a provider.
type Options struct {
	// Contract names the provider's profile as a session records it;
	// Profile is the profile itself, given for a user's own file (else
	// the built-in the name gives).
	Contract ledger.Contract
	Profile  *ledger.Profile
	// Tick is how long one ledger tick lasts.
	Tick time.Duration
	// Retention is how long a key is kept; 0 takes the mission's
	// retention (in ticks) with --mission, else DefaultRetention.
	Retention time.Duration
	// Hold bounds how long a reply is held back for a fault that times
	// the client out.
	Hold time.Duration
	// Faults are met by successive creates; after the last, creates meet
	// success. Mission, when set, schedules faults per intent instead.
	Faults  []missions.Fixture
	Mission *missions.Mission
	// ReadFaults are met by successive reads (a list, a refund by id);
	// after the last, reads are answered as the ledger stands. A
	// Mission's reads take their place.
	ReadFaults []missions.ReadStep
	// Delay (ticks) and Resolve are what a listed late_commit or pending
	// does.
	Delay   int
	Resolve ledger.Status
	// Wire is the provider's API served: one of Wires(); "" is the
	// profile's own (WireOf).
	Wire string
	// Webhook is where Adyen's wire posts its REFUND notifications (""
	// for none), signed with WebhookHMAC (hex; "" is DefaultWebhookHMAC);
	// WebhookFaults are what successive deliveries meet (then delivered).
	Webhook       string
	WebhookHMAC   string
	WebhookFaults []string
	// IntentField is the request field that links a create to its
	// intent; "" is the wire's default (metadata[intent] on Stripe's).
	IntentField string
	// MetadataOutsideDigest leaves metadata out of the payload digest, so
	// that a key reused with other metadata replays instead of being
	// refused. Stripe compares metadata; the default does too.
	MetadataOutsideDigest bool
	// ShouldRetry is what the Stripe-Should-Retry header says: ShouldRetryAuto
	// (the default, what Stripe sends), "true" or "false" on every reply,
	// or "omit" for none.
	ShouldRetry string
	// MCP serves the provider as MCP tools too: over Streamable HTTP at
	// MCPPath beside the REST API, and over stdio with ServeStdio.
	MCP bool
	// ToolErrors is what a tool's error result says: ToolErrorsPlain
	// (the default, the provider's words) or ToolErrorsOpaque.
	ToolErrors string
	// MCPRevision narrows the MCP revisions served over HTTP: "" serves
	// both kinds (MCPRevisionSession's initialize and sessions, and
	// MCPRevisionPerRequest's requests that carry their revision),
	// either one alone serves only it.
	MCPRevision string
	// MCPIdle is how long an MCP session may go without a request (one
	// held open counts as one) before it ends; 0 is DefaultMCPIdle.
	MCPIdle time.Duration
	// Now is the wall clock; nil is time.Now.
	Now func() time.Time
	// Hooks are what the provider tells its driver as it serves.
	Hooks Hooks
}

// Hooks are what a driver (serve's Run, conform's rig, a test) is told as
// the provider serves, given at New and never changed after; each one
// left nil is not called.
type Hooks struct {
	// OnServed is called with the count of API requests answered, after
	// each one (outside the provider's lock).
	OnServed func(n int)
	// OnFatal is told of a failed durable write: the server must stop,
	// and a restart recovers from what is on disk.
	OnFatal func(error)
	// OnCrash is called for a create that met crash_after_send, after the
	// refund committed and before the connection closes, with the
	// create's intent. A test rig uses it to kill the client at that
	// moment, so that the client never hears even the close.
	OnCrash func(intent string)
	// OnRequest is called as each HTTP request arrives, before it is
	// routed: a test rig counts a row's time from its client's first
	// request, whatever the client took to start.
	OnRequest func()
	// Failpoint is called at the durable boundaries of each step:
	// "before-commit" (nothing of it kept yet), "after-commit" (durable,
	// no reply gone) and "after-reply" (a create's reply written). It is
	// for the tests that end the process there (KillAt).
	Failpoint func(point string)
}

// withDefaults fills what was left out.
func (o Options) withDefaults() Options {
	if o.Profile != nil && o.Contract == "" {
		o.Contract = providers.CaseName(o.Profile)
	}
	if o.Contract == "" {
		o.Contract = ledger.V1
		if o.Mission != nil && o.Mission.Contract != "" {
			o.Contract = o.Mission.Contract
		}
	}
	if o.Profile == nil {
		o.Profile, _ = missions.ResolveProfile(o.Contract, nil)
	}
	if o.Tick == 0 {
		o.Tick = DefaultTick
	}
	if o.Hold == 0 {
		o.Hold = DefaultHold
	}
	if o.MCPIdle == 0 {
		o.MCPIdle = DefaultMCPIdle
	}
	if o.Delay == 0 {
		o.Delay = DefaultDelay
	}
	if o.Resolve == 0 {
		o.Resolve = ledger.Succeeded
	}
	if o.Wire == "" {
		o.Wire = WireOf(o.Profile)
	}
	if o.IntentField == "" {
		o.IntentField = DefaultIntentField
		if CheckWire(o.Wire) == nil {
			o.IntentField = newWire(o).intentFields()[0]
		}
	}
	if o.ShouldRetry == "" {
		o.ShouldRetry = ShouldRetryAuto
	}
	if o.ToolErrors == "" {
		o.ToolErrors = ToolErrorsPlain
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// retentionTicks is the retention as the ledger counts it.
func (o Options) retentionTicks() int {
	switch {
	case o.Retention > 0:
		return int((o.Retention + o.Tick - 1) / o.Tick)
	case o.Mission != nil && o.Mission.Retention > 0:
		return o.Mission.Retention
	case o.Profile != nil && o.Profile.Retention > 0:
		r := time.Duration(o.Profile.Retention) * time.Second
		return int((r + o.Tick - 1) / o.Tick)
	}
	return int((DefaultRetention + o.Tick - 1) / o.Tick)
}

// The MCP revisions serve speaks over HTTP: the newest with sessions,
// and the first without (SEP-2575: each request carries its revision,
// in the MCP-Protocol-Version header and its _meta).
const (
	MCPRevisionSession    = "2025-11-25"
	MCPRevisionPerRequest = "2026-07-28"
)

// CheckMCPRevision accepts "" (both), MCPRevisionSession or
// MCPRevisionPerRequest.
func CheckMCPRevision(rev string) error {
	switch rev {
	case "", MCPRevisionSession, MCPRevisionPerRequest:
		return nil
	}
	return fmt.Errorf("mcp-revision %q: give %s (initialize and sessions) or %s (no sessions: each request carries its revision), or leave it out to serve both", rev, MCPRevisionSession, MCPRevisionPerRequest)
}

// The bounds of a tick: MinTick, the finest a clock of wall time keeps
// apart, and MaxTick, a day.
const (
	MinTick = time.Millisecond
	MaxTick = 24 * time.Hour
)

// CheckTick: a tick lasts from MinTick to MaxTick.
func CheckTick(tick time.Duration) error { return CheckTickUpTo(tick, MaxTick, "e.g. 1s or 100ms") }

// CheckTickUpTo is the one bound on a tick, for a driver that takes
// ticks no longer than most (at most MaxTick): from MinTick to most, with
// an example in the words of the refusal.
func CheckTickUpTo(tick, most time.Duration, example string) error {
	most = min(most, MaxTick)
	if tick < MinTick || tick > most {
		return fmt.Errorf("tick %v: give a duration from %v to %s, %s", tick, MinTick, durationWords(most), example)
	}
	return nil
}

// durationWords is d as a flag takes it, whole hours or minutes as 24h
// or 1m rather than 24h0m0s.
func durationWords(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// CheckRetention: keys are kept at least one tick.
func CheckRetention(retention, tick time.Duration) error {
	if retention < tick {
		return fmt.Errorf("retention %v: give at least one tick (%v), e.g. 24h", retention, tick)
	}
	return nil
}

// CheckHold: a lost reply is held at least 1ms.
func CheckHold(hold time.Duration) error {
	if hold < time.Millisecond {
		return fmt.Errorf("hold %v: give a duration of at least 1ms, e.g. 10m: a reply a fault times out is held until the client gives up, at most this long", hold)
	}
	return nil
}

// MaxDelay is the most ticks a late commit or a pending refund waits.
const MaxDelay = 1 << 20

// CheckDelay: a late commit lands, and a pending refund resolves, 1 to
// MaxDelay ticks later.
func CheckDelay(delay int) error {
	if delay < 1 || delay > MaxDelay {
		return fmt.Errorf("delay %d: give a whole number of ticks from 1 to %d", delay, MaxDelay)
	}
	return nil
}

// CheckToolErrors: plain or opaque.
func CheckToolErrors(mode string) error {
	if !slices.Contains(ToolErrorModes(), mode) {
		return fmt.Errorf("tool-errors %q: give plain (the provider's words) or opaque (a refused or failed create says only %q)", mode, OpaqueError)
	}
	return nil
}

// CheckShouldRetry: auto, true, false or omit.
func CheckShouldRetry(mode string) error {
	if !slices.Contains(ShouldRetryModes(), mode) {
		return fmt.Errorf("should-retry %q: give auto (what Stripe sends for each reply), true, false or omit", mode)
	}
	return nil
}

// boundedOptions are the options Check holds to their bounds, by the name
// of the flag that sets each.
var boundedOptions = []string{"tick", "hold", "delay", "tool-errors", "should-retry", "retention", "mcp-revision"}

// Check holds one option, named as the flag that sets it, to its bounds,
// as it is given (a zero is not taken for the default): Validate checks
// each, and the command checks those it was given, so that a value given
// is never taken for the default that zero means. An option with no
// bound is nil.
func (o Options) Check(name string) error {
	switch name {
	case "tick":
		return CheckTick(o.Tick)
	case "hold":
		return CheckHold(o.Hold)
	case "delay":
		return CheckDelay(o.Delay)
	case "tool-errors":
		return CheckToolErrors(o.ToolErrors)
	case "should-retry":
		return CheckShouldRetry(o.ShouldRetry)
	case "retention":
		return CheckRetention(o.Retention, cmp.Or(o.Tick, DefaultTick))
	case "mcp-revision":
		return CheckMCPRevision(o.MCPRevision)
	}
	return nil
}

// Validate rejects options the provider cannot run, saying what would do.
func (o Options) Validate() error {
	o = o.withDefaults()
	if _, err := missions.ResolveProfile(o.Contract, carried(o.Profile)); err != nil {
		return err
	}
	for _, name := range boundedOptions {
		if name == "retention" && o.Retention == 0 {
			continue // zero: the mission's retention, else DefaultRetention
		}
		if err := o.Check(name); err != nil {
			return err
		}
	}
	if !o.Resolve.Terminal() {
		return fmt.Errorf("resolve %q: a pending refund ends succeeded or failed", o.Resolve)
	}
	if o.Mission != nil && (len(o.Faults) > 0 || len(o.ReadFaults) > 0) {
		return errors.New("--faults and --mission do not go together: a mission schedules its own faults per intent")
	}
	for _, r := range o.ReadFaults {
		if err := r.Check(); err != nil {
			return fmt.Errorf("read fault %s: %w", r.Fault, err)
		}
	}
	if err := CheckWire(o.Wire); err != nil {
		return err
	}
	if err := o.checkWebhook(); err != nil {
		return err
	}
	if o.Wire != WireStripe {
		if fs := newWire(o).intentFields(); !slices.Contains(fs, o.IntentField) {
			return fmt.Errorf("intent field %q: on %s's wire give %s (or leave --intent-field out for %s)", o.IntentField, o.Wire, strings.Join(fs, " or "), fs[0])
		}
	} else {
		if _, meta := metadataField(o.IntentField); o.MCP && (!meta || checkIntentField(o.IntentField) != nil) {
			return fmt.Errorf("intent field %q: with the MCP tools the intent is create_refund's intent argument, which goes in a metadata field; give metadata[NAME] with NAME 1 to 40 characters (or leave --intent-field out)", o.IntentField)
		}
		if err := checkIntentField(o.IntentField); err != nil {
			return err
		}
	}
	if err := CheckMCPRevision(o.MCPRevision); err != nil {
		return err
	}
	for _, f := range o.Faults {
		if _, err := missions.ParseFixture(string(f)); err != nil {
			return err
		}
	}
	return nil
}

// checkIntentField accepts a metadata field or a top-level parameter that
// names what is refunded.
func checkIntentField(f string) error {
	if name, ok := metadataField(f); ok && name != "" && len(name) <= 40 && !strings.ContainsAny(name, "[]") {
		return nil
	}
	if f == "charge" || f == "payment_intent" {
		return nil
	}
	return fmt.Errorf("intent field %q: give metadata[NAME] with NAME 1 to 40 characters (e.g. metadata[intent], the default), charge or payment_intent", f)
}

// carried is the profile a session carries: every one but the first
// three (v1, v2, none), which their names give, as a case carries it, so
// that the session replays wherever it is read.
func carried(p *ledger.Profile) *ledger.Profile {
	if p == nil || providers.Short(providers.CaseName(p)) {
		return nil
	}
	return p
}

// checkWebhook holds the webhook options to what Adyen's wire sends.
func (o Options) checkWebhook() error {
	if o.Webhook == "" {
		if o.WebhookHMAC != "" || len(o.WebhookFaults) > 0 {
			return errors.New("webhook-hmac and webhook-faults shape the notifications sent to --webhook; give --webhook URL with them")
		}
		return nil
	}
	if o.Wire != WireAdyen {
		return fmt.Errorf("webhook: only Adyen's wire tells a refund's outcome by webhook; serve speaks %s's (give --provider adyen, or --wire adyen)", o.Wire)
	}
	if err := CheckWebhook(o.Webhook); err != nil {
		return err
	}
	if o.WebhookHMAC != "" {
		if err := CheckWebhookHMAC(o.WebhookHMAC); err != nil {
			return err
		}
	}
	for _, f := range o.WebhookFaults {
		if err := CheckWebhookFault(f); err != nil {
			return err
		}
	}
	return nil
}
