package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"pgregory.net/rapid"

	"github.com/replaylab/replaylab/internal/mdtest"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/missions/missionstest"
	"github.com/replaylab/replaylab/render"
)

func TestCompareSeedGolden(t *testing.T) {
	cmp := Compare(missionstest.Seed(t))
	t.Run("text", func(t *testing.T) { golden.RequireEqual(t, CompareText(cmp, 100)) })
	t.Run("text_narrow", func(t *testing.T) { golden.RequireEqual(t, CompareText(cmp, 56)) })
	t.Run("markdown", func(t *testing.T) { golden.RequireEqual(t, CompareMarkdown(cmp)) })
}

// The teaching point of the seed lab: the same words, different ledgers.
func TestCompareSeedDivergence(t *testing.T) {
	cmp := Compare(missionstest.Seed(t))
	want := []struct {
		a, b, diverge int
		says          []string
	}{
		// Stable keys on and off: both say "done" at attempt 2, with
		// different object ids; one ledger holds 1 refund, the other 2.
		{0, 1, 2, []string{"at attempt 2", "1 effect in A", "2 effects in B", "went through", "object ids aside"}},
		// A committed timeout and a failure before commit: both say
		// "failed, I'll try again" at attempt 1; the ledgers hold 1 and 0.
		{0, 2, 1, []string{"at attempt 1", "1 effect in A", "0 effects in C", "I'll try again"}},
		{1, 2, 1, []string{"at attempt 1", "1 effect in B", "0 effects in C"}},
	}
	if len(cmp.Pairs) != len(want) {
		t.Fatalf("got %d pairs, want %d", len(cmp.Pairs), len(want))
	}
	for i, w := range want {
		p := cmp.Pairs[i]
		if p.A != w.a || p.B != w.b || p.Diverge != w.diverge {
			t.Errorf("pair %d: got (%d,%d) diverging at %d, want (%d,%d) at %d", i, p.A, p.B, p.Diverge, w.a, w.b, w.diverge)
		}
		for _, s := range w.says {
			if !strings.Contains(p.Sentence, s) {
				t.Errorf("pair %d sentence lacks %q:\n%s", i, s, p.Sentence)
			}
		}
		if strings.Count(p.Sentence, ".”") > 1 || !strings.HasSuffix(p.Sentence, ".") {
			t.Errorf("pair %d: not one sentence: %s", i, p.Sentence)
		}
	}
	if cmp.Diverge != 1 || !cmp.Rows[0].Divergent || !cmp.Rows[1].Divergent {
		t.Errorf("divergent rows: diverge=%d rows=%v,%v", cmp.Diverge, cmp.Rows[0].Divergent, cmp.Rows[1].Divergent)
	}
	// The words at attempt 2 differ only by the object id.
	a, b := cmp.Rows[1].Cells[0].Said, cmp.Rows[1].Cells[1].Said
	if a == b || !strings.Contains(a, "re_0001") || !strings.Contains(b, "re_0002") {
		t.Errorf("attempt 2 words: %q and %q", a, b)
	}
	if len(cmp.Notes) != 1 || !strings.Contains(cmp.Notes[0], "different missions") {
		t.Errorf("notes = %q, want one about different missions", cmp.Notes)
	}
}

func TestCompareSameMissionHasNoNote(t *testing.T) {
	cases := missionstest.Seed(t)[:2]
	cmp := Compare(cases)
	if len(cmp.Notes) != 0 {
		t.Errorf("notes = %q", cmp.Notes)
	}
	if cmp.Cases[0].Label != "stable keys on" || cmp.Cases[1].Label != "stable keys off" {
		t.Errorf("labels = %q, %q", cmp.Cases[0].Label, cmp.Cases[1].Label)
	}
}

// The guarded caller speaks on the checkpoints after a send; those words
// belong to the attempt before them.
func TestCompareGuardedWordsFollowTheAttempt(t *testing.T) {
	g := missions.Guarded
	guarded := missionstest.Run(t, "timeout-then-success", missions.Overrides{Policy: &g})
	for _, ev := range guarded.Events {
		if ev.Kind == missions.EventAttempt && ev.Say != "" {
			t.Fatalf("this test needs the guarded caller to speak after its attempts, not on them: %+v", ev)
		}
	}
	cmp := Compare([]*missions.Case{missionstest.Seed(t)[0], guarded})
	said := cmp.Rows[0].Cells[1].Said
	if said == "" || strings.Contains(said, "Done") {
		t.Fatalf("guarded words for attempt 1 = %q, want the words said after it and before attempt 2", said)
	}
	if !strings.Contains(cmp.Rows[1].Cells[1].Said, "Done") {
		t.Errorf("guarded words for attempt 2 = %q", cmp.Rows[1].Cells[1].Said)
	}
	// Same ledgers throughout, different words: no divergence to mark.
	p := cmp.Pairs[0]
	if p.Diverge != 0 || p.LedgerDiffers != 0 || p.WordsDiffer != 1 {
		t.Errorf("pair = %+v", p)
	}
	if !strings.Contains(p.Sentence, "same effect count") || !strings.Contains(p.Sentence, "first differ at attempt 1") {
		t.Errorf("sentence = %s", p.Sentence)
	}
}

func TestCompareMissingAttempt(t *testing.T) {
	short := missionstest.Seed(t)[0]
	for i, ev := range short.Events { // keep events up to attempt 1
		if ev.Attempt == 1 {
			short.Events = short.Events[:i+1]
			break
		}
	}
	short.Outcome.Effects = 1
	cmp := Compare([]*missions.Case{short, missionstest.Seed(t)[1]})
	if len(cmp.Rows) != 2 || cmp.Rows[1].Cells[0].Present || !cmp.Rows[1].Cells[1].Present {
		t.Fatalf("rows = %+v", cmp.Rows)
	}
	if !strings.Contains(string(CompareText(cmp, 100)), "(not sent)") {
		t.Error("text does not show the missing attempt")
	}
	if s := cmp.Pairs[0].Sentence; !strings.Contains(s, "A ends with 1 effect, B with 2 effects") || !strings.Contains(s, "made attempts the other did not") {
		t.Errorf("sentence = %s", s)
	}
}

func TestCompareJSON(t *testing.T) {
	b, err := CompareJSON(Compare(missionstest.Seed(t)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("{\n  \"schema\": \""+ComparisonSchemaID+"\"")) {
		t.Errorf("JSON does not start with the schema: %.80s", b)
	}
	var back Comparison
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Rows) != 2 || len(back.Pairs) != 3 || back.Pairs[0].Diverge != 2 || back.Rows[0].Cells[2].Fixture != missions.FailureBeforeCommit {
		t.Errorf("round trip lost data: %+v", back)
	}
}

// Text output never has a line wider than asked, and every line of a
// table has its column separators in the same places.
func TestCompareTextFitsWidth(t *testing.T) {
	base := missionstest.Seed(t)
	rapid.Check(t, func(rt *rapid.T) {
		width := rapid.IntRange(render.MinTextWidth, 220).Draw(rt, "width")
		n := rapid.IntRange(2, 7).Draw(rt, "cases")
		say := rapid.StringOfN(rapid.SampledFrom([]rune("ab |\n\t*_`界😀\x1b[0mm-")), 0, 200, -1).Draw(rt, "say")
		var cases []*missions.Case
		for i := 0; i < n; i++ {
			c := base[i%len(base)]
			if rapid.Bool().Draw(rt, "hostile") {
				c = missionstest.Hostile(c, say)
			}
			cases = append(cases, c)
		}
		out := string(CompareText(Compare(cases), width))
		if strings.Contains(out, "\x1b") {
			rt.Fatalf("escape sequence in output")
		}
		for _, line := range strings.Split(out, "\n") {
			if w := ansi.StringWidth(line); w > width {
				rt.Fatalf("line %d wide at width %d: %q", w, width, line)
			}
		}
		checkTables(rt, out)
	})
}

// checkTables finds each table (a header line followed by a rule) and
// checks that its lines keep their separators at the rule's columns.
func checkTables(t interface{ Fatalf(string, ...any) }, out string) {
	lines := strings.Split(out, "\n")
	for i := 1; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "────────") {
			continue
		}
		cols := separatorColumns(lines[i], '┼')
		// Walk up to the header and down to the end of the table.
		start := i - 1
		for start > 0 && strings.Contains(lines[start-1], "│") {
			start--
		}
		for j := start; j < len(lines) && lines[j] != ""; j++ {
			if j == i || strings.HasPrefix(lines[j], "─") {
				if got := separatorColumns(lines[j], '┼'); fmt.Sprint(got) != fmt.Sprint(cols) {
					t.Fatalf("rule %d has separators at %v, want %v", j, got, cols)
				}
				continue
			}
			got := separatorColumns(lines[j], '│')
			// A row may end early where its last cells are empty.
			if len(got) > len(cols) || fmt.Sprint(got) != fmt.Sprint(cols[:len(got)]) {
				t.Fatalf("table line %d has separators at %v, want %v: %q", j, got, cols, lines[j])
			}
			if len(got) < len(cols) && ansi.StringWidth(lines[j]) > cols[len(got)] {
				t.Fatalf("table line %d lost a separator: %q", j, lines[j])
			}
		}
	}
}

// separatorColumns returns the display columns where sep occurs in line.
func separatorColumns(line string, sep rune) []int {
	var cols []int
	col := 0
	for _, r := range line {
		if r == sep {
			cols = append(cols, col)
		}
		col += ansi.StringWidth(string(r))
	}
	return cols
}

// The comparison's Markdown is a real GFM table: a Markdown library
// parses one table with a header and five columns in every row, and
// hostile text stays inside its cell.
func TestCompareMarkdownRendersAsTable(t *testing.T) {
	cases := missionstest.Seed(t)
	cases[2] = missionstest.Hostile(cases[2], "a | b\nc `code` *em* <b>x</b> \\| 1. item")
	md := CompareMarkdown(Compare(cases))
	tables := mdtest.Tables(t, md)
	if len(tables) != 1 {
		t.Fatalf("found %d tables, want 1:\n%s", len(tables), md)
	}
	rows := tables[0]
	// Header, 2 attempts × 4 fields, outcome effects and verdicts.
	if len(rows) != 1+2*4+2 {
		t.Fatalf("table has %d rows, want 11:\n%s", len(rows), md)
	}
	for i, r := range rows {
		if len(r) != 5 {
			t.Fatalf("row %d has %d cells, want 5: %q", i, len(r), r)
		}
	}
	if got := rows[1][2]; got != "timeout_after_commit" {
		t.Errorf("attempt 1 fixture of #1 = %q", got)
	}
	if got := rows[3][4]; got != "a | b c `code` *em* <b>x</b> \\| 1. item" {
		t.Errorf("hostile words cell = %q", got)
	}
	if got := rows[4][3]; got != "1" {
		t.Errorf("attempt 1 effects of #2 = %q", got)
	}
	if got := rows[9][3]; got != "2 of 1 intended" {
		t.Errorf("outcome of #2 = %q", got)
	}
	html := mdtest.HTML(t, md)
	if strings.Count(html, "<table>") != 1 || strings.Count(html, "<td>") != 10*5 || strings.Contains(html, "<b>x") {
		t.Errorf("HTML is not one clean 5-column table:\n%s", html)
	}
}

// Attempt numbers come from files; a huge one must not make a huge table.
func TestCompareSparseAttemptNumbers(t *testing.T) {
	cases := missionstest.Seed(t)
	c := *cases[1]
	c.Events = append([]missions.Event(nil), c.Events...)
	for i := range c.Events {
		if c.Events[i].Attempt == 2 {
			c.Events[i].Attempt = 1 << 40
		}
	}
	cmp := Compare([]*missions.Case{cases[0], &c})
	if len(cmp.Rows) != 3 || cmp.Rows[1].Attempt != 2 || cmp.Rows[2].Attempt != 1<<40 {
		t.Fatalf("rows: %+v", cmp.Rows)
	}
	if len(CompareText(cmp, 80)) == 0 || len(CompareMarkdown(cmp)) == 0 {
		t.Fatal("no output")
	}
}

// A sentence that ends in a quotation already closed by a full stop gets no
// second one.
func TestSentenceEndsOnce(t *testing.T) {
	if got := endSentence("it says “done.”"); got != "it says “done.”" {
		t.Errorf("got %q", got)
	}
	if got := endSentence("they differ"); got != "they differ." {
		t.Errorf("got %q", got)
	}
}

func TestCaseNamesAreLetters(t *testing.T) {
	for i, want := range map[int]string{0: "A", 1: "B", 25: "Z", 26: "AA", 27: "AB", 51: "AZ", 52: "BA", 701: "ZZ", 702: "AAA"} {
		if got := CaseName(i); got != want {
			t.Errorf("CaseName(%d) = %q, want %q", i, got, want)
		}
	}
}

func TestWrapCellBreaksFixturesAfterUnderscores(t *testing.T) {
	tests := []struct {
		s     string
		width int
		want  []string
	}{
		{"timeout_after_commit", 12, []string{"timeout_", "after_commit"}},
		{"server_error_after_commit", 13, []string{"server_error_", "after_commit"}},
		{"timeout_after_commit", 30, []string{"timeout_after_commit"}},
		// Words with spaces wrap at the spaces, underscores and all.
		{"refund-1042: exactly_once (believes done)", 20, []string{"refund-1042:", "exactly_once", "(believes done)"}},
	}
	for _, tt := range tests {
		if got := wrapCell(tt.s, tt.width); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("wrapCell(%q, %d) = %q, want %q", tt.s, tt.width, got, tt.want)
		}
	}
}

// The text leads with what the cases show together, in the order they
// were given: the same apology behind 1, 2 and 0 effects, before any
// table or pair.
func TestCompareTellsTheStoryFirst(t *testing.T) {
	cmp := Compare(missionstest.Seed(t))
	want := "Same words, different ledgers: in every case the agent first says “Sorry, the refund of 45.00 on order 1042 failed. I'll try again.”, yet the ledgers end with 1, 2 and 0 effects (A, B and C)."
	if cmp.Story != want {
		t.Fatalf("story %q, want %q", cmp.Story, want)
	}
	text := strings.Join(strings.Fields(string(CompareText(cmp, 100))), " ")
	if !strings.HasPrefix(text, want) {
		t.Fatalf("the text does not lead with the story:\n%s", text)
	}
	// Reversed, the letters follow the order given.
	rev := missionstest.Seed(t)
	slices.Reverse(rev)
	if s := Compare(rev).Story; !strings.Contains(s, "0, 2 and 1 effects (A, B and C)") {
		t.Fatalf("reversed: %q", s)
	}
	// Two cases are both cases.
	if s := Compare(missionstest.Seed(t)[:2]).Story; !strings.Contains(s, "in both cases the agent first says") {
		t.Fatalf("two cases: %q", s)
	}
	// One case has no story.
	if s := Compare(missionstest.Seed(t)[:1]).Story; s != "" {
		t.Fatalf("one case: %q", s)
	}
}

// Where the ledgers part only where the agent's words part too, the
// story does not claim "same words, different ledgers".
func TestStoryClaimsSameWordsOnlyWhereTheyAre(t *testing.T) {
	on, off := true, false
	cmp := Compare([]*missions.Case{
		missionstest.Run(t, "refund-still-pending", missions.Overrides{StableKeys: &on}),
		missionstest.Run(t, "refund-still-pending", missions.Overrides{StableKeys: &off}),
	})
	if cmp.Outcomes[0].Effects == cmp.Outcomes[1].Effects || cmp.Diverge != 0 {
		t.Fatalf("the test needs ledgers that end apart with no same-words divergence: %+v, diverge %d", cmp.Outcomes, cmp.Diverge)
	}
	if strings.HasPrefix(cmp.Story, "Same words") || !strings.Contains(cmp.Story, "its words part too") {
		t.Fatalf("story: %q", cmp.Story)
	}
}

// A case of a mission edited in the lab is set beside the mission's own
// cases as the same mission's steps: no "different missions" note, but one
// that names the edit.
func TestCompareNamesAnEdit(t *testing.T) {
	own := missionstest.Run(t, "timeout-then-success", missions.Overrides{})
	edited := missionstest.Edited(t, "timeout-then-success", map[int]missions.Fixture{1: missions.FailureBeforeCommit, 2: missions.FailureBeforeCommit})
	cmp := Compare([]*missions.Case{own, edited})
	notes := strings.Join(cmp.Notes, "\n")
	if strings.Contains(notes, "different missions") || !strings.Contains(notes, "Case B plays timeout-then-success with its steps' fixtures replaced in the lab: step 1 timeout_after_commit → failure_before_commit") {
		t.Fatalf("notes: %q", notes)
	}
	if cmp.Cases[1].Edited == "" || !strings.Contains(string(CompareBrief(cmp, 80, "")), "Case B plays timeout-then-success") {
		t.Fatalf("the brief text does not name the edit:\n%s", CompareBrief(cmp, 80, ""))
	}
}
