package lab

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/compare"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// Compare view layout.
const (
	compareGutter = 5  // "#12 ◆"
	compareMinCol = 22 // narrower columns are not shown
	compareSaidH  = 3  // lines of the agent's words per cell
	// Where every attempt fits with lines to spare, the words get more
	// lines, up to this many, rather than being cut above blank lines.
	compareSaidMax = 10
	compareColGap  = 2  // blank cells between columns where there is room
	compareRoomy   = 26 // columns at least this wide keep the full gap
	comparePage    = 5  // attempt rows a page key moves
)

// compareView puts pinned cases in columns, attempt by attempt: what the
// agent said and how many effects the ledger held, with the first
// divergence marked. The comparison itself comes from the export package.
type compareView struct {
	st       *Styles
	keys     scrollKeys
	w, h     int
	cmp      compare.Comparison
	scroller // its offset is the first attempt row shown
	// shift is how many columns the view has moved from the newest pinned
	// cases towards the oldest, where not all of them fit side by side.
	shift int
	// placed is whether the person has scrolled since the cases were set;
	// until then the view opens on the first divergence, when it would
	// be out of sight from the top, and stays on it as the size changes.
	placed bool
	// lab is the run on the lab screen, for what to pin next beside one
	// case: it is itself that case, or another ready to pin.
	lab *missions.Case
	// findOff is the first finding the foot shows: ↓ past the last
	// attempt row moves on through the findings, ↑ back. reading is
	// whether ↓ has gone on into them, so that a foot that gave way to
	// the rows comes back, from the first finding.
	findOff int
	reading bool
}

func newCompareView(st *Styles) compareView {
	return compareView{st: st, keys: newScrollKeys()}
}

func (v *compareView) SetSize(w, h int) {
	v.w, v.h = w, h
	if w > 0 {
		v.shift = min(v.shift, len(v.cmp.Cases)-v.fits())
	}
	v.findOff = min(v.findOff, max(0, len(v.sentences())-1))
	v.place()
	// A larger screen shows more: rows scrolled out of sight above come
	// back while the rows from there still fit, rather than blank lines
	// below the last.
	for v.w > 0 && v.h > 0 && v.offset > 0 {
		v.offset--
		if _, shown := v.rows(v.room()); shown < len(v.cmp.Rows) {
			v.offset++
			break
		}
	}
}

func (v *compareView) ShortHelp() []key.Binding {
	return []key.Binding{v.keys.Up, v.keys.Left}
}

func (v *compareView) FullHelp() [][]key.Binding {
	return [][]key.Binding{{v.keys.Up, v.keys.PageUp, v.keys.Left}}
}

// SetLab gives the run on the lab screen, which esc goes back to.
func (v *compareView) SetLab(c *missions.Case) { v.lab = c }

// SetCases compares the pinned cases.
func (v *compareView) SetCases(cases []*missions.Case) {
	v.cmp = compare.Compare(cases)
	v.placed, v.shift, v.findOff, v.reading = false, 0, 0, false
	v.place()
}

// marked is the attempt numbers a ◆ marks on screen: where a pair of the
// cases in view first has the same words and different ledgers. A pair
// with a case out of view marks nothing.
func (v *compareView) marked(first int) map[int]bool {
	out := map[int]bool{}
	n := v.fits()
	for _, p := range v.cmp.Pairs {
		if p.Diverge > 0 && p.A >= first && p.B < first+n {
			out[p.Diverge] = true
		}
	}
	return out
}

// place opens the rows at the top, or, when the first divergence would be
// out of sight from there, on the row before it, for context, or on the
// divergence itself where the row before would push it out of sight.
func (v *compareView) place() {
	if v.placed {
		return
	}
	v.offset = 0
	if v.cmp.Diverge <= 0 || v.w <= 0 || v.h <= 0 {
		return
	}
	first, _, _ := v.columns()
	marked := v.marked(first)
	if len(marked) == 0 {
		return
	}
	d := 0 // the row of the first divergence: the first marked row
	for d < len(v.cmp.Rows) && !marked[v.cmp.Rows[d].Attempt] {
		d++
	}
	if _, shown := v.rows(v.room()); shown > d {
		return
	}
	v.offset = max(0, d-1)
	if _, shown := v.rows(v.room()); shown <= d {
		v.offset = d
	}
}

// room is how many lines the attempt rows get, with the columns they are
// laid out in.
func (v *compareView) room() (room, first, colW, gap int) {
	first, colW, gap = v.columns()
	foot, _ := v.footRoom(first, colW, gap)
	room = v.h - 1 - len(v.heads(first, colW, gap)) - foot
	return room, first, colW, gap
}

// Update scrolls the attempt rows, and the columns where not every pinned
// case fits: ← towards the oldest, → back towards the newest.
func (v compareView) Update(msg tea.Msg) (compareView, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		if d := v.keys.scroll(k, comparePage); d != 0 {
			v.placed = true
			_, shown := v.rows(v.room())
			switch {
			case d > 0 && (shown >= len(v.cmp.Rows) || v.reading):
				// Every row from here is on screen: on into the
				// findings. Where the foot gave way to the rows, the
				// first ↓ brings it back at the first finding; else the
				// first shown already, at the next.
				first, colW, gap := v.columns()
				if _, compact := v.foot(first, colW, gap); compact {
					v.reading = true
					break
				}
				v.reading = true
				v.findOff = min(v.findOff+max(1, d/comparePage), len(v.sentences())-1)
			case d < 0 && v.findOff > 0:
				v.findOff = max(0, v.findOff-max(1, -d/comparePage))
			case d < 0 && v.reading:
				v.reading = false
			default:
				v.moveBy(d, len(v.cmp.Rows)-1)
			}
		}
		switch {
		case key.Matches(k, v.keys.Left):
			v.shift = min(v.shift+1, len(v.cmp.Cases)-v.fits())
		case key.Matches(k, v.keys.Right):
			v.shift = max(v.shift-1, 0)
		}
	}
	return v, nil
}

// fits is how many columns fit side by side.
func (v *compareView) fits() int {
	return min(len(v.cmp.Cases), max(1, (v.w-compareGutter+1)/(compareMinCol+1)))
}

// HiddenColumns reports whether some pinned cases have no column on
// screen, so ← and → have something to show.
func (v *compareView) HiddenColumns() bool {
	return v.w > 0 && v.fits() < len(v.cmp.Cases)
}

// columns says which cases fit side by side (the newest pinned), how wide
// each column is and how many blank cells separate them: two, unless that
// would make narrow columns narrower still.
func (v *compareView) columns() (first, colW, gap int) {
	n := len(v.cmp.Cases)
	if n == 0 {
		return 0, 0, 1
	}
	if fits := v.fits(); fits < n {
		// The newest pinned, until ← moves towards the oldest.
		first = max(0, n-fits-min(v.shift, n-fits))
		n = fits
	}
	gap = compareColGap
	if (v.w-compareGutter-gap*(n-1))/n < compareRoomy {
		gap = 1
	}
	return first, (v.w - compareGutter - gap*(n-1)) / n, gap
}

// sentences are what the pairs of cases show, in words, one wrapped block
// a pair: those with the newest pinned case first, as they tell what it
// adds, then the others, each in export's ranked order. A pair whose
// ledgers part under the same words is marked ◆ while both its cases are
// in view.
func (v *compareView) sentences() [][]string {
	ranked := v.cmp.Ranked()
	newest := len(v.cmp.Cases) - 1
	pairs := make([]compare.Pair, 0, len(ranked))
	for _, p := range ranked {
		if p.B == newest {
			pairs = append(pairs, p)
		}
	}
	for _, p := range ranked {
		if p.B != newest {
			pairs = append(pairs, p)
		}
	}
	first, n := 0, len(v.cmp.Cases)
	if v.w > 0 {
		first, _, _ = v.columns()
		n = v.fits()
	}
	var out [][]string
	for _, p := range pairs {
		msg := p.Sentence
		if p.Diverge > 0 && p.A >= first && p.B < first+n {
			msg = compare.DivergeMark + " " + msg
		}
		out = append(out, wrap(msg, v.w))
	}
	if len(out) == 0 && len(v.cmp.Cases) == 1 {
		c := v.cmp.Cases[0]
		if c.Settings.Policy == missions.RealClient {
			out = append(out, wrap("Pin another case to compare: a opens the picker on this run's mission; enter opens it, p picks the guarded policy and m pins it beside your client.", v.w))
			return out
		}
		k, turns := contrast(c.Settings)
		next := k + " (it " + turns + ") and m to pin"
		if l := v.lab; l != nil && (l.Mission.ID != c.Mission || l.Settings != c.Settings) {
			// The lab already holds a contrasting case: pinning it is
			// the next step, not a toggle that would undo it.
			next = "m pins the lab's case (" + shortSettings(l.Settings) + ")"
		}
		out = append(out, wrap("Pin another case to compare: esc, then "+next+", or a to pin a case of another mission.", v.w))
	}
	if len(out) == 0 {
		out = append(out, wrap("Pin another case (m on the lab screen) to compare.", v.w))
	}
	if v.cmp.Story != "" {
		// What the cases show together comes before any pair.
		out = append([][]string{wrap(v.cmp.Story, v.w)}, out...)
	}
	return out
}

// footRoom is the lines kept below the rows, and whether the foot gave
// way to the rows (see foot): then only the legend and a line that says
// where the findings are.
func (v *compareView) footRoom(first, colW, gap int) (int, bool) {
	n, compact := v.foot(first, colW, gap)
	if compact {
		return v.legendLines(first) + 1, true
	}
	return n, false
}

// legendLines is how many lines the ◆ legend takes: none where no ◆ is
// on screen.
func (v *compareView) legendLines(first int) int {
	if len(v.marked(first)) == 0 {
		return 0
	}
	return len(wrap(compare.DivergeLegend, v.w))
}

// foot is the lines the foot wants (the legend, the finding at findOff
// whole up to 6 lines, a line saying more are there), and whether it must
// give them up to a line that says where the findings are, because the
// first attempt row would not fit whole beside it.
func (v *compareView) foot(first, colW, gap int) (n int, compact bool) {
	s := v.sentences()
	at := min(v.findOff, len(s)-1)
	n = min(len(s[at]), 6) + v.legendLines(first)
	if len(s) > at+1 {
		n++
	}
	room := v.h - 1 - len(v.heads(first, colW, gap)) - n
	body, _ := v.rows(room, first, colW, gap)
	return n, len(body) > room && !v.reading
}

func (v *compareView) View() string {
	if v.w <= 0 || v.h <= 0 {
		return ""
	}
	lines, _ := v.render()
	return box(lines, v.w, v.h)
}

// render lays the view out: its lines, and whether findings wait below
// the foot for ↓.
func (v *compareView) render() (out []string, more bool) {
	first, colW, gap := v.columns()
	lines := []string{""} // the title, once the rows are laid out

	lines = append(lines, v.heads(first, colW, gap)...)

	// Bottom: what the pairs show; the first always, more where room is
	// left once the attempts are laid out.
	sentences := v.sentences()
	footN, compact := v.footRoom(first, colW, gap)
	room := v.h - len(lines) - footN
	body, shown := v.rows(room, first, colW, gap)
	if len(v.cmp.Rows) == 0 {
		body = append(body, v.st.Subtle.Render("no attempts in these cases"))
	}
	body = body[:min(len(body), max(0, room))]
	lines[0] = panelTitle(*v.st, compareTitle, v.titleNote(first, shown), false, v.w)
	lines = append(lines, body...)
	// The blank line after the last row is only spacing: the findings
	// may take it, and the padding below puts it back where they leave
	// room.
	for len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var foot []string
	if len(v.marked(first)) > 0 {
		for _, l := range wrap(compare.DivergeLegend, v.w) {
			foot = append(foot, v.st.Diverge.Render(l))
		}
	}
	at := min(v.findOff, len(sentences)-1)
	if compact {
		// The first row whole comes first; ↓ brings the findings.
		below := fmt.Sprintf("%s below the rows: ↓ shows them", termtext.Plural(len(sentences), "finding"))
		foot = append(foot, v.st.Subtle.Render(cut(below, v.w)))
		at, more = len(sentences), true
	}
	for i := at; i < len(sentences); i++ {
		block := sentences[i]
		left := v.h - len(lines) - len(foot)
		if rest := len(sentences) - i - 1; rest > 0 {
			// Keep a line to say that more is there.
			left--
		}
		if i == at {
			if len(block) > left && left > 0 {
				// Cut, and marked as cut.
				block = append(block[:left-1:left-1], withMark(block[left-1], " …", v.w))
			}
			block = block[:min(len(block), max(left, 0))]
		} else if len(block) > left {
			below := fmt.Sprintf("+ %s below: ↓ shows them", termtext.Plural(len(sentences)-i, "more finding"))
			if len(sentences)-i == 1 {
				below = "+ 1 more finding below: ↓ shows it"
			}
			foot = append(foot, v.st.Subtle.Render(cut(below, v.w)))
			more = true
			break
		}
		if len(block) == 0 {
			continue
		}
		style := v.st.Text
		if strings.HasPrefix(block[0], compare.DivergeMark) {
			style = v.st.Diverge
		}
		for _, l := range block {
			foot = append(foot, style.Render(l))
		}
	}
	// The findings follow the rows; what room is left stays below them.
	lines = append(lines, foot...)
	for len(lines) < v.h {
		lines = append(lines, "")
	}
	return lines, more
}

const compareTitle = "compare, attempt by attempt"

// titleNote says which pinned cases and which attempt rows are on screen,
// in as many words as the title line has room for: the fullest that fits.
// shown is the row after the last one on screen.
func (v *compareView) titleNote(first, shown int) string {
	total, cols := len(v.cmp.Cases), v.fits()
	long, short := termtext.Plural(total, "pinned case"), termtext.Plural(total, "pinned case")
	if cols < total {
		long = fmt.Sprintf("pins %s–%s of %d, ←→ the others", compare.CaseName(first), compare.CaseName(first+cols-1), total)
		short = fmt.Sprintf("%s–%s of %d pinned", compare.CaseName(first), compare.CaseName(first+cols-1), total)
	}
	notes := []string{long, short}
	if n := len(v.cmp.Rows); n > 0 && (v.offset > 0 || shown < n) {
		rows := fmt.Sprintf("%d–%d of %d", v.offset+1, max(v.offset+1, shown), n)
		if max(v.offset+1, shown) == v.offset+1 {
			rows = fmt.Sprintf("%d of %d", v.offset+1, n)
		}
		notes = []string{
			"attempts " + rows + ", ↑↓ scroll · " + long,
			"attempts " + rows + " · " + short,
			rows + " · " + short,
		}
	}
	room := v.w - lipgloss.Width(v.st.PanelTitle.Render(compareTitle)) - 3
	for _, n := range notes {
		if ansi.StringWidth(n) <= room {
			return n
		}
	}
	return notes[len(notes)-1] // the title drops what does not fit
}

// heads are the lines between the title and the attempt rows: each
// column's case and outcome, a rule, and the comparison's notes.
func (v *compareView) heads(first, colW, gap int) []string {
	cases := v.cmp.Cases[first : first+v.fits()]
	// Name and label (on as many lines as the longest takes, two at
	// most), then the outcome.
	names := make([][]string, len(cases))
	nameH := 1
	// Where one cell parts the columns, names wrap a cell short, so that
	// two never run together into one phrase ("policy C stable keys").
	nameW := colW
	if gap < 2 && len(cases) > 1 {
		nameW = colW - 1
	}
	// Two lines a name, or three where two would cut what tells two
	// cases apart (two pins that differ only in their contract).
	nameLines := 2
	for _, c := range cases {
		if len(wrap(c.Heading(), nameW)) > 2 {
			nameLines = 3
		}
	}
	for i, c := range cases {
		names[i] = firstLines(wrap(c.Heading(), nameW), nameLines, nameW, "…")
		nameH = max(nameH, len(names[i]))
	}
	head := make([][]string, len(cases))
	for i := range cases {
		o := v.cmp.Outcomes[first+i]
		cs := v.st.outcomeStyle(o.Effects, o.Intended, worstVerdict(o.Verdicts))
		for len(names[i]) < nameH {
			names[i] = append(names[i], "")
		}
		for _, l := range names[i] {
			head[i] = append(head[i], v.st.Title.Render(l))
		}
		head[i] = append(head[i],
			cs.Render(cut(fmt.Sprintf("effects %d · intended %d", o.Effects, o.Intended), colW)),
			v.st.verdictList(o.Verdicts, colW))
	}
	lines := strings.Split(v.join(fit("", compareGutter), head, colW, gap), "\n")
	if all := shared(v.cmp.Cases); all != "" && len(v.cmp.Cases) > 1 {
		// What the columns leave out because every case has it.
		lines = append([]string{v.st.Subtle.Render(cut("every case: "+all, v.w))}, lines...)
	}
	lines = append(lines, v.st.Rule.Render(strings.Repeat("─", v.w)))
	for _, n := range v.cmp.Notes {
		for _, l := range firstLines(wrap(termtext.CleanLine(n), v.w), 2, v.w, " …") {
			lines = append(lines, v.st.Subtle.Render(l))
		}
	}
	return lines
}

// shared is what every case of a comparison has in common, which the
// columns' labels leave out: the mission when there is one, and the
// settings no case differs in (the key source only where keys do not come
// from the intent).
func shared(cases []compare.CaseHead) string {
	if len(cases) == 0 {
		return ""
	}
	var parts []string
	same := func(f func(compare.CaseHead) string) bool {
		for _, c := range cases[1:] {
			if f(c) != f(cases[0]) {
				return false
			}
		}
		return true
	}
	if same(func(c compare.CaseHead) string { return c.Mission }) {
		parts = append(parts, cases[0].Mission)
	}
	for _, f := range []missions.Setting{missions.SettingStableKeys, missions.SettingPolicy, missions.SettingContract, missions.SettingKeySource} {
		if f == missions.SettingKeySource && cases[0].Settings.KeySource == missions.KeyPerIntent {
			continue
		}
		if same(func(c compare.CaseHead) string { return c.Settings.Words(f) }) {
			parts = append(parts, cases[0].Settings.Words(f))
		}
	}
	return strings.Join(parts, ", ")
}

// Scrolls reports whether there is anything to scroll: attempt rows above
// the first one shown, or below the last.
func (v *compareView) Scrolls() bool {
	if v.w <= 0 || v.h <= 0 {
		return false
	}
	_, shown := v.rows(v.room())
	_, more := v.render()
	return v.offset > 0 || shown < len(v.cmp.Rows) || v.findOff > 0 || v.reading || more
}

// rows lays out the attempt rows from the offset in room lines: the lines
// and the row after the last one shown.
//
// Where every row fits with lines to spare, the agent's words get as many
// lines as they need, up to compareSaidMax, so long as every row still
// fits. A comparison too long for the screen keeps compareSaidH and costs
// no more than one layout of the rows on screen.
func (v *compareView) rows(room, first, colW, gap int) (body []string, shown int) {
	body, shown = v.rowsAt(room, first, colW, gap, compareSaidH)
	if len(body) > room {
		// The one row shown does not fit whole: fewer lines of the
		// agent's words (cut, and marked so) rather than the ledger's
		// line, which is what the row is there to set beside them.
		for said := compareSaidH - 1; said >= 1; said-- {
			if fewer, n := v.rowsAt(room, first, colW, gap, said); len(fewer) <= room {
				return fewer, n
			}
		}
	}
	if shown < len(v.cmp.Rows) && v.offset == 0 {
		// A row just out of sight: fewer lines of the agent's words
		// (cut, and marked so) where that brings every row on screen,
		// rather than blank lines above a hidden attempt.
		for said := compareSaidH - 1; said >= 1; said-- {
			if fewer, n := v.rowsAt(room, first, colW, gap, said); n == len(v.cmp.Rows) {
				return fewer, n
			}
		}
		// Still short: the blank lines between rows give way too.
		if tight, n := v.rowsAt(room, first, colW, gap, -1); n == len(v.cmp.Rows) {
			return tight, n
		}
	}
	if shown < len(v.cmp.Rows) || v.offset > 0 {
		return body, shown
	}
	// Every row is on screen, so there are few: measure their words.
	need := 0
	for _, row := range v.cmp.Rows {
		for _, c := range row.Cells[first : first+v.fits()] {
			if c.Present && c.Said != "" {
				need = max(need, len(wrap("“"+c.Said+"”", colW)))
			}
		}
	}
	for said := min(need, compareSaidMax); said > compareSaidH; said-- {
		if more, n := v.rowsAt(room, first, colW, gap, said); n == len(v.cmp.Rows) && len(more) <= room {
			return more, n
		}
	}
	return body, shown
}

// rowsAt lays out the rows with at most said lines of words per cell.
func (v *compareView) rowsAt(room, first, colW, gap, said int) (body []string, shown int) {
	// A said of -1 is one line of words with no blank line between rows.
	sep := said >= 0
	said = max(said, 1)
	cases := v.cmp.Cases[first : first+v.fits()]
	marked := v.marked(first)
	shown = v.offset
	for r := v.offset; r < len(v.cmp.Rows) && len(body) < room; r++ {
		row := v.cmp.Rows[r]
		mark := "  "
		gs := v.st.Subtle
		divergent := marked[row.Attempt]
		if divergent {
			mark, gs = " "+compare.DivergeMark, v.st.Diverge
		}
		cells := make([][]string, len(cases))
		for i := range cases {
			cells[i] = v.cell(row.Cells[first+i], colW, said, divergent)
		}
		block := strings.Split(v.join(gs.Render(fit(fmt.Sprintf("#%d%s", row.Attempt, mark), compareGutter)), cells, colW, gap), "\n")
		if len(body)+len(block) > room && len(body) > 0 {
			break
		}
		body = append(body, block...)
		shown = r + 1
		if len(body) < room && sep {
			body = append(body, "")
		}
	}
	return body, shown
}

// cell renders what one case did at one attempt.
func (v *compareView) cell(c compare.Cell, w, said int, divergent bool) []string {
	if !c.Present {
		return []string{v.st.Subtle.Render(cut("(not sent)", w))}
	}
	var out []string
	for _, l := range fixtureLines(string(c.Fixture), string(c.Observed), w) {
		out = append(out, v.st.Subtle.Render(l))
	}
	words := "(says nothing)"
	if c.Said != "" {
		words = "“" + c.Said + "”"
	}
	for _, l := range firstLines(wrap(words, w), said, w, "…") {
		out = append(out, v.st.Say.Render(l))
	}
	es := v.st.Text
	if divergent {
		es = v.st.Diverge
	}
	return append(out, es.Render(cut("ledger: "+termtext.Plural(c.Effects, "effect"), w)))
}

// fixtureLines says "fixture → observed" in lines of at most w cells. A
// fixture too long for a line breaks after one of its underscores, not in
// the middle of a word, and the arrow stays with what was observed.
func fixtureLines(fixture, observed string, w int) []string {
	seen := "→ " + termtext.CleanLine(observed)
	lines := strings.Split(ansi.Wrap(termtext.CleanLine(fixture), w, "_"), "\n")
	if last := len(lines) - 1; ansi.StringWidth(lines[last])+1+ansi.StringWidth(seen) <= w {
		lines[last] += " " + seen
		return lines
	}
	return append(lines, wrap(seen, w)...)
}

// join lays cells side by side after a gutter, each column w wide and gap
// blank cells from the next.
func (v *compareView) join(gutter string, cells [][]string, w, gap int) string {
	h := 0
	for _, c := range cells {
		h = max(h, len(c))
	}
	cols := []string{box([]string{gutter}, lipgloss.Width(gutter), h)}
	for i, c := range cells {
		if i > 0 {
			cols = append(cols, strings.Repeat(" ", gap))
		}
		cols = append(cols, box(c, w, h))
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, cols...)
}
