package conform

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
	"github.com/replaylab/replaylab/serve"
)

// conform --provider plays the matrix on that provider's own wire: the
// client is told the wire, its intent field and (on Adyen's, which is
// HTTPS) the certificate to trust. A client that speaks each wire from
// that alone is graded there: a new key after a lost reply is caught as
// a duplicate, one key kept per intent passes, and a same-key resend
// after a saved 500 duplicates where the contract keeps no 500 (Square,
// Checkout.com) and not where it does (Adyen, PayPal).
func TestConformPlaysEachProvidersWire(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "wireclient")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/wireclient").CombinedOutput(); err != nil {
		t.Fatalf("go build wireclient: %v\n%s", err, out)
	}
	rows := append(scenario(t, "timeout-then-success"), scenario(t, "saved-server-error")...)
	for _, wire := range []string{serve.WireAdyen, serve.WirePayPal, serve.WireSquare, serve.WireCheckout} {
		t.Run(wire, func(t *testing.T) {
			p := providers.Builtin(wire)
			cfg := Config{Provider: p, Tick: 20 * time.Millisecond}
			cfg.Timeout = DefaultTimeoutTicks * cfg.Tick
			naive := run(t, context.Background(), Config{Command: []string{bin}, Provider: p, Tick: cfg.Tick, Timeout: cfg.Timeout}, rows[:1])
			if r := naive.Rows[0]; r.Grade != GradeUnsafe || r.Intents[0].Verdict != missions.Duplicate {
				t.Fatalf("naive on %s: %s %s (%s)", wire, r.Grade, r.Intents[0].Verdict, r.Why)
			}
			careful := run(t, context.Background(), Config{Command: []string{bin, "-careful"}, Provider: p, Tick: cfg.Tick, Timeout: cfg.Timeout}, rows)
			if r := careful.Rows[0]; r.Grade != GradePass || r.Intents[0].Verdict != missions.ExactlyOnce {
				t.Fatalf("careful on %s, %s: %s %s (%s)", wire, r.Scenario, r.Grade, r.Intents[0].Verdict, r.Why)
			}
			want := map[string]missions.Verdict{serve.WireAdyen: missions.HiddenEffect, serve.WirePayPal: missions.ExactlyOnce, serve.WireSquare: missions.Duplicate, serve.WireCheckout: missions.Duplicate}[wire]
			if r := careful.Rows[1]; r.Intents[0].Verdict != want {
				t.Fatalf("careful on %s, %s: %s; want %s (%s)", wire, r.Scenario, r.Intents[0].Verdict, want, r.Why)
			}
		})
	}
}
