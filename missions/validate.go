package missions

import (
	"errors"
	"fmt"

	"github.com/replaylab/replaylab/ledger"
)

// Validate checks that a mission can be run, whatever it was read from. The
// file parser reports the same problems with line numbers; this is the
// check for missions that come from elsewhere, such as a case file.
func (m *Mission) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !idPattern.MatchString(m.ID) {
		bad("mission id %q: use lowercase letters, digits and dashes", m.ID)
	}
	if _, err := ledger.ParseContract(string(m.Contract)); err != nil {
		bad("contract: %v", err)
	}
	if m.Retention < 1 || m.Retention > MaxTicks {
		bad("retention %d: must be from 1 to %d ticks", m.Retention, MaxTicks)
	}
	if _, err := ParseKeySource(string(m.KeySource)); err != nil {
		bad("key_source: %v", err)
	}
	if len(m.Intents) == 0 || len(m.Intents) > MaxIntents {
		bad("the mission has %d intents; it needs 1 to %d", len(m.Intents), MaxIntents)
	}
	payloads := map[string]map[string]string{}
	for i, in := range m.Intents {
		if !idPattern.MatchString(in.ID) {
			bad("intent %d: id %q: use lowercase letters, digits and dashes", i+1, in.ID)
		}
		if _, dup := payloads[in.ID]; dup {
			bad("intent id %q is used twice", in.ID)
		}
		payloads[in.ID] = in.Payload
	}
	if len(m.Schedule) == 0 || len(m.Schedule) > MaxSteps {
		bad("the schedule has %d steps; it needs 1 to %d", len(m.Schedule), MaxSteps)
	}
	attempts, clock := 0, 0
	for i, st := range m.Schedule {
		clock += stepTicks(st)
		where := fmt.Sprintf("schedule step %d", i+1)
		if err := checkStep(st, payloads, false); err != nil {
			bad("%s: %v", where, err)
		}
		if st.Kind() == StepAttempt {
			attempts++
		}
		attempts += len(st.Together)
	}
	if attempts == 0 || attempts > MaxSteps {
		bad("the schedule has %d attempts; it needs 1 to %d", attempts, MaxSteps)
	}
	if clock > MaxClock {
		bad("the schedule spans %d ticks; it may span at most %d (a wait moves the clock its ticks, every other step one)", clock, MaxClock)
	}
	return errors.Join(errs...)
}

func checkStep(st Step, payloads map[string]map[string]string, inTogether bool) error {
	kinds := 0
	for _, set := range []bool{st.Attempt != "", st.Wait != 0, st.Read != "", st.Restart, len(st.Together) > 0} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return errors.New("a step does exactly one thing (attempt, wait, read, restart or together)")
	}
	if inTogether && st.Kind() != StepAttempt {
		return errors.New("a together step holds attempts only")
	}
	switch st.Kind() {
	case StepAttempt:
		base, ok := payloads[st.Attempt]
		if !ok {
			return fmt.Errorf("attempt names undeclared intent %q", st.Attempt)
		}
		if _, err := ParseFixture(string(st.Fixture)); err != nil {
			return err
		}
		switch st.Fixture {
		case LateCommit:
			if st.Delay < 1 || st.Delay > MaxTicks || st.Resolve != 0 {
				return fmt.Errorf("late_commit needs a delay from 1 to %d and no resolve", MaxTicks)
			}
		case PendingFixture:
			if st.Delay < 1 || st.Delay > MaxTicks || !st.Resolve.Terminal() {
				return fmt.Errorf("pending needs a delay from 1 to %d and resolve succeeded or failed", MaxTicks)
			}
		default:
			if st.Delay != 0 || st.Resolve != 0 {
				return fmt.Errorf("delay and resolve belong to late_commit and pending only, not %s", st.Fixture)
			}
		}
		for k := range st.Payload {
			if _, ok := base[k]; !ok {
				return fmt.Errorf("payload field %q is not in intent %s's payload", k, st.Attempt)
			}
		}
	case StepWait:
		if st.Wait < 1 || st.Wait > MaxTicks {
			return fmt.Errorf("wait %d: must be from 1 to %d ticks", st.Wait, MaxTicks)
		}
	case StepRead:
		if _, ok := payloads[st.Read]; !ok {
			return fmt.Errorf("read names undeclared intent %q", st.Read)
		}
	case StepTogether:
		if len(st.Together) < 2 || len(st.Together) > MaxWorkers {
			return fmt.Errorf("together needs 2 to %d attempts, not %d", MaxWorkers, len(st.Together))
		}
		for _, t := range st.Together {
			if err := checkStep(t, payloads, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// stepTicks is how far a step moves the clock: a wait its ticks, any
// other step one. A wait out of range counts as the most a wait may be,
// so a sum of them cannot overflow.
func stepTicks(st Step) int {
	if st.Wait != 0 {
		return max(1, min(st.Wait, MaxTicks))
	}
	return 1
}
