package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/internal/infile"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/providers"
	"github.com/replaylab/replaylab/render"
)

// settingFlags are the caller and provider settings a command accepts.
type settingFlags struct {
	stableKeys, policy, contract, provider, keySource string
}

func (f *settingFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.stableKeys, missions.FlagStableKeys, "", "reuse one idempotency key per intent: on or off (default on)")
	cmd.Flags().StringVar(&f.policy, missions.FlagPolicy, "", "caller policy: naive or guarded (default naive)")
	cmd.Flags().StringVar(&f.provider, missions.FlagProvider, "", "the provider's profile: a built-in (replaylab providers lists them) or a profile `FILE` (default: the mission's)")
	cmd.Flags().StringVar(&f.contract, missions.FlagContract, "", "the provider's contract by its old name: v1, v2 or none (the same as --provider stripe-v1, stripe-v2, none)")
	cmd.Flags().StringVar(&f.keySource, missions.FlagKeySource, "", "where keys come from: intent or payload_hash (default: the mission's)")
}

// overrides reads the flags the user set; flags left alone keep the
// mission's defaults. A bad value is a usage error naming what is accepted.
func (f *settingFlags) overrides(cmd *cobra.Command) (o missions.Overrides, err error) {
	if o.StableKeys, err = changedFlag(cmd, missions.FlagStableKeys, f.stableKeys, missions.ParseOnOff); err != nil {
		return o, err
	}
	if o.Policy, err = changedFlag(cmd, missions.FlagPolicy, f.policy, missions.ParsePolicy); err != nil {
		return o, err
	}
	if o.Contract, o.Profile, err = providerFlags(cmd, f.provider, f.contract); err != nil {
		return o, err
	}
	o.KeySource, err = changedFlag(cmd, missions.FlagKeySource, f.keySource, missions.ParseKeySource)
	return o, err
}

// providerFlags reads --provider (a built-in's name or a profile file)
// and --contract (the old names), which say one thing two ways: at most
// one is given. The profile is returned where the name alone does not
// give it.
func providerFlags(cmd *cobra.Command, provider, contract string) (*ledger.Contract, *ledger.Profile, error) {
	pSet, cSet := cmd.Flags().Changed(missions.FlagProvider), cmd.Flags().Changed(missions.FlagContract)
	switch {
	case pSet && cSet:
		return nil, nil, badInput(errors.New("--provider and --contract both choose the provider; give one (--contract v1 is --provider stripe-v1)"))
	case cSet:
		c, err := changedFlag(cmd, missions.FlagContract, contract, missions.ContractName)
		return c, nil, err
	case !pSet:
		return nil, nil, nil
	case !providers.IsFile(provider):
		c, err := changedFlag(cmd, missions.FlagProvider, provider, missions.ProviderName)
		return c, nil, err
	}
	p, err := readProfile(provider)
	if err != nil {
		return nil, nil, err
	}
	var s missions.Settings
	s.UseProfile(p)
	return &s.Contract, s.Profile, nil
}

// profileArg is the profile --provider names: a built-in or a file.
func profileArg(arg string) (*ledger.Profile, error) {
	if providers.IsFile(arg) {
		return readProfile(arg)
	}
	p, err := providers.Lookup(arg)
	if err != nil {
		return nil, badInput(fmt.Errorf("--provider: %w", err))
	}
	return p, nil
}

// readProfile reads a profile file given with --provider.
func readProfile(path string) (*ledger.Profile, error) {
	data, err := readLimited(path, providers.MaxFileBytes, "profile file")
	if err != nil {
		return nil, badInput(fmt.Errorf("--provider: %w", err))
	}
	p, err := providers.Parse(path, data)
	if err != nil {
		return nil, badInput(err)
	}
	if b := providers.Builtin(p.ID); b != nil && !providers.Same(b, p) {
		return nil, badInput(fmt.Errorf("%s: id %s is the built-in profile's; a profile of your own needs an id of its own (the built-in is shown by replaylab providers %s)", path, p.ID, p.ID))
	}
	return p, nil
}

// changedFlag parses the value of flag name when the user set it, and is
// nil when they did not.
func changedFlag[T any](cmd *cobra.Command, name, raw string, parse func(string) (T, error)) (*T, error) {
	if !cmd.Flags().Changed(name) {
		return nil, nil
	}
	v, err := parse(raw)
	if err != nil {
		return nil, badInput(fmt.Errorf("--%s: %w", name, err))
	}
	return &v, nil
}

// registerMissionsDir adds --missions DIR to a command that looks missions
// up by id: only those take it, so no command shows a flag it ignores.
func registerMissionsDir(cmd *cobra.Command) {
	cmd.Flags().String("missions", "", "add the mission files (*.yaml, *.yml) in `DIR` to the catalog")
}

// missionArg is the mission a command names by id, from the catalog and
// --missions DIR.
func missionArg(cmd *cobra.Command, id string) (*missions.Mission, error) {
	cat, err := loadCatalog(cmd)
	if err != nil {
		return nil, err
	}
	m, err := cat.Get(id)
	if err != nil {
		return nil, badInput(err)
	}
	return m, nil
}

// loadCatalog is the built-in catalog plus the files of --missions DIR.
func loadCatalog(cmd *cobra.Command) (*missions.Catalog, error) {
	cat := missions.BuiltIn()
	dir, _ := cmd.Flags().GetString("missions")
	if dir == "" {
		return cat, nil
	}
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, badInput(fmt.Errorf("--missions %s: no such directory (expected a directory of mission *.yaml files)", dir))
	case err != nil:
		return nil, badInput(fmt.Errorf("--missions %s: %w", dir, cause(err)))
	case !info.IsDir():
		return nil, badInput(fmt.Errorf("--missions %s is a file; expected a directory of mission *.yaml files", dir))
	}
	if err := cat.AddFS(os.DirFS(dir), dir); err != nil {
		return nil, badInput(wordFileErrors(err))
	}
	return cat, nil
}

// wordFileErrors rewords the file system errors among err (possibly
// joined) with fileError, keeping the others as they are.
func wordFileErrors(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, wordFileErrors(e))
		}
		return errors.Join(out...)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return infile.Error(pe.Path, err)
	}
	return err
}

// wholeFlag is a whole-number flag that says what it accepts when a value
// does not parse or is out of range, rather than naming a parse function.
type wholeFlag struct {
	p        *int
	min, max int
	accepted string
}

func newWholeFlag(p *int, value, lo, hi int, accepted string) *wholeFlag {
	*p = value
	return &wholeFlag{p: p, min: lo, max: hi, accepted: accepted}
}

func (f *wholeFlag) String() string { return strconv.Itoa(*f.p) }
func (f *wholeFlag) Type() string   { return "int" }

func (f *wholeFlag) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < f.min || n > f.max {
		return fmt.Errorf("accepted: %s", f.accepted)
	}
	*f.p = n
	return nil
}

// seedFlag is --seed: any whole number from 0 to the largest uint64.
type seedFlag struct{ p *uint64 }

func (f seedFlag) String() string { return strconv.FormatUint(*f.p, 10) }
func (f seedFlag) Type() string   { return "uint" }

func (f seedFlag) Set(s string) error {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return fmt.Errorf("accepted: a whole number from 0 to %d", uint64(math.MaxUint64))
	}
	*f.p = n
	return nil
}

// parseWords reads a comma-separated flag: each word trimmed and parsed,
// and, with dedupe, each kept once, in the order given. empty says what
// to give when the flag is given with no word at all; a word left empty
// between commas is refused, as is a word parse refuses.
func parseWords[T comparable](flag string, raw []string, parse func(string) (T, error), dedupe bool, empty string) ([]T, error) {
	if len(raw) == 0 {
		return nil, badInput(fmt.Errorf("--%s is empty; %s", flag, empty))
	}
	var out []T
	for _, w := range raw {
		if strings.TrimSpace(w) == "" {
			return nil, badInput(fmt.Errorf("--%s %q has an empty item; %s", flag, strings.Join(raw, ","), empty))
		}
		v, err := parse(strings.TrimSpace(w))
		if err != nil {
			return nil, badInput(fmt.Errorf("--%s: %w", flag, err))
		}
		if !dedupe || !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, nil
}

// textWidth is the width text output should fit: --width when given, else
// the terminal's when out is one, else render.DefaultTextWidth.
func textWidth(out io.Writer, flag int) int {
	if flag > 0 {
		return flag
	}
	if f, ok := out.(*os.File); ok && term.IsTerminal(f.Fd()) {
		if w, _, err := term.GetSize(f.Fd()); err == nil && w > 0 {
			return w
		}
	}
	return render.DefaultTextWidth
}

// registerWidth adds --width, the columns text output is laid out for.
func registerWidth(cmd *cobra.Command, width *int) {
	cmd.Flags().Var(newWholeFlag(width, 0, render.MinTextWidth, 100000, fmt.Sprintf("a whole number of columns from %d to 100000", render.MinTextWidth)),
		"width", "lay text out for `N` columns (default: the terminal's, or 100)")
}

// registerSeed adds --seed, the seed of the run's key generator, and the
// caller's budget: --max-attempts and --deadline.
func registerSeed(cmd *cobra.Command, seed *uint64) {
	*seed = missions.DefaultSeed
	cmd.Flags().Var(seedFlag{seed}, missions.FlagSeed, "seed for the key generator: any whole number from 0 up; the same seed gives the same case")
	var maxAttempts, deadline int
	cmd.Flags().Var(newWholeFlag(&maxAttempts, 0, 0, missions.MaxSteps,
		fmt.Sprintf("a whole number from 0 (as many as the schedule offers) to %d", missions.MaxSteps)),
		missions.FlagMaxAttempts, "the caller's budget of sends per intent (default 0: as many as the schedule offers)")
	cmd.Flags().Var(newWholeFlag(&deadline, 0, 0, math.MaxInt, "0 (no deadline) or a tick from 1 up"),
		missions.FlagDeadline, "the tick after which the caller sends nothing (default 0: no deadline)")
}

// settingsFor is the mission's default settings with the user's flags and
// seed applied.
func settingsFor(cmd *cobra.Command, m *missions.Mission, sf *settingFlags, seed uint64) (missions.Settings, error) {
	o, err := sf.overrides(cmd)
	if err != nil {
		return missions.Settings{}, err
	}
	return withRunFlags(cmd, m.Settings(o), seed)
}

// withRunFlags is s with the seed and the caller's budget (--max-attempts,
// --deadline) from the flags, checked.
func withRunFlags(cmd *cobra.Command, s missions.Settings, seed uint64) (missions.Settings, error) {
	s.Seed = seed
	s.MaxAttempts, _ = cmd.Flags().GetInt(missions.FlagMaxAttempts)
	s.Deadline, _ = cmd.Flags().GetInt(missions.FlagDeadline)
	if err := s.Validate(); err != nil {
		return missions.Settings{}, badInput(err)
	}
	return s, nil
}

// verdictWords lists the verdicts, comma-separated.
func verdictWords() string { return termtext.JoinWords(missions.Verdicts) }

// parseFailOn reads --fail-on: verdict words, each checked; given, it may
// not be empty.
func parseFailOn(words []string, given bool) (map[missions.Verdict]bool, error) {
	fail := map[missions.Verdict]bool{}
	if !given {
		return fail, nil
	}
	vs, err := parseWords("fail-on", words, missions.ParseVerdict, true, "give one or more verdicts, comma-separated (accepted: "+verdictWords()+")")
	for _, v := range vs {
		fail[v] = true
	}
	return fail, err
}

// failedVerdicts is the exit-1 error for the intents whose verdict the
// caller asked to fail on, or nil: run's and serve's --fail-on.
func failedVerdicts(verdicts []missions.IntentVerdict, fail map[missions.Verdict]bool) error {
	var hit []string
	for _, v := range verdicts {
		if fail[v.Verdict] {
			hit = append(hit, fmt.Sprintf("%s ended %s", termtext.Escaped(v.Intent), v.Verdict))
		}
	}
	if len(hit) == 0 {
		return nil
	}
	return &exitError{code: exitVerdict, err: fmt.Errorf("%s, a verdict --fail-on names", strings.Join(hit, "; "))}
}
