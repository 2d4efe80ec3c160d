// Package conform plays the source article's test matrix against a client
// command the user wrote, and grades it, the way h2spec or the Autobahn
// test suite grade an implementation they did not write.
//
// Each scenario is a catalog mission a live client can meet. For each,
// the runner starts a fresh provider (package serve, the same code as
// replaylab serve --mission ID) on a free loopback port, runs the command
// as a child process with the scenario in its environment (the contract in
// docs/conform.md), acts where the row needs it (kills the client at a
// commit and runs it again, runs two at once, runs it again with a changed
// amount), settles the provider's clock and judges the row from the
// provider's records and the beliefs the client printed.
package conform

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
	"github.com/replaylab/replaylab/serve"
)

// Intent is one logical action the client is asked to perform exactly
// once, as REPLAYLAB_INTENTS carries it.
type Intent struct {
	Intent   string `json:"intent"`
	Charge   string `json:"charge"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// Scenario is a mission as a live client meets it: the intents it is
// given, and what the runner does beyond running it once.
type Scenario struct {
	Mission *missions.Mission
	Intents []Intent
	// Workers is how many runs start at once (two workers on one intent).
	Workers int
	// Crash: a create meets crash_after_send; the runner kills the client
	// when it commits, then runs it again with the same state.
	Crash bool
	// Changed, when set, are the intents of a later run: the same intents
	// with the amount a later attempt of the mission asks for.
	Changed []Intent
	// Expires: the mission waits past the key's retention before the
	// retry, so the provider keeps keys for less than the request timeout
	// and any retry after a timeout comes too late for its key.
	Expires bool
	// Escalates: the matrix hands this row to a person (the guarded
	// caller escalates it), so an escalation passes here.
	Escalates bool
}

// ID is the scenario's id: its mission's.
func (s *Scenario) ID() string { return s.Mission.ID }

// NoContract: the provider keeps no idempotency keys in this row.
func (s *Scenario) NoContract() bool { return s.Mission.Contract == ledger.None }

// FromMission makes the scenario a mission plays for a live client, or
// says why a live client cannot meet it.
func FromMission(m *missions.Mission) (*Scenario, error) {
	s := &Scenario{Mission: m, Workers: 1}
	if len(m.Captured) > 0 {
		return nil, fmt.Errorf("mission %s caps refunds by captured amounts, which conform's provider does not serve yet", m.ID)
	}
	byID := map[string]int{}
	for _, in := range m.Intents {
		if in.Op != "refund" {
			return nil, fmt.Errorf("mission %s: intent %s is a %q; a conform client makes refunds", m.ID, in.ID, in.Op)
		}
		amount, err := cents(in.Payload["amount"])
		if err != nil {
			return nil, fmt.Errorf("mission %s: intent %s: amount %q: %v", m.ID, in.ID, in.Payload["amount"], err)
		}
		byID[in.ID] = len(s.Intents)
		s.Intents = append(s.Intents, Intent{Intent: in.ID, Charge: chargeOf(in), Amount: amount, Currency: currencyOf(in.Payload)})
	}
	seen := map[string]int{}
	var walk func(st missions.Step) error
	walk = func(st missions.Step) error {
		switch st.Kind() {
		case missions.StepAttempt:
			seen[st.Attempt]++
			if st.Fixture == missions.CrashAfterSend {
				s.Crash = true
			}
			if a, ok := st.Payload["amount"]; ok && seen[st.Attempt] > 1 {
				// A later attempt with other arguments: the same intent,
				// asked again with a changed amount.
				amount, err := cents(a)
				if err != nil {
					return fmt.Errorf("mission %s: line %d: amount %q: %v", m.ID, st.Line, a, err)
				}
				if s.Changed == nil {
					s.Changed = append([]Intent{}, s.Intents...)
				}
				s.Changed[byID[st.Attempt]].Amount = amount
			}
		case missions.StepTogether:
			s.Workers = max(s.Workers, len(st.Together))
			for _, t := range st.Together {
				if err := walk(t); err != nil {
					return err
				}
			}
		case missions.StepWait:
			if m.Retention > 0 && st.Wait > m.Retention {
				s.Expires = true
			}
		}
		return nil
	}
	for _, st := range m.Schedule {
		if err := walk(st); err != nil {
			return nil, err
		}
	}
	guarded, on, own := missions.Guarded, true, missions.KeyPerIntent
	c, err := missions.Run(m, m.Settings(missions.Overrides{Policy: &guarded, StableKeys: &on, KeySource: &own}))
	if err != nil {
		return nil, fmt.Errorf("mission %s: %w", m.ID, err)
	}
	for _, v := range c.Outcome.Verdicts {
		if v.Verdict == missions.EscalatedV {
			s.Escalates = true
		}
	}
	return s, nil
}

// Scenarios are the scenarios of every mission in c a live client can
// meet, in the catalog's order.
//
// The built-in missions written to contrast a provider (their own is not
// one of v1, v2 and none) are the lab's: the matrix plays every row as it
// is written, or every row under one profile (--provider). A mission
// file of the user's own that names a provider is played under it.
func Scenarios(c *missions.Catalog) []*Scenario {
	var out []*Scenario
	for _, m := range c.Missions {
		if missions.IsBuiltIn(m) && m.Contract != "" && !providers.Short(m.Contract) {
			continue
		}
		if s, err := FromMission(m); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// cents reads an amount written in units with up to two decimals
// ("45.00", "45") as a positive whole number of cents.
func cents(s string) (int64, error) {
	whole, frac, dotted := strings.Cut(strings.TrimSpace(s), ".")
	if s == "" {
		return 0, fmt.Errorf("missing; a conform intent needs an amount such as 45.00")
	}
	if len(frac) > 2 || (dotted && frac == "") {
		return 0, fmt.Errorf("give units with at most two decimals, e.g. 45.00")
	}
	frac += strings.Repeat("0", 2-len(frac))
	u, err1 := strconv.ParseUint(whole, 10, 63)
	f, err2 := strconv.ParseUint(frac, 10, 8)
	if err1 == nil && err2 == nil && u > math.MaxInt64/100-1 || errors.Is(err1, strconv.ErrRange) {
		return 0, fmt.Errorf("too large for a refund; give at most %d.99", math.MaxInt64/100-2)
	}
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("not a positive amount; give units with at most two decimals, e.g. 45.00")
	}
	n := int64(u)*100 + int64(f)
	if n <= 0 {
		return 0, fmt.Errorf("a refund's amount is above zero")
	}
	if n > serve.MaxAmount {
		// The provider would refuse every create, and a client that sent
		// nothing would pass the row.
		return 0, fmt.Errorf("above the provider's largest refund, %d.%02d (it takes at most %d in the smallest unit)", serve.MaxAmount/100, serve.MaxAmount%100, serve.MaxAmount)
	}
	return n, nil
}

// chargeOf is the charge an intent refunds: the payload's charge, else one
// named after its order, else after the intent.
func chargeOf(in missions.Intent) string {
	if c := in.Payload["charge"]; c != "" {
		return c
	}
	if o := in.Payload["order"]; o != "" {
		return "ch_" + o
	}
	return "ch_" + in.ID
}

func currencyOf(p map[string]string) string {
	if c := p["currency"]; c != "" {
		return strings.ToLower(c)
	}
	return "usd"
}

// Plays says what the scenario plays, in one line: each intent's faults
// in order, and what the runner does beyond one run.
func (s *Scenario) Plays() string {
	per := map[string][]string{}
	var add func(st missions.Step)
	add = func(st missions.Step) {
		switch st.Kind() {
		case missions.StepAttempt:
			w := string(st.Fixture)
			switch st.Fixture {
			case missions.PendingFixture:
				w += fmt.Sprintf(" (%s %d ticks later)", st.Resolve, st.Delay)
			case missions.LateCommit:
				w += fmt.Sprintf(" (commits %d ticks later)", st.Delay)
			}
			per[st.Attempt] = append(per[st.Attempt], w)
		case missions.StepTogether:
			for _, t := range st.Together {
				add(t)
			}
		}
	}
	for _, st := range s.Mission.Schedule {
		add(st)
	}
	var parts []string
	for _, in := range s.Mission.Intents {
		parts = append(parts, fmt.Sprintf("%s's creates meet %s; any later one, success", in.ID, strings.Join(per[in.ID], ", ")))
	}
	w := strings.Join(parts, "; ")
	if reads := s.Mission.Reads; len(reads) > 0 {
		words := make([]string, len(reads))
		for i, r := range reads {
			words[i] = r.String()
		}
		w += "; reads meet " + strings.Join(words, ", ") + ", then none"
	}
	switch {
	case s.NoContract():
		w += "; the provider keeps no idempotency keys"
	case s.Expires:
		w += "; keys are kept for less than the request timeout, so a retry after a timeout comes past its key"
	}
	if s.Workers > 1 {
		w += fmt.Sprintf("; %d runs of the client at once, sharing one state directory", s.Workers)
	}
	if s.Crash {
		w += "; the client is killed when the refund commits, then run again with the same state"
	}
	if s.Changed != nil {
		for i, in := range s.Changed {
			if in.Amount != s.Intents[i].Amount {
				w += fmt.Sprintf("; then run again for %s with amount %d instead of %d", in.Intent, in.Amount, s.Intents[i].Amount)
			}
		}
	}
	return w
}

// Passes is the rule every row shares.
const Passes = "A row passes when no intent ends with more than one refund, a refund the client was never shown, or another intent's refund, and every belief the client prints agrees with the ledger and with what the client was told (docs/conform.md has the rules)."

// Escalation says what handing this row to a person earns.
func (s *Scenario) Escalation() string {
	if s.Escalates {
		return "passes: the matrix hands this row to a person"
	}
	return "graded unsettled: this row can be settled without a person"
}

// Select is the scenarios of the catalog that ids name, in the order
// given, or every one where ids is empty.
func Select(cat *missions.Catalog, ids []string) ([]*Scenario, error) {
	if len(ids) == 0 {
		return Scenarios(cat), nil
	}
	var out []*Scenario
	seen := map[string]bool{}
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if seen[id] {
			return nil, fmt.Errorf("%s is named twice", id)
		}
		seen[id] = true
		m, err := cat.Get(id)
		if err != nil {
			ids := make([]string, len(cat.Missions))
			meant := ""
			for i, c := range cat.Missions {
				ids[i] = c.ID
				if strings.EqualFold(c.ID, id) {
					meant = c.ID
				}
			}
			if meant == "" {
				meant = termtext.Closest(id, ids)
			}
			if meant != "" {
				return nil, fmt.Errorf("unknown scenario %q; did you mean %s? (list them with: replaylab conform --list)", id, meant)
			}
			return nil, fmt.Errorf("unknown scenario %q (list them with: replaylab conform --list)", id)
		}
		sc, err := FromMission(m)
		if err != nil {
			return nil, fmt.Errorf("%s: a live client cannot meet it: %w", id, err)
		}
		out = append(out, sc)
	}
	return out, nil
}

// ListText is `conform --list`: what a pass means, then each scenario
// with what it plays and what passes, wrapped to width.
func ListText(scenarios []*Scenario, width int) string {
	var b strings.Builder
	for _, line := range termtext.Wrap(Passes, width) {
		b.WriteString(line + "\n")
	}
	item := func(label, text string) {
		for i, line := range termtext.Wrap(text, max(width-16, 30)) {
			if i > 0 {
				label = ""
			}
			fmt.Fprintf(&b, "  %-13s %s\n", label, line)
		}
	}
	for _, sc := range scenarios {
		fmt.Fprintf(&b, "\n%s: %s\n", termtext.CleanLine(sc.ID()), termtext.CleanLine(sc.Mission.Title))
		item("plays", termtext.CleanLine(sc.Plays()))
		item("if escalated", sc.Escalation())
	}
	fmt.Fprintf(&b, "\n%s. The contract a client follows: docs/conform.md\n", termtext.Plural(len(scenarios), "scenario"))
	return b.String()
}
