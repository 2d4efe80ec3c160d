package lab

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// Fixed column widths of the timeline.
const (
	keyW      = 13 // ik_ + ten hex digits
	providerW = 11 // not_reached, late_commit
	observedW = 8  // conflict, mismatch
	effectsW  = 5  // "12 ↑"; wider when the count needs it
	noteMinW  = 36 // below this, the "what happened" column is left out
)

// The detail strip under the rows: at least one line, at most maxDetail.
const (
	minDetail = 1
	maxDetail = 4
)

// providerLabel fills the fixture column of the provider's own events: no
// request was sent, the provider changed its ledger by itself.
const providerLabel = "(provider)"

// timeline is the scrollable list of the run's events. It keeps the
// case's log and makes whole events, words and all, only of the rows on
// screen, so a run of ten thousand events draws as fast as a run of ten.
//
// Three kinds of row share its columns. Attempts fill every column. The
// provider's own changes (a late commit, a pending object resolving, a key
// pruned) fill the key, provider and effect columns and say "(provider)"
// where a fixture would be. The caller's other events (checkpoints,
// read-backs, holds, waits, restarts, escalations) carry a label across
// the attempt, key and fixture columns and their note under "what
// happened".
//
// A cursor picks one row (↑/↓ when the timeline has the keys; it follows
// the newest row until moved), and a strip under the rows shows that row
// in full: its whole note, wrapped, and what the agent said with it.
type timeline struct {
	// recorded: the run is a recorded client's, with no checkpoint rows.
	recorded bool
	st       *Styles
	keys     scrollKeys
	w, h     int
	log      missions.EventLog
	names    keyNames
	shown    []int // indices of the rows shown when checkpoints are hidden
	hideCP   bool  // checkpoint rows are left out
	pos      int
	offset   int
	cursor   int  // the row shown in full in the detail strip
	follow   bool // the cursor sticks to the newest row
	focused  bool
	detailH  int // lines of the detail strip
	// wrapNotes lets a note too long for its column carry on under it,
	// on lines of the row's own; the lab turns it on only when the whole
	// run, wrapped, fits without scrolling.
	wrapNotes bool
	// goal is the mission's teaching goal, drawn in the empty rows before
	// the first step when the goal has no panel of its own: the rows are
	// kept for the run, and the goal is what a newcomer needs then.
	goal string

	tickW, attW, fixW, effW int
	// most is the largest effect count among the events measured, and
	// fixOf the schedule whose fixtures fixW was measured for.
	most  int
	fixOf []missions.Step
}

func newTimeline(st *Styles) timeline {
	return timeline{st: st, keys: newScrollKeys(), follow: true}
}

func (t *timeline) SetSize(w, h int) { t.w, t.h = w, h; t.clampOffset() }

// SetGoal gives the timeline the mission's goal to show before the first
// step, or "" when the goal has a panel of its own.
func (t *timeline) SetGoal(goal string) { t.goal = goal }

// SetWrap lets long notes carry on under their rows, or cuts them.
func (t *timeline) SetWrap(on bool) { t.wrapNotes = on }

// SetDetailHeight gives the detail strip its lines, taken from the rows.
func (t *timeline) SetDetailHeight(n int) { t.detailH = n; t.clampOffset() }

func (t *timeline) ShortHelp() []key.Binding {
	return []key.Binding{t.keys.Up}
}

func (t *timeline) FullHelp() [][]key.Binding {
	return [][]key.Binding{{t.keys.Up, t.keys.PageUp}}
}

// SetCase shows the events of c after pos steps. The column widths come
// from the largest values: the tick and the attempt number only grow, so
// theirs are the last; the effect count drops when an object ends failed,
// so its largest can sit anywhere.
//
// A case that only extends the last one (the same run, stepped on) is
// measured and indexed for its new events only, so a step costs what it
// adds, not what the run holds.
func (t *timeline) SetCase(c *missions.Case, pos int) {
	log := c.Log()
	from, measured := 0, 0
	if t.log.Shares(log) {
		from = min(t.log.Len(), log.Len())
		if log.Len() >= t.log.Len() {
			// The largest effect count so far still stands; a step back
			// may have taken it away, so then it is found again.
			measured = from
		}
	}
	t.log, t.pos = log, pos
	t.names.add(log, from)
	t.measure(c, measured)
	t.index(from)
	t.clampOffset()
}

// measure sets the column widths the events of c need; the events before
// from were measured already.
func (t *timeline) measure(c *missions.Case, from int) {
	t.tickW, t.attW, t.effW = 4, 2, effectsW
	if from == 0 {
		t.most = 0
	}
	log := c.Log()
	if n := log.Len(); n > 0 {
		t.most = max(t.most, log.MostEffects(from))
		t.effW = max(effectsW, len(fmt.Sprint(t.most))+2)
		t.tickW = max(4, len(fmt.Sprint(log.Tick(n-1)))+1)
		for i := n - 1; i >= 0; i-- {
			if a := log.Attempt(i); a > 0 {
				t.attW = max(2, len(fmt.Sprint(a))+1)
				break
			}
		}
	}
	if sched := c.Mission.Schedule; !sameSteps(sched, t.fixOf) {
		// Once a schedule: a toggle replays the same one.
		t.fixW, t.fixOf = max(len(providerLabel), longestFixture(&c.Mission)), sched
	}
}

// index lists the events shown when checkpoints are hidden. It runs when
// the case or the choice changes, never while drawing.
func (t *timeline) index(from int) {
	if from == 0 || !t.hideCP {
		t.shown = t.shown[:0]
	} else {
		// Drop what a step back took away, then add what is new.
		k := len(t.shown)
		for k > 0 && t.shown[k-1] >= from {
			k--
		}
		t.shown = t.shown[:k]
	}
	if !t.hideCP {
		return
	}
	t.shown = t.log.AppendOthers(t.shown, from, missions.EventCheckpoint)
}

// hides reports whether an event of kind k has no row: a checkpoint,
// while they are hidden.
func (t *timeline) hides(k missions.EventKind) bool {
	return t.hideCP && k == missions.EventCheckpoint
}

// rowsFor is how many rows the events of c would make here, up to limit,
// so the lab can size the timeline for a whole run.
func (t *timeline) rowsFor(c *missions.Case, limit int) int {
	log := c.Log()
	if !t.hideCP {
		return min(log.Len(), limit)
	}
	n := 0
	for i := 0; i < log.Len() && n < limit; i++ {
		if !t.hides(log.Kind(i)) {
			n++
		}
	}
	return n
}

// ToggleCheckpoints hides or shows the checkpoint rows. The cursor stays
// on its event, or on the nearest row before it when its row is hidden;
// a cursor that followed the newest row still does.
func (t *timeline) ToggleCheckpoints() {
	ev := -1
	if t.count() > 0 && !t.follow {
		ev = t.at(t.cursor)
	}
	t.hideCP = !t.hideCP
	t.index(0)
	if ev >= 0 {
		t.cursor = t.rowOf(ev)
	}
	t.clampOffset()
}

// rowOf is the row of event i, or of the nearest shown event before it.
func (t *timeline) rowOf(i int) int {
	if !t.hideCP {
		return i
	}
	// shown is sorted: the last shown index at or before i.
	lo, hi := 0, len(t.shown)
	for lo < hi {
		mid := (lo + hi) / 2
		if t.shown[mid] <= i {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return max(0, lo-1)
}

// CheckpointsHidden reports whether checkpoint rows are left out.
func (t *timeline) CheckpointsHidden() bool { return t.hideCP }

// count is the number of rows the events make.
func (t *timeline) count() int {
	if t.hideCP {
		return len(t.shown)
	}
	return t.log.Len()
}

// at is the event index of row r.
func (t *timeline) at(r int) int {
	if t.hideCP {
		return t.shown[r]
	}
	return r
}

// sameSteps reports whether a and b are one schedule, of some steps, in
// the same memory.
func sameSteps(a, b []missions.Step) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// longestFixture is the length of the longest fixture name m's schedule
// uses, in one pass over it.
func longestFixture(m *missions.Mission) int {
	n := 0
	for _, st := range m.Schedule {
		n = max(n, len(st.Fixture))
		for _, tg := range st.Together {
			n = max(n, len(tg.Fixture))
		}
	}
	return n
}

// Follow puts the cursor on the newest row and keeps it there.
func (t *timeline) Follow() { t.follow = true; t.clampOffset() }

// rows is how many event rows fit: the box less its title, its column
// heading and the detail strip.
func (t *timeline) rows() int { return max(0, t.h-2-t.detailH) }

// clampOffset keeps the cursor on a row and its row on screen.
func (t *timeline) clampOffset() {
	n := t.count()
	if t.follow {
		t.cursor = n - 1
	}
	t.cursor = clamp(t.cursor, 0, max(0, n-1))
	rows := t.rows()
	maxOff := max(0, n-rows)
	if t.follow {
		t.offset = maxOff
	}
	if t.cursor < t.offset {
		t.offset = t.cursor
	}
	if rows > 0 && t.cursor >= t.offset+rows {
		t.offset = t.cursor - rows + 1
	}
	t.offset = clamp(t.offset, 0, maxOff)
}

// move moves the cursor d rows; reaching the newest row follows it again.
func (t *timeline) move(d int) {
	t.follow = false
	t.cursor = clamp(t.cursor+d, 0, max(0, t.count()-1))
	if t.cursor >= t.count()-1 {
		t.follow = true
	}
	t.clampOffset()
}

// Update moves the cursor when the timeline has the keys.
func (t timeline) Update(msg tea.Msg) (timeline, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok {
		if d := t.keys.scroll(k, max(1, t.rows()-1)); d != 0 {
			t.move(d)
		}
	}
	return t, nil
}

// Current is the event under the cursor, whole, or nil before anything
// happened.
func (t *timeline) Current() *missions.Event {
	if t.count() == 0 {
		return nil
	}
	ev := t.log.At(t.at(t.cursor))
	return &ev
}

// fixedW is the width of every column but the note.
func (t *timeline) fixedW(kw int) int {
	return 1 + t.tickW + 1 + t.attW + 1 + kw + 1 + t.fixW + 1 + providerW + 1 + observedW + 1 + t.effW
}

// title is the panel's title note: how many events, which are on screen,
// and how many checkpoints are hidden.
func (t *timeline) title() string {
	n, all := t.count(), t.log.Len()
	note := termtext.Plural(all, "event")
	if n > t.rows() && t.rows() > 0 {
		note = fmt.Sprintf("%d–%d of %d", t.offset+1, min(n, t.offset+t.rows()), n)
		if t.hideCP {
			note += " shown"
		} else {
			note += " events"
		}
	}
	switch {
	case t.recorded:
		// A recorded client's run has no caller's checkpoints to hide.
	case t.hideCP && all > n:
		note += fmt.Sprintf(" · %s hidden (h)", termtext.Plural(all-n, "checkpoint"))
	case t.hideCP:
		note += " · checkpoints hidden (h)"
	case n > 0:
		note += " · h hides checkpoints"
	}
	return note
}

// columns is the width of the key column and of the note column at width
// w: the key column gives up cells before anything else does.
func (t *timeline) columns(w int) (kw, noteW int) {
	kw = keyW
	if t.fixedW(kw) > w {
		kw = max(4, keyW-(t.fixedW(kw)-w))
	}
	return kw, w - t.fixedW(kw) - 1
}

// rowNote is the note event ev shows in the "what happened" column.
func rowNote(ev *missions.Event) string {
	note := termtext.CleanLine(ev.Note)
	if ev.Kind == missions.EventCheckpoint && note == string(ev.Checkpoint) {
		return "" // the label says it already
	}
	return note
}

// wrapExtra is how many lines the rows of c would add at width w if long
// notes carried on under their rows; it stops counting past limit. It
// takes the column widths c itself makes, as SetCase would.
func (t *timeline) wrapExtra(c *missions.Case, w, limit int) int {
	probe := timeline{hideCP: t.hideCP}
	probe.measure(c, 0)
	_, noteW := probe.columns(w)
	if noteW < noteMinW {
		return 0
	}
	extra := 0
	log := c.Log()
	for i := range log.Len() {
		if probe.hides(log.Kind(i)) {
			continue
		}
		ev := log.At(i)
		if note := t.names.named(rowNote(&ev)); ansi.StringWidth(note) > noteW {
			extra += len(wrap(note, noteW)) - 1
			if extra > limit {
				break
			}
		}
	}
	return extra
}

func (t *timeline) View() string {
	if t.w <= 0 || t.h <= 0 {
		return ""
	}
	lines := []string{panelTitle(*t.st, "timeline", t.title(), t.focused, t.w)}
	kw, noteW := t.columns(t.w)
	head := " " + fit("tick", t.tickW) + " " + fit("#", t.attW) + " " + fit("key", kw) + " " +
		fit("fixture", t.fixW) + " " + fit("provider", providerW) + " " + fit("observed", observedW) + " " + fit("eff", t.effW)
	if noteW >= noteMinW {
		head += " what happened"
	}
	lines = append(lines, t.st.Subtle.Render(cut(head, t.w)))
	switch {
	case t.log.Len() == 0:
		lines = append(lines, t.st.Subtle.Render(cut(" nothing has happened yet: n sends the first step", t.w)))
		// A blank line, the title, then the goal in every row left.
		if room := t.h - len(lines) - 2; t.goal != "" && room >= 1 {
			lines = append(lines, "", t.st.PanelTitle.Render(cut(" what this mission shows", t.w)))
			for _, l := range firstLines(wrap(t.goal, t.w-1), room, t.w-1, " …") {
				lines = append(lines, " "+t.st.Subtle.Render(l))
			}
		}
		return box(lines, t.w, t.h)
	case t.count() == 0:
		lines = append(lines, t.st.Subtle.Render(cut(" only checkpoints so far: h shows them", t.w)))
		return box(lines, t.w, t.h)
	}
	for r := t.offset; r < t.count() && len(lines) < 2+t.rows(); r++ {
		lines = append(lines, strings.Split(t.row(t.at(r), kw, noteW, r == t.cursor), "\n")...)
	}
	lines = lines[:min(len(lines), 2+t.rows())]
	for len(lines) < t.h-t.detailH {
		lines = append(lines, "")
	}
	lines = append(lines, t.detail(t.Current(), t.w, t.detailH)...)
	return box(lines, t.w, t.h)
}

// detailLead starts the strip's first line, under the rows it belongs to.
const detailLead = "↳ "

// detailSpans is what the strip says about an event: when and what it
// was, its whole note, and the agent's words when it said something. It
// appends them to dst.
func (t *timeline) detailSpans(ev *missions.Event, dst []span) []span {
	tag := "t" + strconv.Itoa(ev.Tick)
	note := t.names.named(termtext.CleanLine(ev.Note))
	switch {
	case ev.Kind == missions.EventAttempt:
		tag += " #" + strconv.Itoa(ev.Attempt)
	case providerOwn(ev.Kind):
		tag += " the provider, on its own:"
	default:
		label := callerLabel(ev)
		switch {
		case note == "" || ev.Kind == missions.EventCheckpoint && note == string(ev.Checkpoint):
			note = label
		case !strings.HasPrefix(note, label):
			note = label + " · " + note
		}
	}
	out := append(dst, span{tag, t.st.Subtle, true}, span{note, t.st.Text, false})
	if ev.Say != "" {
		out = append(out, span{"· the agent:", t.st.Subtle, true}, span{"“" + termtext.CleanLine(ev.Say) + "”", t.st.Say, false})
	}
	if ev.Key != "" {
		// The hash, on demand: the row the cursor picks.
		out = append(out, span{"· " + t.names.name(ev.Key) + " is", t.st.Subtle, true}, span{termtext.CleanLine(ev.Key), t.st.Text, false})
	}
	return out
}

// detail renders the strip for ev in at most h lines of width w. The note
// comes first, so it is what stays whole; text past the last line is
// marked with "…".
func (t *timeline) detail(ev *missions.Event, w, h int) []string {
	if ev == nil || h <= 0 {
		return nil
	}
	indent := strings.Repeat(" ", lipgloss.Width(detailLead))
	return flow(t.detailSpans(ev, nil), w, h, t.st.Subtle.Render(detailLead), indent)
}

// detailNeed is how many lines the strip needs to show any event of c in
// full at width w, up to maxDetail.
func (t *timeline) detailNeed(c *missions.Case, w, most int) int {
	need := minDetail
	most = min(most, maxDetail)
	room := w - lipgloss.Width(detailLead)
	var spans []span // one buffer for every row measured
	log := c.Log()
	for i := range log.Len() {
		whole := log.At(i)
		ev := &whole
		// Most rows say little: measure only those that could need more
		// than a line (the tag and a label take fewer than 48 cells).
		if len(ev.Note)+len(ev.Say)+48 <= room {
			continue
		}
		spans = t.detailSpans(ev, spans[:0])
		need = max(need, flowCount(spans, room))
		if need >= most {
			// The strip is no taller than most: one row that fills it
			// settles it.
			return most
		}
	}
	return need
}

// effCell is the effects column of event i: the count, with an arrow when
// the event changed it (up for a new effect, down for a pending object that
// ended failed). Events other than attempts show it only then.
func (t *timeline) effCell(i int) string {
	eff, prev := t.log.Effects(i), 0
	if i > 0 {
		prev = t.log.Effects(i - 1)
	}
	switch {
	case eff > prev:
		return fmt.Sprintf("%d ↑", eff)
	case eff < prev:
		return fmt.Sprintf("%d ↓", eff)
	case t.log.Kind(i) == missions.EventAttempt:
		return fmt.Sprint(eff)
	}
	return ""
}

// callerLabel names a caller event that is not an attempt, in a few words.
func callerLabel(ev *missions.Event) string {
	switch ev.Kind {
	case missions.EventCheckpoint:
		if ev.Checkpoint != "" {
			return "checkpoint → " + string(ev.Checkpoint)
		}
		return "checkpoint"
	case missions.EventRead:
		return "read-back"
	case missions.EventHold:
		return "hold"
	case missions.EventWait:
		return "wait"
	case missions.EventRestart:
		return "caller restarts"
	case missions.EventEscalate:
		return "escalated"
	}
	return string(ev.Kind)
}

// providerOwn reports whether an event is the provider changing its ledger
// with no request from the caller.
func providerOwn(k missions.EventKind) bool {
	switch k {
	case missions.EventCommit, missions.EventResolve, missions.EventPrune:
		return true
	}
	return false
}

// row renders event i; cur marks the cursor's row.
func (t *timeline) row(i, kw, noteW int, cur bool) string {
	whole := t.log.At(i)
	ev := &whole
	now := ev.Step == t.pos
	gutter, text, dim := " ", t.st.Done, t.st.Done
	if now {
		gutter, text, dim = "›", t.st.Now, t.st.Subtle
	}
	if cur {
		gutter = "▸"
		if t.focused {
			text, dim = t.st.Cursor, t.st.Cursor
		}
	}
	lead := gutter + fit(fmt.Sprintf("t%d", ev.Tick), t.tickW) + " "
	note := t.names.named(rowNote(ev))
	withNote := noteW >= noteMinW
	first, more := t.noteParts(note, noteW)
	if ev.Kind == missions.EventAttempt {
		// One style for the whole row: one render, the cheapest row.
		cells := lead + fit(fmt.Sprintf("#%d", ev.Attempt), t.attW) + " " +
			fit(t.names.cell(t.log, i), kw) + " " +
			fit(termtext.CleanLine(string(ev.Fixture)), t.fixW) + " " +
			fit(termtext.CleanLine(ev.Provider), providerW) + " " +
			fit(termtext.CleanLine(string(ev.Observed)), observedW) + " " +
			fit(t.effCell(i), t.effW)
		if withNote && note != "" {
			cells += " " + first
		}
		return text.Render(cells) + t.carry(more, noteW, text)
	}
	var b strings.Builder
	b.WriteString(text.Render(lead))
	switch {
	case providerOwn(ev.Kind):
		own := t.st.Provider
		if !now {
			own = t.st.Done
		}
		b.WriteString(text.Render(fit("", t.attW)+" "+fit(t.names.cell(t.log, i), kw)+" ") +
			own.Render(fit(providerLabel, t.fixW)) + " " +
			own.Render(fit(termtext.CleanLine(ev.Provider), providerW)) + " " +
			text.Render(fit("", observedW)+" "+fit(t.effCell(i), t.effW)))
	default:
		label, mark := callerLabel(ev), ""
		ls := dim
		if ev.Kind == missions.EventEscalate {
			// The one row that hands the intent to a person stands out
			// in any colour profile: marked, and in its own style.
			ls, text, mark = t.st.Escalate, t.st.Escalate, "!! "
		}
		span := t.attW + 1 + kw + 1 + t.fixW + 1 + providerW + 1 + observedW
		eff := t.effCell(i)
		if withNote || eff != "" {
			b.WriteString(ls.Render(fit(mark+label, span)) + " " + text.Render(fit(eff, t.effW)))
			break
		}
		// No room for a column of its own: the note follows the label,
		// or carries on from it when it starts with the same words.
		room := t.w - lipgloss.Width(lead)
		rest := ""
		switch {
		case note != "" && strings.HasPrefix(note, label):
			rest = note[len(label):]
		case note != "":
			rest = " · " + note
		}
		label = cut(mark+label, room)
		b.WriteString(ls.Render(label) + text.Render(cut(rest, room-lipgloss.Width(label))))
		return b.String()
	}
	if withNote && note != "" {
		b.WriteString(" " + text.Render(first) + t.carry(more, noteW, text))
	}
	return b.String()
}

// noteParts is a note's first line in a column noteW wide and, when notes
// wrap, the lines that carry on under it; otherwise the note is cut.
func (t *timeline) noteParts(note string, noteW int) (first string, more []string) {
	if !t.wrapNotes || ansi.StringWidth(note) <= noteW {
		return cut(note, noteW), nil
	}
	ls := wrap(note, noteW)
	return ls[0], ls[1:]
}

// carry lays the rest of a wrapped note under its column, a line each.
func (t *timeline) carry(more []string, noteW int, st lipgloss.Style) string {
	var b strings.Builder
	for _, l := range more {
		b.WriteString("\n" + st.Render(strings.Repeat(" ", t.w-noteW)+l))
	}
	return b.String()
}

// keyCell is what the key column shows: the key, or a dash for an attempt
// sent without one.
func keyCell(k string) string {
	if k == "" {
		return "—"
	}
	return termtext.CleanLine(k)
}
