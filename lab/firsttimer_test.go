package lab

import (
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/list"

	"github.com/replaylab/replaylab/missions"
)

// The lab as a first-timer meets it: each test here failed before the
// fix it names.

// TestSlashStartsAFreshFilter: a second / starts a new filter; it used to
// append to the one before.
func TestSlashStartsAFreshFilter(t *testing.T) {
	m := typeFilter(t, newLab(t, Options{Dir: t.TempDir()}, 100, 30), "pend")
	m = pressRun(t, m, "enter")
	if m.picker.list.FilterState() != list.FilterApplied {
		t.Fatalf("the filter is not applied: %v", m.picker.list.FilterState())
	}
	m = typeFilter(t, m, "two")
	if got := m.picker.list.FilterValue(); got != "two" {
		t.Errorf("the second filter reads %q, want %q", got, "two")
	}
	if ids := visibleIDs(m); len(ids) == 0 || ids[0] != "two-intended-refunds" {
		t.Errorf("the second filter shows %v", ids)
	}
}

// TestEnterOnNoMatchOpensNothing: a filter that matches nothing, kept with
// enter, leaves no mission to open, and enter again opens none.
func TestEnterOnNoMatchOpensNothing(t *testing.T) {
	m := typeFilter(t, newLab(t, Options{Dir: t.TempDir()}, 100, 30), "twotwo")
	m = pressRun(t, m, "enter")
	m = pressRun(t, m, "enter")
	if m.screen != screenPicker || m.mission != nil {
		t.Fatalf("enter on a filter that matched nothing opened %v", m.mission.ID)
	}
	if !strings.Contains(m.View(), "no mission matches") && !strings.Contains(m.View(), "Nothing matched") {
		t.Errorf("the picker does not say nothing matched:\n%s", m.View())
	}
}

// TestCounterNeverContradictsTheVerdict: beside a hidden effect the
// counter is not green "= as intended"; beside failed_cleanly it is not
// amber.
func TestCounterNeverContradictsTheVerdict(t *testing.T) {
	v1 := "v1"
	_ = v1
	for _, tc := range []struct {
		id      string
		verdict missions.Verdict
		notSay  string
	}{
		{"saved-server-error", missions.HiddenEffect, "= as intended"},
		{"failure-then-failure", missions.FailedCleanly, ""},
		{"changed-parameters", missions.HiddenEffect, "= as intended"},
	} {
		m := press(t, newLab(t, Options{Mission: tc.id, Dir: t.TempDir()}, 100, 30), "r")
		if v := worstVerdict(m.cas.Outcome.Verdicts); v != tc.verdict {
			t.Fatalf("%s ends %s, want %s", tc.id, v, tc.verdict)
		}
		style, words := m.header.counterLook()
		if want := m.st.verdictStyle(tc.verdict); style.GetForeground() != want.GetForeground() {
			t.Errorf("%s: the counter's colour %v is not the %s verdict's %v", tc.id, style.GetForeground(), tc.verdict, want.GetForeground())
		}
		if tc.notSay != "" && strings.Contains(words, tc.notSay) {
			t.Errorf("%s: the counter says %q beside %s", tc.id, words, tc.verdict)
		}
	}
}

// TestNoSpoilersFromPinOrEvidence: before the run ends, m does not tell
// the run's final count, and g does not tell where it will escalate.
func TestNoSpoilersFromPinOrEvidence(t *testing.T) {
	off := false
	m := newLab(t, Options{Mission: tts, Overrides: missions.Overrides{StableKeys: &off}, Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "m")
	if strings.Contains(m.status, "2 effects") || strings.Contains(m.status, "effect") {
		t.Errorf("pinning before the first step tells the count: %q", m.status)
	}
	m = press(t, m, "r", "x")
	m = newLab(t, Options{Mission: tts, Overrides: missions.Overrides{StableKeys: &off}, Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "r", "m")
	if !strings.Contains(m.status, "2 effects") {
		t.Errorf("pinning at the end does not tell the count: %q", m.status)
	}
	g := newLab(t, Options{Mission: "changed-parameters", Dir: t.TempDir()}, 100, 30)
	g = press(t, g, "p", "g")
	if strings.Contains(g.status, "escalates at step") || strings.Contains(g.status, "step 2") {
		t.Errorf("g before the escalation tells where it comes: %q", g.status)
	}
}

// TestGoalNeverCutMidWord: where the goal does not fit, its last line
// ends on a whole word and a mark, and no row stands empty under it.
func TestGoalNeverCutMidWord(t *testing.T) {
	goal := paragraph(missions.BuiltIn().Missions[0].Goal)
	words := strings.Fields(goal)
	for w := 30; w <= 90; w += 7 {
		lines := firstLines(wrap(goal, w), 2, w, " …")
		last := strings.TrimSuffix(lines[1], " …")
		if !strings.HasSuffix(lines[1], " …") {
			t.Fatalf("width %d: the cut line does not end with the mark: %q", w, lines[1])
		}
		got := strings.Fields(lines[0] + " " + last)
		for i, word := range got {
			if word != words[i] {
				t.Fatalf("width %d: word %d is %q, not %q: a word was cut (%q)", w, i, word, words[i], lines[1])
			}
		}
	}
	for h := 24; h <= 30; h++ {
		m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 80, h)
		view := m.timeline.View()
		rows := strings.Split(view, "\n")
		if !strings.Contains(view, "what this mission shows") {
			continue
		}
		if strings.Contains(view, " …") && strings.TrimSpace(rows[len(rows)-1]) == "" {
			t.Errorf("height %d: the goal is cut while its last row stands empty:\n%s", h, view)
		}
	}
}

// TestCompareKeySentenceFirst: the seed exercise's comparison opens on
// what the cases show together (same words, 1, 2 and 0 effects), then the
// pair of one mission apart in stable keys, not a pair of two missions;
// findings with no room are said to be there.
func TestCompareKeySentenceFirst(t *testing.T) {
	cat := seedCatalog(t)
	m := openMission(t, newLab(t, Options{Catalog: cat, Dir: t.TempDir()}, 80, 24), cat.Missions[0])
	m = press(t, m, "r", "m", "k", "r", "m", "esc", "down", "enter", "k", "r", "m", "v")
	view := m.View()
	flat := strings.Join(strings.Fields(view), " ")
	if !strings.Contains(flat, "Same words, different ledgers") || !strings.Contains(flat, "0, 2 and 1 effects") {
		t.Fatalf("the story of the cases does not lead:\n%s", view)
	}
	if !strings.Contains(view, "more finding") {
		t.Errorf("the findings with no room are not marked:\n%s", view)
	}
	m = resize(m, 100, 40)
	view = m.View()
	at := strings.Index(view, "◆ Case")
	if at < 0 {
		t.Fatalf("no finding on screen:\n%s", view)
	}
	first := strings.Join(strings.Fields(view[at:]), " ")
	first = strings.ReplaceAll(first, "- ", "-") // a name wrapped at its dash
	if !strings.HasPrefix(first, "◆ Case B (timeout-then-success, stable keys off) and case C (timeout-then-success, stable keys on)") {
		t.Errorf("the first finding is not the pair one setting apart:\n%s", first)
	}
}

// TestKeysReadAsLetters: the timeline and the ledger name keys "key A",
// with "same" or "new" on each retry, never as hashes that read alike;
// the hash is in the detail strip of the row picked.
func TestKeysReadAsLetters(t *testing.T) {
	for _, tc := range []struct {
		stable bool
		want   []string
	}{
		{true, []string{"#1 key A ", "#2 key A, same", "key A → 200 re_0001"}},
		{false, []string{"#1 key A ", "#2 key B, new", "key A → 200 re_0001", "key B → 200 re_0002"}},
	} {
		stable := tc.stable
		m := press(t, newLab(t, Options{Mission: tts, Overrides: missions.Overrides{StableKeys: &stable}, Dir: t.TempDir()}, 100, 30), "r")
		rows := m.timeline.View()
		for _, w := range tc.want {
			if !strings.Contains(m.View(), w) {
				t.Errorf("stable keys %v: the lab lacks %q:\n%s", stable, w, m.View())
			}
		}
		for _, l := range strings.Split(rows, "\n") {
			if strings.Contains(l, "ik_") && !strings.HasPrefix(strings.TrimSpace(l), "↳") && !strings.Contains(l, " is") && !strings.HasPrefix(l, "  ") {
				t.Errorf("stable keys %v: a row names a hash: %q", stable, l)
			}
		}
		// Pick attempt #2 and read its hash in the strip.
		m = press(t, m, "up", "up")
		for m.timeline.Current() != nil && m.timeline.Current().Attempt != 2 {
			m = press(t, m, "up")
		}
		if ev := m.timeline.Current(); ev == nil || !strings.Contains(strings.Join(strings.Fields(m.timeline.View()), " "), "is "+ev.Key) {
			t.Errorf("stable keys %v: the strip of attempt #2 does not give its hash:\n%s", stable, m.timeline.View())
		}
	}
}

// TestVerdictInWords: at a run's end the lab says what the verdict means,
// as run does, and the help bar offers the pin that comes next.
func TestVerdictInWords(t *testing.T) {
	off := false
	m := press(t, newLab(t, Options{Mission: tts, Overrides: missions.Overrides{StableKeys: &off}, Dir: t.TempDir()}, 100, 30), "r")
	want := "duplicate: " + m.cas.Outcome.Verdicts[0].Explain()
	if !strings.Contains(m.View(), want) {
		t.Errorf("the lab does not say %q:\n%s", want, m.View())
	}
	if !strings.Contains(m.helpLine(), "m pin case") {
		t.Errorf("the help bar at the end does not offer m: %q", m.helpLine())
	}
}

// TestFirstTimeHidesCheckpoints: a first-time learner's timeline starts
// with the checkpoint rows hidden; h shows them.
func TestFirstTimeHidesCheckpoints(t *testing.T) {
	m := press(t, newLab(t, Options{Mission: tts, FirstTime: true, Dir: t.TempDir()}, 100, 30), "r")
	if !m.timeline.CheckpointsHidden() || strings.Contains(m.timeline.View(), "checkpoint →") {
		t.Fatalf("a first-timer sees checkpoint rows:\n%s", m.timeline.View())
	}
	if m = press(t, m, "h"); m.timeline.CheckpointsHidden() || !strings.Contains(m.timeline.View(), "checkpoint →") {
		t.Fatalf("h does not show them:\n%s", m.timeline.View())
	}
	if m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30); m.timeline.CheckpointsHidden() {
		t.Error("a learner past the first lesson starts with them hidden too")
	}
}

// TestGlossaryHasEveryWordTheLabShows: the glossary, reached from the
// full key list, explains each word of the lab's jargon and every
// fixture, provider action, observation, checkpoint and verdict a catalog
// run shows; esc goes back where it came from.
func TestGlossaryHasEveryWordTheLabShows(t *testing.T) {
	var text strings.Builder
	for _, term := range missions.Glossary {
		text.WriteString(term.Word + " " + term.Meaning + "\n")
	}
	all := text.String()
	words := []string{"fixture", "checkpoint", "tick", "observed", "replayed", "pruned", "contract v1", "contract v2", "contract none",
		"policy naive", "policy guarded", "late_commit +N", "kept to t100", "key A", "stable keys", "retention", "effect", "intended", "◆"}
	for _, v := range missions.Verdicts {
		words = append(words, string(v))
		// The counter's third line, with its number as the glossary
		// writes it.
		for _, n := range []int{0, 1, 2} {
			words = append(words, strings.Map(func(r rune) rune {
				if r >= '0' && r <= '9' {
					return 'N'
				}
				return r
			}, counterState(n, 1, v)))
		}
	}
	for _, f := range missions.Fixtures {
		words = append(words, string(f))
	}
	for _, ms := range missions.BuiltIn().Missions {
		for _, p := range missions.Policies {
			c, err := missions.Run(ms, ms.Settings(missions.Overrides{Policy: &p}))
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range c.Events {
				words = append(words, ev.Provider, string(ev.Observed), string(ev.Checkpoint))
			}
		}
	}
	for _, w := range words {
		if w != "" && !strings.Contains(all, w) {
			t.Errorf("the glossary does not explain %q", w)
		}
	}
	m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "?")
	if !strings.Contains(m.View(), "words (glossary)") {
		t.Fatalf("the full key list does not offer the glossary:\n%s", m.View())
	}
	m = press(t, m, "w")
	if m.screen != screenGlossary || !strings.Contains(m.View(), "timeout_after_commit") {
		t.Fatalf("w from the key list did not open the glossary:\n%s", m.View())
	}
	m = press(t, m, "pgdown")
	if m = press(t, m, "esc"); m.screen != screenLab {
		t.Errorf("esc from the glossary went to screen %d, not the lab", m.screen)
	}
}

// TestAgentWordsAlwaysReachable: what the agent said last is on screen
// from its first word at 80x24, and tab reaches the panel so that ↑ brings
// back what it said before (the apology the retry's words pushed out).
func TestAgentWordsAlwaysReachable(t *testing.T) {
	for _, id := range []string{tts, "refund-still-pending", "changed-parameters", "crash-after-send"} {
		for _, p := range missions.Policies {
			m := newLab(t, Options{Mission: id, Overrides: missions.Overrides{Policy: &p}, Dir: t.TempDir()}, 80, 24)
			for pos := 0; pos < m.steps; pos++ {
				m = press(t, m, "n")
				last := ""
				for _, ev := range m.cas.Whole().Events {
					if ev.Say != "" {
						last = ev.Say
					}
				}
				if last == "" {
					continue
				}
				first := strings.Join(strings.Fields(last)[:3], " ")
				if !strings.Contains(strings.Join(strings.Fields(m.said.View()), " "), first) {
					t.Errorf("%s %s step %d: the agent's last words (%q) are not on screen from their start:\n%s", id, p, m.pos, last, m.said.View())
				}
			}
			if len(m.said.lines) < 2 {
				continue
			}
			m = press(t, m, "tab", "tab")
			if m.focus != focusSaid {
				t.Fatalf("tab twice does not reach what the agent said")
			}
			firstSaid := strings.Join(strings.Fields(m.said.text(m.said.lines[0]))[:3], " ")
			for range m.said.lines {
				m = press(t, m, "up")
			}
			if !strings.Contains(strings.Join(strings.Fields(m.said.View()), " "), firstSaid) {
				t.Errorf("%s %s: ↑ does not bring back the first thing said (%q):\n%s", id, p, firstSaid, m.said.View())
			}
		}
	}
}

// TestACopyKeepsItsOwnKeys: every screen holds its keys as a value, so a
// copy of the lab that moves on leaves the original's help bar as it was
// (a shared key map once changed both).
func TestACopyKeepsItsOwnKeys(t *testing.T) {
	m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30)
	before := m.helpLine()
	moved := press(t, m, "r")
	if !m.keys.Step.Enabled() || m.helpLine() != before {
		t.Errorf("running a copy to the end changed the original's keys: %q", m.helpLine())
	}
	if moved.keys.Step.Enabled() || strings.Contains(moved.helpLine(), "n/→ step") {
		t.Errorf("the copy at the end still offers n: %q", moved.helpLine())
	}
	onCompare := press(t, m, "m", "k", "m", "v")
	if onCompare.screen != screenCompare || !m.keys.Pin.Enabled() || m.compare.keys.Unpin.Enabled() {
		t.Errorf("a copy on the compare view changed the original's keys")
	}
}

// TestExportKeepsTheCasesOfItsKey: e hands the write the cases pinned
// when it was pressed; a pin made before the write runs, which shifts the
// pins in place, does not change what is written.
func TestExportKeepsTheCasesOfItsKey(t *testing.T) {
	m := press(t, newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30), "r")
	a := m.kept()
	pins := make([]*missions.Case, 1, 4)
	pins[0] = a
	cmd := exportCases(t.TempDir(), pins...)
	m = press(t, m, "k")
	pins = append(pins[:0], m.kept()) // the array the command was handed, changed
	msg := cmd().(exportedMsg)
	if msg.err != nil || len(msg.paths) != 1 || !strings.Contains(msg.paths[0], caseFileName(a)) {
		t.Fatalf("the export wrote %v (%v), want %s", msg.paths, msg.err, caseFileName(a))
	}
}

// The counter's words never say the count is well where its colour says
// it is not: a red or amber counter never reads "= as intended", and
// "= count only", which said nothing of why it was red, is gone.
func TestCounterWordsAgreeWithItsColour(t *testing.T) {
	st := DefaultStyles()
	for _, v := range append([]missions.Verdict{""}, missions.Verdicts...) {
		for effects := 0; effects <= 3; effects++ {
			words := counterState(effects, 1, v)
			style := st.outcomeStyle(effects, 1, v)
			if words == "= count only" {
				t.Errorf("%s with %d effects: %q", v, effects, words)
			}
			if strings.HasPrefix(words, "=") && style.GetForeground() != st.CountEqual.GetForeground() {
				t.Errorf("%s with %d effects: %q drawn in another colour than the count as intended", v, effects, words)
			}
		}
	}
}

// From the picker to the source exercise's conclusion on the compare
// screen in nine keys, each one the screen suggests: open, run, pin, flip
// stable keys, pin, compare, add a mission's case (the picker opens on
// the first mission with nothing pinned), open, pin.
func TestSourceExerciseInNineKeys(t *testing.T) {
	m := newLab(t, Options{Dir: t.TempDir(), FirstTime: true}, 80, 24)
	keys := []string{"enter", "r", "m", "k", "m", "v", "a", "enter", "m"}
	for i, k := range keys {
		m = press(t, m, k)
		if k == "a" && m.picker.Selected().ID != "failure-then-failure" {
			t.Fatalf("after %v the picker is not on failure-then-failure:\n%s", keys[:i+1], m.View())
		}
	}
	if m.screen != screenCompare || len(m.pinned) != 3 {
		t.Fatalf("after %v: screen %d with %d pinned\n%s", keys, m.screen, len(m.pinned), m.View())
	}
	flat := strings.Join(strings.Fields(m.View()), " ")
	for _, want := range []string{"Same words, different ledgers", "Sorry, the refund of 45.00 on order 1042 failed.", "0, 2 and 1 effects"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the compare screen does not say %q:\n%s", want, m.View())
		}
	}
}

// An add begun from compare ends however compare is reached again: a
// later pin stays on the lab screen.
func TestAddFromCompareDoesNotLeak(t *testing.T) {
	m := newLab(t, Options{Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "enter", "r", "m", "k", "m", "v", "a", "enter", "v")
	if m.screen != screenCompare || m.adding {
		t.Fatalf("v after the add's enter: screen %d, adding %v", m.screen, m.adding)
	}
	m = press(t, m, "esc", "p", "m")
	if m.screen != screenLab {
		t.Fatalf("a later pin jumped to screen %d", m.screen)
	}
}

// Opening from compare's a a case already pinned says so, and how to make
// it another, rather than offering m, which would only say it again.
func TestAddingAPinnedCaseSaysSo(t *testing.T) {
	m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "r", "m", "v", "a")
	m.picker.Select(tts)
	m = press(t, m, "enter")
	if v := m.View(); !strings.Contains(v, "already pinned as A") || strings.Contains(v, "m pins the whole run") {
		t.Fatalf("opening the pinned case again:\n%s", v)
	}
}

// A goal that does not fit shows the whole sentences that do, marked as
// going on, rather than a sentence cut in its middle.
func TestGoalCutBetweenSentences(t *testing.T) {
	st := DefaultStyles()
	p := newGoalPanel(&st)
	p.text = "A timeout can hide a refund. The provider commits the first refund but its reply never arrives, so the caller tries again."
	p.SetSize(30, 3)
	got := p.fit(2)
	if len(got) != 1 || got[0] != "A timeout can hide a refund. …" {
		t.Errorf("cut goal: %q", got)
	}
	p.text = "One sentence far too long for the lines it is given to fit in whole here."
	if got := p.fit(2); len(got) != 2 || !strings.HasSuffix(got[1], "…") {
		t.Errorf("a first sentence too long: %q", got)
	}
}

// The counter says "not made" only where every intent short of its effect
// is one its caller believes failed, and nothing still executes: a
// guarded caller that does not know yet is short, not "not made".
func TestNotMadeOnlyWhenKnownFailed(t *testing.T) {
	shown := 0
	defer func() {
		if shown == 0 {
			t.Error("no step of any mission says not made")
		}
	}()
	for _, ms := range missions.BuiltIn().Missions {
		for _, p := range missions.Policies {
			m := newLab(t, Options{Mission: ms.ID, Overrides: missions.Overrides{Policy: &p}}, 100, 30)
			for pos := 1; pos <= m.steps; pos++ {
				m = press(t, m, "n")
				if !strings.Contains(m.header.View(), "not made") {
					continue
				}
				shown++
				if len(m.cas.Ledger.InFlight) > 0 {
					t.Errorf("%s %s step %d: not made while a request executes", ms.ID, p, pos)
				}
				for _, v := range m.cas.Outcome.Verdicts {
					if v.Effects == 0 && v.Belief != missions.BelievesFailed {
						t.Errorf("%s %s step %d: not made while %s believes %s", ms.ID, p, pos, v.Intent, v.Belief)
					}
				}
			}
		}
	}
}

// One pin made mid-run says what to do next, as one made at the end does:
// the contrasting case, not a compare of one.
func TestOnePinMidRunSuggestsTheContrast(t *testing.T) {
	m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 120, 30)
	m = press(t, m, "n", "m")
	if line := m.statusLine(); !strings.Contains(line, "k, then m pins the other case") || strings.Contains(line, "v compares") {
		t.Fatalf("status after one pin mid-run: %q", line)
	}
	m = press(t, m, "k", "m")
	if line := m.statusLine(); !strings.Contains(line, "v compares") {
		t.Fatalf("status after a second pin mid-run: %q", line)
	}
}
