package lab

import (
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/compare"
	"github.com/replaylab/replaylab/missions"
)

// A fixture too long for its column breaks after an underscore, and the
// arrow stays with what was observed: "server_error_after_commi" over
// "t → error" was cut in the middle of a word.
func TestFixtureLinesBreakBetweenWords(t *testing.T) {
	for _, tc := range []struct {
		fixture, observed string
		w                 int
		want              string
	}{
		{"server_error_after_commit", "error", 24, "server_error_after_|commit → error"},
		{"server_error_after_commit", "error", 40, "server_error_after_commit → error"},
		{"timeout_after_commit", "timeout", 24, "timeout_after_commit|→ timeout"},
		{"success", "success", 24, "success → success"},
		{"server_error_after_commit", "error", 10, "server_|error_|after_|commit|→ error"},
	} {
		lines := fixtureLines(tc.fixture, tc.observed, tc.w)
		if got := strings.Join(lines, "|"); got != tc.want {
			t.Errorf("%s → %s in %d cells: %q, want %q", tc.fixture, tc.observed, tc.w, got, tc.want)
		}
		for _, l := range lines {
			if ansi.StringWidth(l) > tc.w {
				t.Errorf("%q is wider than %d", l, tc.w)
			}
		}
	}
}

// fourPins pins four cases of saved-server-error and opens the compare view.
func fourPins(t *testing.T, w, h int) Model {
	t.Helper()
	m := newLab(t, Options{Mission: "saved-server-error", Dir: t.TempDir()}, w, h)
	m = press(t, m, "r", "m", "c", "m", "c", "c", "k", "m", "p", "k", "m", "v")
	if len(m.pinned) != 4 || m.screen != screenCompare {
		t.Fatalf("%d pinned, screen %d", len(m.pinned), m.screen)
	}
	return m
}

// Where not every pinned case fits, the title says which are on screen
// however narrow the terminal (the note was dropped whole at 72 columns,
// so nothing said two cases were hidden), and ← and → bring the others in.
func TestCompareShowsEveryPinnedCase(t *testing.T) {
	m := fourPins(t, 72, 20)
	title := strings.Split(m.View(), "\n")[0]
	if !strings.Contains(title, "C–D of 4") {
		t.Fatalf("title at 72 columns: %q", title)
	}
	if !m.compare.keys.Left.Enabled() || !strings.Contains(m.helpLine(), "←/→ other pins") {
		t.Fatalf("columns are hidden, yet ← is not offered: %q", m.helpLine())
	}
	heads := func(m Model) string {
		lines := strings.Split(m.View(), "\n")
		if !strings.HasPrefix(strings.TrimSpace(lines[1]), "every case:") {
			t.Fatalf("no line names what every case has in common: %q", lines[1])
		}
		return lines[2]
	}
	m = press(t, m, "left")
	if h := heads(m); !strings.HasPrefix(strings.TrimSpace(h), "B ") || !strings.Contains(h, "C ") {
		t.Fatalf("after ←: %q", h)
	}
	m = press(t, m, "left", "left", "left")
	if h := heads(m); !strings.HasPrefix(strings.TrimSpace(h), "A ") || !strings.Contains(h, "B ") {
		t.Fatalf("after ← past the oldest: %q", h)
	}
	m = press(t, m, "right")
	if h := heads(m); !strings.HasPrefix(strings.TrimSpace(h), "B ") {
		t.Fatalf("one → after the oldest: %q", h)
	}
	// Wide enough for all four: no arrows offered, and ← changes nothing.
	wide := resize(m, 200, 40)
	if wide.compare.keys.Left.Enabled() || strings.Contains(wide.helpLine(), "←/→") {
		t.Fatalf("every case fits, yet ← is offered: %q", wide.helpLine())
	}
	if h := heads(press(t, wide, "left")); !strings.HasPrefix(strings.TrimSpace(h), "A ") || !strings.Contains(h, "D ") {
		t.Fatalf("at 200 columns: %q", h)
	}
	// Narrowed again, the view is back on the newest.
	narrow := press(t, resize(wide, 72, 20), "right")
	if title := strings.Split(narrow.View(), "\n")[0]; !strings.Contains(title, "C–D of 4") {
		t.Fatalf("narrowed, then →: %q", title)
	}
}

// The view opens with the first divergence in sight, even where only one
// attempt row fits: it opened on the row before, with the ◆ out of sight.
func TestCompareOpensOnTheDivergenceWhenOneRowFits(t *testing.T) {
	m := press(t, newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 72, 20), "r", "m", "k", "m", "v")
	if !strings.Contains(m.View(), "#2 ◆") {
		t.Fatalf("the diverging attempt is out of sight:\n%s", m.View())
	}
}

// A ◆ marks only a pair whose two cases are both in view: with four pins
// at 72 columns the newest two (C and D) part at no attempt under the same
// words, so no row is marked, though A and C do part; where all four fit,
// their ◆ is there, with the legend beside the rows.
func TestCompareMarksOnlyPairsInView(t *testing.T) {
	m := fourPins(t, 72, 20)
	v := m.View()
	if strings.Contains(v, "◆") || !strings.Contains(v, "C–D of 4") {
		t.Fatalf("a ◆ for a pair out of view:\n%s", v)
	}
	v = resize(m, 200, 40).View()
	if !strings.Contains(v, "#2 ◆") || !strings.Contains(strings.Join(strings.Fields(v), " "), "◆ marks where two cases first hold different ledgers") {
		t.Fatalf("every case in view, and no ◆ with its legend:\n%s", v)
	}
}

// Where every attempt fits with lines to spare, the agent's words are
// whole: at 160x50 they were cut at three lines above a stretch of blank
// ones. Where the attempts do not all fit, cells keep three lines.
func TestCompareWordsWholeWhereThereIsRoom(t *testing.T) {
	m := fourPins(t, 160, 50)
	v := m.View()
	if !strings.Contains(v, "order 1042 went through (re_0001).”") {
		t.Fatalf("the guarded case's words at attempt 2 are cut:\n%s", v)
	}
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, "…") && !strings.HasPrefix(l, "◆") {
			t.Fatalf("a cut line at 160x50: %q\n%s", l, v)
		}
	}
	// At 80x24 the attempts fill the screen: what tells the cases apart is
	// whole in their heads (C and D read "policy guarded,…" alike, their
	// contracts cut), and the agent's words give way instead, cut on a
	// whole word.
	small := fourPins(t, 80, 24)
	first, colW, gap := small.compare.columns()
	for _, l := range small.compare.heads(first, colW, gap) {
		if strings.Contains(l, "…") {
			t.Fatalf("a case's head is cut at 80x24: %q\n%s", l, small.View())
		}
	}
	if v := small.View(); !strings.Contains(v, "#2") || !strings.Contains(v, "“Sorry, the refund of…") {
		t.Fatalf("at 80x24 both attempts, their words cut on a whole word:\n%s", v)
	}
}

// An attempt one case never sent (here the guarded caller read the ledger
// back instead of retrying) says so in that case's column.
func TestCompareSaysWhichAttemptWasNotSent(t *testing.T) {
	m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "k", "r", "m", "p", "m", "v")
	if m.screen != screenCompare || len(m.pinned) != 2 {
		t.Fatalf("screen %d with %d pinned", m.screen, len(m.pinned))
	}
	// Pins are lettered in the order they were pinned: the guarded case,
	// pinned second, is B.
	if v := m.View(); !strings.Contains(v, "(not sent)") || !strings.Contains(v, "success → success") || !strings.Contains(v, "B policy guarded") {
		t.Fatalf("attempt 2 of the guarded case is not marked as not sent:\n%s", v)
	}
}

// A pin's letter is given when it is pinned and stays: A is the first
// case pinned, whatever is pinned after it (after the first m it read
// "pinned A → 1 effect", after the second "pinned A → 2 effects, the
// others relettered"). The status line names the new pin's letter.
func TestPinsKeepTheirLetters(t *testing.T) {
	m := press(t, newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30), "r", "m")
	if !strings.Contains(m.statusLine(), "pinned A") {
		t.Fatalf("first pin: %q", m.statusLine())
	}
	first := caseFileName(m.pinned[0])
	for i, k := range []string{"k", "p"} {
		m = press(t, m, k, "m")
		if want := "pinned " + compare.CaseName(i+1); !strings.Contains(m.statusLine(), want) || strings.Contains(m.statusLine(), "relettered") {
			t.Fatalf("pin %d: %q, want %q", i+2, m.statusLine(), want)
		}
		if caseFileName(m.pinned[0]) != first {
			t.Fatalf("after pin %d, A is %s, not the first case pinned (%s)", i+2, caseFileName(m.pinned[0]), first)
		}
	}
	m = press(t, m, "v")
	heads := m.compare.cmp.Cases
	if len(heads) != 3 || !strings.Contains(heads[0].Label, "stable keys on") || !strings.Contains(heads[2].Label, "policy guarded") {
		t.Fatalf("compare letters the pins otherwise: %+v", heads)
	}
}

// The case a pin suggests setting beside it is one that differs: where
// keys come from the payload hash, stable keys change nothing, so the
// policy is suggested.
func TestContrastIsACaseThatDiffers(t *testing.T) {
	for _, tc := range []struct {
		s         missions.Settings
		key, want string
	}{
		{missions.Settings{StableKeys: true, Policy: missions.Naive, KeySource: missions.KeyPerIntent}, "k", "stable keys off"},
		{missions.Settings{StableKeys: false, Policy: missions.Naive, KeySource: missions.KeyPerIntent}, "k", "stable keys on"},
		{missions.Settings{StableKeys: true, Policy: missions.Naive, KeySource: missions.KeyPayloadHash}, "p", "policy guarded"},
		{missions.Settings{StableKeys: true, Policy: missions.Guarded, KeySource: missions.KeyPayloadHash}, "p", "policy naive"},
	} {
		k, turns := contrast(tc.s)
		if k != tc.key || !strings.Contains(turns, tc.want) {
			t.Errorf("%+v: %s %s, want %s %s", tc.s, k, turns, tc.key, tc.want)
		}
	}
}

// With one pin, compare says what to pin next from where the lab stands:
// a toggle where the lab shows the pinned case, and m alone where the
// lab already shows another, never a key that would turn back to the pin.
func TestOnePinSuggestsFromTheLab(t *testing.T) {
	for _, tc := range []struct {
		keys       []string
		want, not  string
		stableKeys bool
	}{
		{[]string{"r", "m", "v"}, "k (it turns stable keys off)", "the lab's case", true},
		{[]string{"r", "m", "k", "v"}, "m pins the lab's case (stable keys off", "it turns", true},
		{[]string{"r", "m", "k", "v"}, "m pins the lab's case (stable keys on", "it turns", false},
	} {
		stable := tc.stableKeys
		m := newLab(t, Options{Mission: tts, Dir: t.TempDir(), Overrides: missions.Overrides{StableKeys: &stable}}, 100, 30)
		m = press(t, m, tc.keys...)
		view := strings.Join(strings.Fields(m.View()), " ")
		if m.screen != screenCompare || !strings.Contains(view, tc.want) || strings.Contains(view, tc.not) {
			t.Errorf("keys %v from stable keys %v: want %q and not %q on\n%s", tc.keys, stable, tc.want, tc.not, m.View())
		}
	}
}

// At 80x24 what the two cases show together is on screen beside the
// rows, and ↓ brings the finding of their pair in whole: findings that do
// not fit are a key away, never only "replaylab compare lists them".
func TestCompareFindingFitsAt80x24(t *testing.T) {
	m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 80, 24)
	m = press(t, m, "r", "m", "k", "m", "v")
	view := strings.Join(strings.Fields(m.View()), " ")
	if !strings.Contains(view, "Same words, different ledgers") || !strings.Contains(view, "↓ shows it") || !m.compare.Scrolls() {
		t.Fatalf("the story and the way to the finding are not on screen:\n%s", m.View())
	}
	m = press(t, m, "down")
	view = strings.Join(strings.Fields(m.View()), " ")
	if !strings.Contains(view, compare.DivergeMark+" Case A") || !strings.Contains(view, "effects in B.") || strings.Contains(view, "more finding") {
		t.Errorf("↓ does not bring the diverging pair's finding in whole:\n%s", m.View())
	}
	if m = press(t, m, "up"); !strings.Contains(strings.Join(strings.Fields(m.View()), " "), "Same words, different ledgers") {
		t.Errorf("↑ does not go back to the story:\n%s", m.View())
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
	if !strings.Contains(flat, "Same words, different ledgers") || !strings.Contains(flat, "1, 2 and 0 effects") {
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
	if !strings.HasPrefix(first, "◆ Case A (timeout-then-success, stable keys on) and case C (failure-then-failure, stable keys on)") {
		t.Errorf("the first finding is not what the newest case adds:\n%s", first)
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

func TestPinAndCompare(t *testing.T) {
	m := ttsLab(t)
	if m.keys.Compare.Enabled() {
		t.Fatal("compare enabled with nothing pinned")
	}
	if m = press(t, m, "v"); m.screen != screenLab {
		t.Fatal("v opened compare with nothing pinned")
	}
	m = press(t, m, "m")
	if len(m.pinned) != 1 || m.pinned[0].Outcome.Effects != 1 {
		t.Fatalf("pinned %d cases", len(m.pinned))
	}
	if m = press(t, m, "m"); len(m.pinned) != 1 || !strings.Contains(m.status, "already pinned") {
		t.Fatalf("pinning the same case twice: %d pinned, status %q", len(m.pinned), m.status)
	}
	m = press(t, m, "k", "m", "v")
	if len(m.pinned) != 2 || m.screen != screenCompare {
		t.Fatalf("%d pinned, screen %d; want 2 on compare", len(m.pinned), m.screen)
	}
	if m.compare.cmp.Diverge != 2 {
		t.Fatalf("first divergence at attempt %d, want 2 (same words, 1 effect against 2)", m.compare.cmp.Diverge)
	}
	if m = press(t, m, "esc"); m.screen != screenLab {
		t.Fatal("esc does not leave compare")
	}
	m = press(t, m, "v", "x")
	if len(m.pinned) != 0 || m.screen != screenLab {
		t.Fatal("x does not clear the pins")
	}
}

func TestCompareExportWritesEveryPinnedCase(t *testing.T) {
	dir := t.TempDir()
	m := newLab(t, Options{Mission: tts, Dir: dir}, 100, 30)
	m = press(t, m, "m", "k", "m", "v")
	m = pressRun(t, m, "e")
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 || !strings.Contains(m.status, "exported 2 cases") {
		t.Fatalf("%d files, status %q", len(entries), m.status)
	}
}

func TestCompareScrolls(t *testing.T) {
	// The seed lab's three cases are taller than 72x20, even with the
	// agent's words cut to a line.
	cat := seedCatalog(t)
	m := openMission(t, newLab(t, Options{Catalog: cat, Dir: t.TempDir()}, 72, 20), cat.Missions[0])
	m = press(t, m, "r", "m", "k", "r", "m", "esc", "down", "enter", "k", "r", "m", "v")
	if !m.compare.keys.Up.Enabled() || !strings.Contains(m.helpLine(), "↑/↓ scroll") {
		t.Fatalf("attempts hidden below, yet the help bar offers no scrolling: %s", m.helpLine())
	}
	start := m.compare.offset
	if m = press(t, m, "down"); m.compare.offset != start+1 {
		t.Fatalf("down: offset %d, want %d", m.compare.offset, start+1)
	}
	if m = press(t, m, "up", "up", "up"); m.compare.offset != 0 {
		t.Fatalf("up past the top: offset %d", m.compare.offset)
	}
	// Past the last row, the keys go on through the findings, and back.
	m = press(t, m, "pgdown", "pgdown", "pgdown", "pgdown", "down", "down", "down", "down", "down", "down")
	if m.compare.offset > len(m.compare.cmp.Rows)-1 || m.compare.findOff != len(m.compare.sentences())-1 {
		t.Fatalf("pgdown past the end: offset %d of %d rows, finding %d of %d", m.compare.offset, len(m.compare.cmp.Rows), m.compare.findOff, len(m.compare.sentences()))
	}
	m = press(t, m, "pgup", "pgup", "pgup", "pgup", "up", "up", "up", "up", "up", "up")
	if m.compare.offset != 0 || m.compare.findOff != 0 {
		t.Fatalf("pgup: offset %d, finding %d", m.compare.offset, m.compare.findOff)
	}
}

// Where every attempt and finding fits, the compare view has nothing to
// scroll: the help bar and the key list leave ↑/↓ out, and they move
// nothing. Where only findings wait below the rows, ↓ brings them and
// leaves the rows where they are.
func TestCompareOffersScrollingOnlyWhenThereIsMore(t *testing.T) {
	m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 40)
	m = press(t, m, "m", "k", "p", "m", "v")
	if m.screen != screenCompare || len(m.compare.cmp.Rows) < 2 {
		t.Fatalf("want the compare view of two attempts, got screen %d with %d rows", m.screen, len(m.compare.cmp.Rows))
	}
	if m.keys.Up.Enabled() || strings.Contains(m.helpLine(), "scroll") {
		t.Fatalf("everything fits, yet the help bar offers scrolling: %s\n%s", m.helpLine(), m.View())
	}
	if v := press(t, m, "?").View(); strings.Contains(v, "scroll") || strings.Contains(v, "pgup") {
		t.Fatalf("everything fits, yet the key list offers scrolling:\n%s", v)
	}
	if m = press(t, m, "down", "pgdown"); m.compare.offset != 0 || m.compare.findOff != 0 {
		t.Fatalf("down scrolled a view that fits: offset %d, finding %d", m.compare.offset, m.compare.findOff)
	}
	// A shorter terminal keeps both attempts on screen, with fewer lines
	// of the agent's words, rather than hide the second below blank lines;
	// the finding that no longer fits is a ↓ away.
	m = resize(m, 72, 20)
	if !strings.Contains(m.View(), "#2") || !m.compare.keys.Up.Enabled() {
		t.Fatalf("at 72x20 the second attempt is not on screen, or the findings below are not offered:\n%s", m.View())
	}
	if m = press(t, m, "down"); m.compare.offset != 0 || m.compare.findOff != 1 {
		t.Fatalf("down at 72x20: offset %d, finding %d", m.compare.offset, m.compare.findOff)
	}
}

// The compare view opens at the top when the first divergence is in
// sight from there, and on the row before it when it is not; a resize
// before any scrolling places it again, a scroll is never undone.
func TestCompareOpensWhereTheDivergenceShows(t *testing.T) {
	ms := longMission(4)
	// Two refusals first: the ledgers part at attempt 4, under the same
	// words, when stable keys are off.
	ms.Schedule[0].Fixture = missions.FailureBeforeCommit
	ms.Schedule[1].Fixture = missions.FailureBeforeCommit
	pinBoth := func(w, h int) Model {
		m := openMission(t, newLab(t, Options{Catalog: catalogOf(ms), Dir: t.TempDir()}, w, h), ms)
		return press(t, m, "r", "m", "k", "r", "m", "v")
	}
	tall := pinBoth(120, 60)
	if tall.compare.cmp.Diverge != 4 {
		t.Fatalf("the cases diverge at attempt %d, want 4", tall.compare.cmp.Diverge)
	}
	if tall.compare.offset != 0 || tall.compare.Scrolls() {
		t.Fatalf("at 120x60 every attempt fits, yet the view opens at row %d", tall.compare.offset)
	}
	short := pinBoth(80, 24)
	if short.compare.offset != 2 || !strings.Contains(short.View(), "#4 ◆") {
		t.Fatalf("at 80x24 the view opens at row %d, want 2 (the divergence in sight)\n%s", short.compare.offset, short.View())
	}
	if grown := resize(short, 120, 60); grown.compare.offset != 0 {
		t.Fatalf("grown to 120x60 before any scrolling, the view stays at row %d", grown.compare.offset)
	}
	// (A fresh lab: models share their key map, and the grown one has
	// just turned scrolling off in it.)
	// Scrolled, then grown to where every row fits: the rows above come
	// back rather than blank lines below the last (at 72x20 scrolled to
	// attempt 2, then 120x40, attempt 1 stayed hidden above 13 blank
	// lines). Grown only a little, the scroll stays.
	scrolled := press(t, pinBoth(80, 24), "up")
	if a := resize(scrolled, 81, 24); a.compare.offset != 1 {
		t.Fatalf("a resize that still does not fit every row undid the scroll: row %d, want 1", a.compare.offset)
	}
	if scrolled = resize(scrolled, 120, 60); scrolled.compare.offset != 0 || !strings.Contains(scrolled.View(), "#1 ") {
		t.Fatalf("grown to fit every row, the view stays at row %d:\n%s", scrolled.compare.offset, scrolled.View())
	}
}
