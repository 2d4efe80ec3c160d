package lab

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

func TestStableKeysToggleKeepsPositionAndMovesCounter(t *testing.T) {
	m := press(t, ttsLab(t), "r")
	if m.cas.Outcome.Effects != 1 {
		t.Fatalf("stable keys on: %d effects, want 1", m.cas.Outcome.Effects)
	}
	m = press(t, m, "k")
	if m.settings.StableKeys || m.pos != 3 {
		t.Fatalf("after k: stable keys %v at position %d, want off at 3", m.settings.StableKeys, m.pos)
	}
	if m.cas.Outcome.Effects != 2 || m.header.effects != 2 {
		t.Fatalf("after k: %d effects (header %d), want 2", m.cas.Outcome.Effects, m.header.effects)
	}
	if !strings.Contains(m.status, "effects 1 → 2") {
		t.Fatalf("status %q does not say how the counter moved", m.status)
	}
	// Mid-run too: the position stays where it was.
	m = press(t, m, "0", "n", "k")
	if m.pos != 1 || !m.settings.StableKeys {
		t.Fatalf("k mid-run: position %d, stable %v", m.pos, m.settings.StableKeys)
	}
}

func TestPolicyAndContractCycle(t *testing.T) {
	m := press(t, ttsLab(t), "n")
	var policies []missions.Policy
	for range 2 {
		m = press(t, m, "p")
		policies = append(policies, m.settings.Policy)
	}
	if policies[0] != missions.Guarded || policies[1] != missions.Naive {
		t.Fatalf("p cycles %v, want guarded then naive", policies)
	}
	var contracts []ledger.Contract
	for range 3 {
		m = press(t, m, "c")
		contracts = append(contracts, m.settings.Contract)
	}
	if contracts[0] != ledger.V2 || contracts[1] != ledger.None || contracts[2] != ledger.V1 {
		t.Fatalf("c cycles %v, want v2, none, v1", contracts)
	}
	if m.pos != 1 {
		t.Fatalf("toggles moved the position to %d", m.pos)
	}
	// Under contract none, keys are ignored: the retry is a second effect.
	m = press(t, m, "c", "c", "r")
	if m.settings.Contract != ledger.None || m.cas.Outcome.Effects != 2 {
		t.Fatalf("contract %s: %d effects, want none with 2", m.settings.Contract, m.cas.Outcome.Effects)
	}
}

func TestSettingsCarryAcrossMissions(t *testing.T) {
	m := press(t, ttsLab(t), "k", "esc", "down", "enter")
	if m.mission.ID == tts || m.settings.StableKeys {
		t.Fatalf("opened %s with stable keys %v; want another mission with them still off", m.mission.ID, m.settings.StableKeys)
	}
}

func TestCommandLineOverridesApply(t *testing.T) {
	off := false
	m := newLab(t, Options{Mission: tts, Overrides: missions.Overrides{StableKeys: &off}}, 100, 30)
	if m = press(t, m, "r"); m.cas.Outcome.Effects != 2 {
		t.Fatalf("--stable-keys=off: %d effects, want 2", m.cas.Outcome.Effects)
	}
}

func TestKeySourceCyclesAndMergesTwoRefunds(t *testing.T) {
	m := press(t, newLab(t, Options{Mission: tir, Dir: t.TempDir()}, 80, 24), "r")
	if m.settings.KeySource != missions.KeyPerIntent || m.cas.Outcome.Effects != 2 {
		t.Fatalf("keys from %s: %d effects, want intent with 2", m.settings.KeySource, m.cas.Outcome.Effects)
	}
	m = press(t, m, "s")
	if m.settings.KeySource != missions.KeyPayloadHash || m.pos != m.steps {
		t.Fatalf("after s: keys from %s at position %d of %d, want payload_hash at the end", m.settings.KeySource, m.pos, m.steps)
	}
	want := wantCase(t, tir, missions.Overrides{KeySource: &m.settings.KeySource}, m.steps)
	if m.cas.Outcome.Effects != 1 || m.header.effects != 1 || want.Outcome.Effects != 1 {
		t.Fatalf("after s: %d effects (header %d, engine %d), want 1", m.cas.Outcome.Effects, m.header.effects, want.Outcome.Effects)
	}
	if got := verdictsOf(m.cas); len(got) != 2 || got[1] != missions.Phantom {
		t.Fatalf("after s: verdicts %v, want the second phantom", got)
	}
	if !strings.Contains(m.status, "keys from payload_hash") || !strings.Contains(m.status, "effects 2 → 1") {
		t.Fatalf("status %q does not say what changed and how the counter moved", m.status)
	}
	v := m.View()
	// Both intents send one key, the payload's hash: the second attempt
	// reads as the first's key again.
	for _, w := range []string{"keys from payload_hash", "phantom", "#2 key A, same"} {
		if !strings.Contains(v, w) {
			t.Errorf("view lacks %q:\n%s", w, v)
		}
	}

	// Under the guarded policy the caller sees the merge and escalates.
	m = press(t, m, "p")
	if got := verdictsOf(m.cas); len(got) != 2 || got[1] != missions.EscalatedV || !strings.Contains(m.View(), "escalated") {
		t.Fatalf("guarded with payload-hash keys: verdicts %v, want the second escalated", got)
	}
	if !m.keys.Evidence.Enabled() {
		t.Fatal("the escalation offers no evidence")
	}

	// Mid-run the position stays, and s comes back round to intent.
	m = press(t, m, "p", "0", "n", "n")
	if m.cas.Outcome.Effects != 1 {
		t.Fatalf("payload hash at step 2: %d effects, want 1", m.cas.Outcome.Effects)
	}
	m = press(t, m, "s")
	if m.settings.KeySource != missions.KeyPerIntent || m.pos != 2 || m.cas.Outcome.Effects != 2 {
		t.Fatalf("s again: keys from %s at position %d with %d effects, want intent at 2 with 2",
			m.settings.KeySource, m.pos, m.cas.Outcome.Effects)
	}
	if !strings.Contains(m.status, "keys from intent: replayed to step 2 of 3, effects 1 → 2") {
		t.Fatalf("status %q", m.status)
	}
}

func TestStableKeysUnderPayloadHashSayNoEffect(t *testing.T) {
	m := press(t, newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 80, 24), "r", "s")
	before := m.cas.Outcome.Effects
	m = press(t, m, "k")
	if m.settings.StableKeys || m.cas.Outcome.Effects != before {
		t.Fatalf("k under payload hash: stable keys %v, %d effects; want off, still %d", m.settings.StableKeys, m.cas.Outcome.Effects, before)
	}
	if !strings.Contains(m.status, "no effect") || !strings.Contains(m.status, "payload hash") {
		t.Fatalf("status %q does not say why k changed nothing", m.status)
	}
	// Back on per-intent keys the setting counts again: off makes the
	// retry a second refund.
	m = press(t, m, "s")
	if m.cas.Outcome.Effects != 2 || !strings.Contains(m.status, "effects 1 → 2") {
		t.Fatalf("s back to intent with stable keys off: %d effects, status %q", m.cas.Outcome.Effects, m.status)
	}
}

func TestKeySourceKeyHelp(t *testing.T) {
	m := newLab(t, Options{Dir: t.TempDir()}, 100, 30)
	if m.keys.KeySource.Enabled() {
		t.Fatal("s enabled on the picker")
	}
	m = press(t, m, "s")
	if m.screen != screenPicker || m.mission != nil {
		t.Fatal("s did something on the picker")
	}
	m = newLab(t, Options{Mission: tir, Dir: t.TempDir()}, 80, 24)
	if line := m.helpLine(); !strings.Contains(line, "s key source") || !strings.Contains(line, "k stable keys") {
		t.Fatalf("a mission about the key source: help %q lacks s or k", line)
	}
	m = press(t, m, "s")
	if line := m.helpLine(); !strings.Contains(line, "s key source") || strings.Contains(line, "stable keys") {
		t.Fatalf("under payload-hash keys: help %q, want s and not k", line)
	}
	if full := press(t, m, "?").View(); !strings.Contains(full, "s key source") || !strings.Contains(full, "k stable keys (no effect)") {
		t.Fatalf("full help:\n%s", full)
	}
	m = press(t, m, "r", "m", "v")
	if m.keys.KeySource.Enabled() || strings.Contains(m.helpLine(), "key source") {
		t.Fatal("s advertised on the compare view")
	}
	if m = press(t, m, "s"); m.settings.KeySource != missions.KeyPayloadHash || m.screen != screenCompare {
		t.Fatal("s acted on the compare view")
	}
	m = press(t, m, "esc", "p", "g")
	if m.screen != screenEvidence || m.keys.KeySource.Enabled() {
		t.Fatalf("evidence screen %v, s enabled %v", m.screen == screenEvidence, m.keys.KeySource.Enabled())
	}
	// A mission the key source is not part of keeps s out of the way.
	m = ttsLab(t)
	if line := m.helpLine(); strings.Contains(line, "key source") {
		t.Fatalf("timeout-then-success at 100 columns: help %q puts s before the common keys", line)
	}
}

func TestKeySourceTellsPinsApart(t *testing.T) {
	m := press(t, newLab(t, Options{Mission: tir, Dir: t.TempDir()}, 80, 24), "r", "m", "s", "m")
	if len(m.pinned) != 2 || !strings.Contains(m.status, "pinned B: keys from payload_hash") {
		t.Fatalf("%d pinned, status %q", len(m.pinned), m.status)
	}
	m = press(t, m, "v")
	heads := m.compare.cmp.Cases
	if heads[0].Label != "keys from intent" || heads[1].Label != "keys from payload_hash" {
		t.Fatalf("compare labels %q and %q, want the key sources", heads[0].Label, heads[1].Label)
	}
	if m.compare.cmp.Diverge != 2 {
		t.Fatalf("first divergence at attempt %d, want 2 (same words, 2 effects against 1)", m.compare.cmp.Diverge)
	}
}

// The settings line fits the header at 80 columns whatever the settings;
// with room to spare it says stable keys have no effect.
func TestHeaderNamesTheKeySourceAndFits(t *testing.T) {
	ph := missions.KeyPayloadHash
	for _, stable := range []bool{true, false} {
		for _, p := range missions.Policies {
			for _, c := range missions.ShortContracts {
				o := missions.Overrides{StableKeys: &stable, Policy: &p, Contract: &c, KeySource: &ph}
				for _, id := range []string{tts, tir} {
					m := press(t, newLab(t, Options{Mission: id, Overrides: o}, 80, 24), "r")
					line := strings.Split(m.View(), "\n")[1]
					if !strings.Contains(line, "keys from payload_hash") || strings.Contains(line, "…") {
						t.Errorf("%s %s/%s/%s at 80: settings line %q", id, missions.OnOff(stable), p, c, line)
					}
				}
			}
		}
	}
	m := press(t, newLab(t, Options{Mission: tir, Overrides: missions.Overrides{KeySource: &ph}}, 104, 30), "r")
	if line := strings.Split(m.View(), "\n")[1]; !strings.Contains(line, "stable keys on (no effect)") {
		t.Fatalf("at 104 columns: settings line %q", line)
	}
	// Per-intent keys, the default, are not named.
	m = press(t, m, "s")
	if line := strings.Split(m.View(), "\n")[1]; strings.Contains(line, "keys from") || !strings.Contains(line, "stable keys on ·") {
		t.Fatalf("per-intent keys: settings line %q", line)
	}
}

// C opens the chooser of every provider's profile on the one the run
// plays; enter runs the mission under the one chosen, keeping the
// position, and the run is the engine's own under it; esc goes back with
// nothing changed.
func TestProviderChooser(t *testing.T) {
	m := press(t, newLab(t, Options{Mission: "saved-500-not-kept", Dir: t.TempDir()}, 100, 30), "n", "C")
	if m.screen != screenProviders || m.chooser.ps[m.chooser.sel].ID != "checkout" {
		t.Fatalf("C: screen %v, on %s; want the chooser on checkout", m.screen, m.chooser.ps[m.chooser.sel].ID)
	}
	if v := m.View(); !strings.Contains(v, "success: only 2xx answers are kept") || !strings.Contains(v, "stripe-v1") || !strings.Contains(v, "powertools") {
		t.Fatalf("the chooser does not list the profiles with the selected one's rules:\n%s", v)
	}
	m = press(t, m, "esc")
	if m.screen != screenLab || m.settings.Contract != "checkout" {
		t.Fatalf("esc: screen %v, provider %s", m.screen, m.settings.Contract)
	}
	// Up five times from checkout is stripe-v1: the 500 is kept, and
	// the same-key retry only replays it.
	m = press(t, m, "C", "up", "up", "up", "up", "up", "enter")
	if m.screen != screenLab || m.settings.Contract != ledger.V1 || m.pos != 1 {
		t.Fatalf("enter: screen %v, provider %s, position %d", m.screen, m.settings.Contract, m.pos)
	}
	m = press(t, m, "r")
	v1 := ledger.V1
	want := wantCase(t, "saved-500-not-kept", missions.Overrides{Contract: &v1}, 3)
	if m.cas.Outcome.Effects != want.Outcome.Effects || m.cas.Outcome.Verdicts[0].Verdict != missions.HiddenEffect {
		t.Fatalf("under stripe-v1: %d effects, %s; want %d, hidden_effect", m.cas.Outcome.Effects, m.cas.Outcome.Verdicts[0].Verdict, want.Outcome.Effects)
	}
}
