package missions

// The provider a run plays: a profile found by the name a mission,
// a flag or a case gives, or carried whole.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/providers"
)

// ProfileOf is the profile the settings run under: the one they carry,
// or the built-in their name gives.
func (s Settings) ProfileOf() (*ledger.Profile, error) { return ResolveProfile(s.Contract, s.Profile) }

// ResolveProfile is the profile a case or a session names and may carry:
// the one carried, which must be valid and bear the name (a built-in's id
// only with the built-in's rules), or else the built-in of that name. It
// is the one rule of every reader: a case or session naming a profile it
// does not carry, or carrying one that differs from the built-in of its
// id, is refused.
func ResolveProfile(name ledger.Contract, carried *ledger.Profile) (*ledger.Profile, error) {
	if carried != nil {
		if err := carried.Validate(); err != nil {
			return nil, err
		}
		if b := providers.Builtin(carried.ID); b != nil && !providers.Same(b, carried) {
			return nil, fmt.Errorf("the profile carried as %s differs from the built-in %s; a profile of your own needs an id of its own", carried.ID, b.ID)
		}
		if got := providers.CaseName(carried); got != name {
			return nil, fmt.Errorf("the settings name provider %s but carry profile %s", name, got)
		}
		return carried, nil
	}
	if name == "" {
		return providers.Builtin(string(ledger.V1)), nil
	}
	if !providers.Short(name) {
		if providers.Builtin(string(name)) == nil {
			return nil, fmt.Errorf("provider %s is not built in, and its profile is not carried (a case run under a profile file carries it whole)", name)
		}
	}
	p, err := providers.Lookup(string(name))
	if err != nil {
		return nil, err
	}
	if providers.CaseName(p) != name {
		return nil, fmt.Errorf("provider %q: a case names it %s", name, providers.CaseName(p))
	}
	return p, nil
}

// UseProfile sets the settings to run under p: its case name, and p
// itself where the name alone does not give it (a user's own file).
func (s *Settings) UseProfile(p *ledger.Profile) {
	s.Contract = providers.CaseName(p)
	s.Profile = nil
	if b := providers.Builtin(p.ID); b == nil || !providers.Same(b, p) {
		s.Profile = p
	}
}

// ProviderName reads a built-in's name as a flag or a mission gives it
// (stripe-v1, v1, checkout) and returns the name a case records.
func ProviderName(s string) (ledger.Contract, error) {
	p, err := providers.Lookup(s)
	if err != nil {
		return "", err
	}
	return providers.CaseName(p), nil
}

// ContractName reads the old spelling, --contract and contract:, which
// names only the first three profiles.
func ContractName(s string) (ledger.Contract, error) {
	c := ledger.Contract(s)
	if !providers.Short(c) {
		return "", fmt.Errorf("unknown contract %q (accepted: v1, v2, none; other providers are named with provider)", s)
	}
	return c, nil
}

// parseProviderWord reads a mission's provider: or contract:.
func parseProviderWord(key, s string) (ledger.Contract, error) {
	if s == "" {
		return "", nil
	}
	if key == "contract" {
		return ContractName(s)
	}
	if providers.IsFile(s) {
		return "", fmt.Errorf("provider %q: a mission names a built-in provider (accepted: %s); a profile file is given with --provider", s, strings.Join(providers.Names(), ", "))
	}
	return ProviderName(s)
}

func providerWords(key string) string {
	if key == "contract" {
		return "v1, v2, none"
	}
	return strings.Join(providers.Names(), ", ")
}

// providerFlag is a provider setting as a flag: --contract for the three
// short names, as before, and --provider for every other.
func providerFlag(c ledger.Contract) string {
	if providers.Short(c) {
		return asFlag(FlagContract, string(c))
	}
	return asFlag(FlagProvider, string(c))
}

// ProfileTitle is the profile's id as people read it: stripe-v1 for v1.
func ProfileTitle(c ledger.Contract) string {
	if p := providers.Builtin(string(c)); p != nil {
		return p.ID
	}
	return string(c)
}

// ParseAmount reads a decimal amount ("45.00", "45", "0.5") into minor
// units (hundredths): 4500, 4500, 50.
func ParseAmount(s string) (int64, error) {
	const accepted = "an amount such as 45.00: digits, and at most two after a point"
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || len(frac) > 2 || dot && frac == "" || strings.Trim(whole+frac, "0123456789") != "" || len(whole) > 12 {
		return 0, fmt.Errorf("%q is not %s", s, accepted)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not %s", s, accepted)
	}
	return n, nil
}

// CapturedMinor is the mission's captured amounts in minor units.
func (m *Mission) CapturedMinor() map[string]int64 {
	if len(m.Captured) == 0 {
		return nil
	}
	out := make(map[string]int64, len(m.Captured))
	for ch, a := range m.Captured {
		n, _ := ParseAmount(a)
		out[ch] = n
	}
	return out
}

// newLedger is an empty ledger for a run of m under s: the profile s
// names, m's retention in ticks and what m says was captured.
func (m *Mission) newLedger(s Settings) (*ledger.Ledger, error) {
	p, err := s.ProfileOf()
	if err != nil {
		return nil, err
	}
	return ledger.New(ledger.Config{Profile: p, Retention: m.Retention, Captured: m.CapturedMinor()})
}

// charge is the charge a send for intent in takes from and its amount in
// minor units, the step's payload override applied: nil where the
// payload names no charge whose capture the mission states.
func (m *Mission) charge(in Intent, override map[string]string) *ledger.Refund {
	field := func(k string) string {
		if v, ok := override[k]; ok {
			return v
		}
		return in.Payload[k]
	}
	ch := field(ChargeField)
	if _, ok := m.Captured[ch]; !ok {
		return nil
	}
	n, _ := ParseAmount(field("amount"))
	return &ledger.Refund{Charge: ch, Amount: n}
}

// ShortContracts are the first three profiles by their short names, in
// the order they were always offered.
var ShortContracts = []ledger.Contract{ledger.V1, ledger.V2, ledger.None}

// RetentionStandIn says what a mission's own retention stands in for:
// "8 ticks here; stripe-v1 keeps keys 24 h", or "" for a mission that
// names none (its keys outlive the run, as the profile's outlive any
// retry) or a provider that keeps no keys.
func RetentionStandIn(m *Mission, s Settings) string {
	p, err := s.ProfileOf()
	if err != nil || p.Keyless() || m.Retention == 0 || m.Retention == ledger.DefaultRetention {
		return ""
	}
	return fmt.Sprintf("%d ticks here; %s keeps keys %s", m.Retention, p.ID, p.Retention.Words())
}
