package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

// outputFormat is how a command renders a case.
type outputFormat string

// Output formats.
const (
	formatText     outputFormat = "text"     // the human summary, or a comparison's table
	formatJSON     outputFormat = "json"     // the case export, or a comparison for scripts
	formatMarkdown outputFormat = "markdown" // a write-up of a case, or a comparison as GFM
)

// renderCase renders a case in the given format; text fits width columns.
func renderCase(c *missions.Case, f outputFormat, width int) ([]byte, error) {
	switch f {
	case formatJSON:
		return export.Marshal(c)
	case formatText:
		var buf bytes.Buffer
		writeSummary(&buf, c, width)
		return buf.Bytes(), nil
	case formatMarkdown:
		return export.WriteUp(c)
	}
	return nil, badInput(fmt.Errorf("unknown format %q (accepted: text, markdown, json)", f))
}

// registerSeed adds --seed, the seed of the run's key generator, and the
// caller's budget: --max-attempts and --deadline.
func registerSeed(cmd *cobra.Command, seed *uint64) {
	*seed = missions.DefaultSeed
	cmd.Flags().Var(seedFlag{seed}, "seed", "seed for the key generator: any whole number from 0 up; the same seed gives the same case")
	var maxAttempts, deadline int
	cmd.Flags().Var(newWholeFlag(&maxAttempts, 0, 0, missions.MaxSteps,
		fmt.Sprintf("a whole number from 0 (as many as the schedule offers) to %d", missions.MaxSteps)),
		"max-attempts", "the caller's budget of sends per intent (default 0: as many as the schedule offers)")
	cmd.Flags().Var(newWholeFlag(&deadline, 0, 0, math.MaxInt, "0 (no deadline) or a tick from 1 up"),
		"deadline", "the tick after which the caller sends nothing (default 0: no deadline)")
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
	s.MaxAttempts, _ = cmd.Flags().GetInt("max-attempts")
	s.Deadline, _ = cmd.Flags().GetInt("deadline")
	if err := s.Validate(); err != nil {
		return missions.Settings{}, badInput(err)
	}
	return s, nil
}

func newRunCmd() *cobra.Command {
	var (
		sf         settingFlags
		seed       uint64
		asJSON     bool
		formatFlag string
		out        string
		force      bool
		widthFlag  int
		failOn     []string
	)
	cmd := &cobra.Command{
		Use:   "run MISSION",
		Short: "Run a mission headless and print a summary, a write-up or the case JSON",
		Long: "Run a mission without the lab and print what happened: what the agent said\n" +
			"beside what the ledger held after each event, the effect count and the\n" +
			"verdicts. --format markdown prints a write-up to paste into a document\n" +
			"(settings, timeline, transcript beside the ledger, verdicts and the command\n" +
			"that reproduces it); --format json (or --json) prints the whole case in the\n" +
			"export format.\n\n" +
			"In scripts and CI, --fail-on names the verdicts that should fail the run:\n" +
			"the exit code is 1 when an intent ends with one of them, 0 otherwise, and 2\n" +
			"for bad usage or input.",
		Example: "  replaylab run timeout-then-success --stable-keys=off\n" +
			"  replaylab run timeout-then-success --json --out case.json\n" +
			"  replaylab run timeout-then-success --stable-keys=off --format markdown --out case.md\n" +
			"  replaylab run timeout-then-success --fail-on duplicate,hidden_effect,phantom",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := missionArg(cmd, args[0])
			if err != nil {
				return err
			}
			s, err := settingsFor(cmd, m, &sf, seed)
			if err != nil {
				return err
			}
			format, err := parseOutputFormat(formatFlag)
			if err != nil {
				return err
			}
			fail, err := parseFailOn(failOn, cmd.Flags().Changed("fail-on"))
			if err != nil {
				return err
			}
			if asJSON {
				if cmd.Flags().Changed("format") && format != formatJSON {
					return badInput(fmt.Errorf("--json and --format %s do not go together: --json is --format json", format))
				}
				format = formatJSON
			}
			if out == "" && cmd.Flags().Changed("out") {
				return badInput(fmt.Errorf("--out is empty; give a file path, or leave --out out to print to standard output"))
			}
			if out != "" {
				// Refuse before running, so nothing is half done.
				if err := checkWritable(out, force, false); err != nil {
					return err
				}
			}
			c, err := missions.Run(m, s)
			if err != nil {
				return badInput(err)
			}
			width := widthFlag
			if width == 0 {
				width = export.DefaultTextWidth
				if out == "" {
					width = textWidth(cmd.OutOrStdout(), 0)
				}
			}
			b, err := renderCase(c, format, width)
			if err != nil {
				return err
			}
			if out == "" {
				if _, err := cmd.OutOrStdout().Write(b); err != nil {
					return err
				}
			} else {
				if err := writeFileAtomic(out, b, force); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", export.CleanLine(out))
			}
			return failedVerdicts(c, fail)
		},
	}
	sf.register(cmd)
	registerSeed(cmd, &seed)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the case as JSON (the export format); the same as --format json")
	cmd.Flags().StringVar(&formatFlag, "format", string(formatText), "output: text (a summary), markdown (a write-up) or json (the case)")
	cmd.Flags().StringVar(&out, "out", "", "write the output to `FILE` instead of standard output")
	cmd.Flags().BoolVar(&force, "force", false, "with --out, overwrite FILE if it exists")
	registerWidth(cmd, &widthFlag)
	cmd.Flags().StringSliceVar(&failOn, "fail-on", nil, "exit 1 when an intent ends with one of these `VERDICTS` (comma-separated: "+verdictWords()+"); the output is printed or written all the same")
	registerMissionsDir(cmd)
	return cmd
}

// verdictWords lists the verdicts, comma-separated.
func verdictWords() string {
	words := make([]string, len(missions.Verdicts))
	for i, v := range missions.Verdicts {
		words[i] = string(v)
	}
	return strings.Join(words, ", ")
}

// parseFailOn reads --fail-on: verdict words, each checked; given, it may
// not be empty.
func parseFailOn(words []string, given bool) (map[missions.Verdict]bool, error) {
	fail := map[missions.Verdict]bool{}
	if given && len(words) == 0 {
		return nil, badInput(fmt.Errorf("--fail-on is empty; give one or more verdicts, comma-separated (accepted: %s)", verdictWords()))
	}
	for _, w := range words {
		if strings.TrimSpace(w) == "" {
			return nil, badInput(fmt.Errorf("--fail-on %q has an empty verdict; give verdicts, comma-separated (accepted: %s)", strings.Join(words, ","), verdictWords()))
		}
		v, err := missions.ParseVerdict(strings.TrimSpace(w))
		if err != nil {
			return nil, badInput(fmt.Errorf("--fail-on: %w", err))
		}
		fail[v] = true
	}
	return fail, nil
}

// failedVerdicts is the exit-1 error for the intents of c whose verdict the
// caller asked to fail on, or nil.
func failedVerdicts(c *missions.Case, fail map[missions.Verdict]bool) error {
	var hit []string
	for _, v := range c.Outcome.Verdicts {
		if fail[v.Verdict] {
			hit = append(hit, fmt.Sprintf("%s ended %s", export.CleanLine(v.Intent), v.Verdict))
		}
	}
	if len(hit) == 0 {
		return nil
	}
	return &exitError{code: exitVerdict, err: fmt.Errorf("%s, a verdict --fail-on names", strings.Join(hit, "; "))}
}

// The summary table's columns at full width: with the gaps it is 96
// columns wide, which fits the default text width (100).
const (
	colTick   = 5
	colWhat   = 36
	colSay    = 34
	colLedger = 17
	colGap    = 2
)

// summaryCols are the widths of the summary table's columns.
type summaryCols struct{ tick, what, say, ledger int }

// summaryLayout fits the summary table to width columns: the full table
// where it fits, otherwise the two columns of words share what is left,
// in the full table's proportions. Narrower than export.MinTextWidth is
// laid out at that width.
func summaryLayout(width int) summaryCols {
	width = max(width, export.MinTextWidth)
	full := summaryCols{colTick, colWhat, colSay, colLedger}
	if width >= colTick+colWhat+colSay+colLedger+2*colGap {
		return full
	}
	c := full
	if width < 80 {
		c.ledger = 12 // "12 effects" and an object id or two
	}
	rest := width - c.tick - c.ledger - 2*colGap
	c.what = rest * colWhat / (colWhat + colSay)
	c.say = rest - c.what
	return c
}

// writeSummary prints the human summary of a case: the transcript beside
// the ledger, event by event, then the outcome and the verdicts.
// It fits width columns (see summaryLayout).
func writeSummary(w io.Writer, c *missions.Case, width int) {
	cols := summaryLayout(width)
	m := &c.Mission
	s := c.Settings
	lineW := cols.tick + cols.what + cols.say + cols.ledger + 2*colGap
	para := func(text string) {
		for _, line := range wrap(export.CleanLine(text), lineW) {
			fmt.Fprintln(w, line)
		}
	}
	para(export.CleanLine(m.ID) + " — " + export.CleanLine(m.Title))
	var settings []string
	for _, f := range missions.AllSettings[:5] {
		settings = append(settings, s.Words(f))
	}
	settings = append(settings, export.BudgetWords(s)...)
	for _, line := range joinFitting(settings, " · ", lineW) {
		fmt.Fprintln(w, export.CleanLine(line))
	}
	fmt.Fprintln(w)

	writeRow(w, cols, []string{"tick"}, wrap("what happened", cols.what), wrap("the agent says", cols.say), wrap("ledger after", cols.ledger))
	writeRow(w, cols, []string{"----"}, []string{strings.Repeat("-", cols.what)}, []string{strings.Repeat("-", cols.say)}, []string{strings.Repeat("-", cols.ledger)})
	held := export.HeldAfter(c, 4, 1)
	for _, r := range summaryRows(c.Events) {
		say := []string{""}
		if r.say != "" {
			say = wrap(`"`+export.CleanLine(r.say)+`"`, cols.say)
		}
		what := describeEvent(r.ev, cols.what)
		if len(r.checkpoints) > 0 {
			what = append(what, wrap(export.CleanLine("checkpoint: "+strings.Join(r.checkpoints, " → ")), cols.what)...)
		}
		writeRow(w, cols, []string{fmt.Sprintf("t%d", r.ev.Tick)}, what, say, ledgerAfter(r.effects, held[r.at], cols.ledger))
	}

	o := c.Outcome
	failed := 0
	for _, obj := range c.Ledger.Objects {
		if obj.Status == ledger.Failed {
			failed++
		}
	}
	effects := fmt.Sprint(o.Effects)
	if failed > 0 {
		// Objects that ended failed are not effects: their mutation never
		// took hold. Say they exist all the same.
		effects += fmt.Sprintf(" · %s ended failed", export.Plural(failed, "object"))
	}
	fmt.Fprintln(w)
	para(fmt.Sprintf("effects %s · intended %d · succeeded %d", effects, o.Intended, o.Succeeded))
	idW := 0
	for _, v := range o.Verdicts {
		idW = max(idW, ansi.StringWidth(export.CleanLine(v.Intent)))
	}
	for _, v := range o.Verdicts {
		id := export.CleanLine(v.Intent)
		lead := fmt.Sprintf("  %s%s  %-14s ", id, strings.Repeat(" ", idW-ansi.StringWidth(id)), v.Verdict)
		for _, line := range hang(lead, explainVerdict(v), lineW) {
			fmt.Fprintln(w, line)
		}
	}
	for _, e := range o.Evidence {
		for i, line := range wrap(fmt.Sprintf("escalated %s: %s", e.Intent, e.Reason), lineW-4) {
			if i > 0 {
				line = "  " + line
			}
			fmt.Fprintf(w, "  %s\n", export.CleanLine(line))
		}
	}
}

// summaryRow is one row of the summary: an event with the checkpoint changes
// that belong to it folded in, and what the agent said by the row's end.
// at is the index of the row's last event, whose ledger the row shows.
type summaryRow struct {
	ev          missions.Event
	checkpoints []string
	say         string
	effects     int
	at          int
}

// summaryRows folds checkpoint events into the rows they belong to: the ones
// recorded just before a send go with that send, the ones after an event go
// with it. Every other event is a row of its own.
func summaryRows(events []missions.Event) []summaryRow {
	var rows []summaryRow
	var pending []int
	alone := func(i int) summaryRow {
		return summaryRow{ev: events[i], say: events[i].Say, effects: events[i].Effects, at: i}
	}
	for i, ev := range events {
		if ev.Kind == missions.EventCheckpoint {
			if n := len(rows); n > 0 && len(pending) == 0 && rows[n-1].ev.Intent == ev.Intent && !sendsNext(ev) {
				rows[n-1].checkpoints = append(rows[n-1].checkpoints, string(ev.Checkpoint))
				rows[n-1].effects = ev.Effects
				rows[n-1].at = i
				if ev.Say != "" {
					rows[n-1].say = ev.Say
				}
				continue
			}
			pending = append(pending, i)
			continue
		}
		r := alone(i)
		if len(pending) > 0 && events[pending[0]].Intent == ev.Intent {
			for _, p := range pending {
				r.checkpoints = append(r.checkpoints, string(events[p].Checkpoint))
			}
			pending = nil
		}
		for _, p := range pending {
			rows = append(rows, alone(p))
		}
		pending = nil
		rows = append(rows, r)
	}
	for _, p := range pending {
		rows = append(rows, alone(p))
	}
	return rows
}

// sendsNext reports whether a checkpoint is recorded on the way to a send.
func sendsNext(ev missions.Event) bool {
	return ev.Checkpoint == missions.Approved || ev.Checkpoint == missions.Submitted
}

// describeEvent is the "what happened" cell of an event, colWhat wide.
func describeEvent(ev missions.Event, colWhat int) []string {
	var lines []string
	switch ev.Kind {
	case missions.EventAttempt:
		lines = append(lines, wrap(fmt.Sprintf("attempt %d → %s", ev.Attempt, ev.Fixture), colWhat)...)
		who := ev.Intent
		if ev.Worker > 0 {
			who += fmt.Sprintf(" · worker %d", ev.Worker)
		}
		if ev.Key != "" {
			who += " · key " + ev.Key
		} else {
			who += " · no key"
		}
		lines = append(lines, wrap(who, colWhat)...)
		lines = append(lines, wrap(ev.Note, colWhat)...)
		seen := fmt.Sprintf("→ the caller sees: %s", ev.Observed)
		if ev.Class != "" {
			seen += " (" + string(ev.Class) + ")"
		}
		lines = append(lines, wrap(seen, colWhat)...)
	case missions.EventCheckpoint:
		// One line where the note only repeats the new state.
		head := fmt.Sprintf("%s → %s", ev.Intent, ev.Checkpoint)
		if ev.Note != "" && ev.Note != string(ev.Checkpoint) {
			head += ": " + ev.Note
		}
		lines = append(lines, wrap(head, colWhat)...)
	default:
		head := string(ev.Kind)
		if ev.Intent != "" {
			head += " · " + ev.Intent
		}
		lines = append(lines, wrap(head, colWhat)...)
		lines = append(lines, wrap(ev.Note, colWhat)...)
	}
	for i := range lines {
		lines[i] = export.CleanLine(lines[i])
	}
	return lines
}

// ledgerAfter is the "ledger after" cell: the effect count and the objects
// that stood then (export.HeldAfter).
func ledgerAfter(effects int, h export.Held, colLedger int) []string {
	lines := []string{export.Plural(effects, "effect")}
	return append(lines, wrap(strings.Join(h.IDs(), " "), colLedger)...)
}

// explainVerdict says in words what a verdict means for this intent.
func explainVerdict(v missions.IntentVerdict) string {
	switch v.Verdict {
	case missions.ExactlyOnce:
		return "believes done; exactly one effect of its own stands in the ledger"
	case missions.FailedCleanly:
		return "believes it failed; nothing of its own took effect"
	case missions.Duplicate:
		return fmt.Sprintf("believes %s; the ledger holds %d effects for one intent", v.Belief, v.Effects)
	case missions.HiddenEffect:
		return fmt.Sprintf("believes %s, yet the ledger holds %s", v.Belief, export.Plural(v.Effects, "effect"))
	case missions.Phantom:
		return "believes done, but no effect of its own is in the ledger"
	case missions.EscalatedV:
		return fmt.Sprintf("handed to a person with the evidence; the ledger holds %s", export.Plural(v.Effects, "effect"))
	}
	return fmt.Sprintf("believes %s; %s", v.Belief, export.Plural(v.Effects, "effect"))
}

// joinFitting joins items with sep into lines at most width columns wide,
// breaking only between items where it can, so "seed 1" is never split
// from its number; an item wider than a line is wrapped on its own.
func joinFitting(items []string, sep string, width int) []string {
	var lines []string
	cur := ""
	for _, it := range items {
		switch {
		case cur == "":
			cur = it
		case ansi.StringWidth(cur+sep+it) <= width:
			cur += sep + it
		default:
			lines = append(lines, cur)
			cur = it
		}
		if ansi.StringWidth(cur) > width {
			parts := wrap(cur, width)
			lines = append(lines, parts[:len(parts)-1]...)
			cur = parts[len(parts)-1]
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// hang puts text after lead, wrapped so that every line is at most width
// columns wide and the lines after the first start under the text; where
// that leaves the text too little room, it goes under lead, indented.
func hang(lead, text string, width int) []string {
	lw := ansi.StringWidth(lead)
	if lw+ansi.StringWidth(text) <= width {
		return []string{lead + text}
	}
	indent := lw
	if width-lw < 24 {
		indent = 4
	}
	lines := wrap(text, width-indent)
	out := make([]string, 0, len(lines)+1)
	if indent == lw {
		out = append(out, lead+lines[0])
		lines = lines[1:]
	} else {
		out = append(out, strings.TrimRight(lead, " "))
	}
	for _, l := range lines {
		out = append(out, strings.Repeat(" ", indent)+l)
	}
	return out
}

// wrap breaks text into lines at most width columns wide.
func wrap(s string, width int) []string {
	if s == "" {
		return nil
	}
	return strings.Split(ansi.Wrap(s, width, ""), "\n")
}

// writeRow prints one table row whose cells may span several lines.
func writeRow(w io.Writer, cols summaryCols, cells ...[]string) {
	widths := []int{cols.tick, cols.what, cols.say, cols.ledger}
	rows := 0
	for _, c := range cells {
		rows = max(rows, len(c))
	}
	for i := range rows {
		var b strings.Builder
		for j, c := range cells {
			text := ""
			if i < len(c) {
				text = c[i]
			}
			if j == len(cells)-1 {
				b.WriteString(text)
				break
			}
			b.WriteString(text)
			pad := widths[j] - ansi.StringWidth(text)
			if j > 0 {
				pad += colGap
			}
			b.WriteString(strings.Repeat(" ", max(pad, 1)))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
