package providers

// The built-in profiles, embedded like the mission catalog and written in
// the format a user writes, and how a name finds one.

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// Order is the order the built-ins are offered in: Stripe's first (v1 is
// the default), the provider without a contract last.
var Order = []string{"stripe-v1", "stripe-v2", "adyen", "paypal", "square", "checkout", "razorpay", "razorpayx-payouts", "shopify", "ietf-draft", "acp", "powertools", "none"}

// The short names the first three profiles had before profiles were
// data; a case records them by these names still.
var shortNames = map[string]ledger.Contract{"stripe-v1": ledger.V1, "stripe-v2": ledger.V2, "none": ledger.None}

var builtins = sync.OnceValue(func() map[string]*ledger.Profile {
	m := make(map[string]*ledger.Profile, len(Order))
	for _, id := range Order {
		name := "builtin/" + id + ".yaml"
		data, err := builtinFS.ReadFile(name)
		if err != nil {
			panic(fmt.Sprintf("built-in profile %s is missing: %v", id, err))
		}
		p, err := Parse(path.Base(name), data)
		if err != nil {
			panic(fmt.Sprintf("built-in profile %s: %v", id, err))
		}
		if p.ID != id {
			panic(fmt.Sprintf("built-in profile %s names itself %s", id, p.ID))
		}
		m[id] = p
	}
	return m
})

// Builtins lists the built-in profiles in Order.
func Builtins() []*ledger.Profile {
	b := builtins()
	out := make([]*ledger.Profile, len(Order))
	for i, id := range Order {
		out[i] = b[id]
	}
	return out
}

// Builtin is the built-in profile with this id or short name (v1, v2,
// none), or nil.
func Builtin(name string) *ledger.Profile {
	for id, short := range shortNames {
		if string(short) == name {
			name = id
		}
	}
	return builtins()[name]
}

// Names lists every name a built-in answers to, for completion and
// messages: the ids, then the short names.
func Names() []string { return append(append([]string{}, Order...), "v1", "v2") }

// Lookup finds a built-in profile by id or short name, or says what
// names there are.
func Lookup(name string) (*ledger.Profile, error) {
	if p := Builtin(name); p != nil {
		return p, nil
	}
	words := Names()
	if best := termtext.Closest(name, words); best != "" {
		return nil, fmt.Errorf("unknown provider %q; did you mean %s? (accepted: %s, or a profile file)", name, best, strings.Join(words, ", "))
	}
	return nil, fmt.Errorf("unknown provider %q (accepted: %s, or a profile file)", name, strings.Join(words, ", "))
}

// CaseName is the name a case records for a profile: the short name of
// the first three, the id of any other.
func CaseName(p *ledger.Profile) ledger.Contract {
	if short, ok := shortNames[p.ID]; ok && Same(p, builtins()[p.ID]) {
		return short
	}
	return ledger.Contract(p.ID)
}

// Short reports whether a case name is one of the three short names,
// which a case records without the profile.
func Short(c ledger.Contract) bool { return c == ledger.V1 || c == ledger.V2 || c == ledger.None }

// IsFile says whether a --provider value names a file rather than a
// built-in: it has a path separator or ends in .yaml or .yml.
func IsFile(arg string) bool {
	return strings.ContainsAny(arg, `/\`) || strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml")
}

// Same reports whether two profiles state the same contract, field for
// field (their JSON is the same).
func Same(a, b *ledger.Profile) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
