package lab

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
	"github.com/replaylab/replaylab/reproduce"
)

// headerHeight is how many lines the header takes.
const headerHeight = 3

// header shows the mission, the settings, where the run stands and the
// effect counter: effects beside intended, in digits three lines tall.
type header struct {
	noKeys
	st   *Styles
	w, h int

	title, id string
	settings  missions.Settings
	defaults  missions.Settings // the mission's own, to mark what changed
	pos, n    int
	stepLine  [2]string // in full, and short for a narrow header
	heldTag   string    // " · held, not sent" when the step's send was held back
	effects   int
	intended  int
	// succeeded counts the effects that reached success, which nothing
	// later in a run takes back.
	succeeded int
	most      int // the largest effect count the whole run can reach
	verdicts  []missions.IntentVerdict
	// executing: a request is still executing at the provider (a late
	// commit), so the run's count may yet change.
	executing bool
	// rec is the recorded client's run on screen, if one is: its steps
	// are requests, and its settings are the client's own.
	rec     *reproduce.SessionRun
	recName string
}

// SetRecorded tells the header that the run is a recorded client's, from
// the file name; nil for a mission's run.
func (h *header) SetRecorded(run *reproduce.SessionRun, name string) { h.rec, h.recName = run, name }

// SetScale sizes the counter for a run whose effect count never passes
// most, so that it keeps its width, and its place, while the run steps.
func (h *header) SetScale(most int) { h.most = most }

func newHeader(st *Styles) header { return header{st: st} }

func (h *header) SetSize(w, height int) { h.w, h.h = w, height }

// settleLabel names the step after the schedule, where the clock runs
// until late commits and pending objects land.
const settleLabel = "after the schedule: clock runs out"

// SetRun shows the run c after pos of its n steps. defaults are the
// mission's own settings, so that the ones changed stand out.
func (h *header) SetRun(c *missions.Case, defaults missions.Settings, pos, n int) {
	m := &c.Mission
	h.title, h.id = termtext.CleanLine(m.Title), termtext.CleanLine(m.ID)
	h.settings, h.defaults = c.Settings, defaults
	h.pos, h.n = pos, n
	h.heldTag = ""
	switch {
	case h.rec != nil && pos >= 1 && pos <= len(h.rec.Steps):
		long, short := requestWords(h.rec.Steps[pos-1])
		h.stepLine = [2]string{long, short}
	case h.rec != nil && pos == n && !h.rec.Settled:
		h.stepLine = [2]string{takenLabel, takenLabel}
	case pos >= 1 && pos <= len(m.Schedule):
		st := m.Schedule[pos-1]
		short := shortStep(st, len(m.Intents) > 1)
		if st.Kind() == missions.StepAttempt {
			// Short, but still named a fixture: "failure_before_commit"
			// alone beside the counter reads as what came of the step.
			short = "fixture " + shortStep(st, false)
			if len(m.Intents) > 1 {
				short = st.Attempt + ", " + short
			}
		}
		h.stepLine = [2]string{termtext.CleanLine(stepPhrase(st)), termtext.CleanLine(short)}
		if held := heldAt(c, pos); held > 0 {
			// The step names a fixture; the caller chose not to send, so
			// no request met it. The timeline's hold row says why.
			h.heldTag = " · " + heldWords(held, sendsOf(st))
			if sendsOf(st) <= 1 {
				h.heldTag += ", not sent"
			}
		}
	case pos == n:
		h.stepLine = [2]string{settleLabel, settleLabel}
	default:
		h.stepLine = [2]string{}
	}
	h.effects, h.intended, h.succeeded = c.Outcome.Effects, c.Outcome.Intended, c.Outcome.Succeeded
	h.verdicts = c.Outcome.Verdicts
	h.executing = len(c.Ledger.InFlight) > 0
}

// bigDigits is a three-line font for the effect counter.
var bigDigits = [10][3]string{
	{"█▀█", "█ █", "▀▀▀"},
	{"▀█ ", " █ ", "▀▀▀"},
	{"▀▀█", "█▀▀", "▀▀▀"},
	{"▀▀█", " ▀█", "▀▀▀"},
	{"█ █", "▀▀█", "  ▀"},
	{"█▀▀", "▀▀█", "▀▀▀"},
	{"█▀▀", "█▀█", "▀▀▀"},
	{"▀▀█", "  █", "  ▀"},
	{"█▀█", "█▀█", "▀▀▀"},
	{"█▀█", "▀▀█", "▀▀▀"},
}

// big renders n in the three-line font.
func big(n int) [3]string {
	var out [3]string
	for i, r := range strconv.Itoa(n) {
		d := bigDigits[r-'0']
		for row := range out {
			if i > 0 {
				out[row] += " "
			}
			out[row] += d[row]
		}
	}
	return out
}

// notRun is the counter's state before the first step: nothing has been
// tried, so the ledger is not yet short of anything.
const notRun = "not run yet"

// notSettled is the counter's state while the run is under way and its
// outcome is not final.
const notSettled = "not settled yet"

// counterLook is the counter's style and its state in words: before the
// first step a plain "not run yet", after it what the colour says.
func (h *header) counterLook() (lipgloss.Style, string) {
	if h.pos == 0 {
		return h.st.Text, notRun
	}
	if h.pos < h.n && h.succeeded <= h.intended {
		// The run is under way and nothing final has happened: a
		// caller may still be waiting, reading or retrying, so no
		// colour says right or wrong yet. Only more successes than
		// intended are final before the end: nothing takes one back.
		return h.st.Text, notSettled
	}
	worst := worstVerdict(h.verdicts)
	if worst == missions.FailedCleanly && (h.executing || !allBelieveFailed(h.verdicts)) {
		// A request is still executing at the provider, so what the
		// caller believes failed may yet commit; or a caller does not
		// know yet (a guarded one after a timeout): nothing is known
		// not made.
		worst = ""
	}
	return h.st.outcomeStyle(h.effects, h.intended, worst), counterState(h.effects, h.intended, worst)
}

// allBelieveFailed: every intent with no effect is one its caller
// believes failed, not one it does not know yet.
func allBelieveFailed(vs []missions.IntentVerdict) bool {
	for _, v := range vs {
		if v.Effects == 0 && v.Belief != missions.BelievesFailed {
			return false
		}
	}
	return true
}

// worstVerdict is the verdict that says most is wrong: a caller that
// believes other than the ledger holds, then one handed to a person, then
// one whose belief and ledger agree; "" with no verdict.
func worstVerdict(vs []missions.IntentVerdict) missions.Verdict {
	rank := func(v missions.Verdict) int {
		switch v {
		case missions.ExactlyOnce, missions.FailedCleanly:
			return 1
		case missions.EscalatedV:
			return 2
		case "":
			return 0
		}
		return 3
	}
	var worst missions.Verdict
	for _, v := range vs {
		if rank(v.Verdict) > rank(worst) {
			worst = v.Verdict
		}
	}
	return worst
}

// counterState says in words what the counter's colour says: how the
// count stands against the intended. Its colour is the verdicts', so a
// count as intended is "as intended" only where the verdicts agree;
// beside a verdict that is not (a hidden effect or a phantom, drawn red;
// an intent handed to a person, drawn amber) it names that verdict: the
// words never say all is well in red.
func counterState(effects, intended int, worst missions.Verdict) string {
	switch {
	case effects > intended:
		return fmt.Sprintf("▲ %d extra", effects-intended)
	case effects < intended && worst == missions.FailedCleanly:
		// Known to have failed: nothing missing that the caller
		// believes made.
		return fmt.Sprintf("▼ %d not made", intended-effects)
	case effects < intended:
		return fmt.Sprintf("▼ %d short", intended-effects)
	}
	switch worst {
	case "", missions.ExactlyOnce, missions.FailedCleanly:
		return "= as intended"
	}
	return string(worst)
}

// counter renders the effect counter as three lines: the effect count in
// large digits, then "effects N", "intended M" and what the difference
// means, so the state reads without colour too.
//
// Its width depends only on the run, not on the step: the digits take the
// room of the largest count the run can reach, right-aligned, and the
// words the room of the longest they can say, so the counter does not
// move when "▼ 1 short" becomes "= as intended".
func (h *header) counter() [3]string {
	cs, state := h.counterLook()
	e := big(h.effects)
	top := max(h.most, h.effects, h.intended)
	dw := lipgloss.Width(big(top)[0])
	words := [3]string{
		fmt.Sprintf("effects %d", h.effects),
		fmt.Sprintf("intended %d", h.intended),
		state,
	}
	ww := max(len(fmt.Sprintf("effects %d", top)), len(fmt.Sprintf("intended %d", h.intended)), lipgloss.Width(notRun), lipgloss.Width(notSettled))
	for _, v := range append([]missions.Verdict{""}, missions.Verdicts...) {
		for _, n := range []int{0, h.intended, top} {
			ww = max(ww, lipgloss.Width(counterState(n, h.intended, v)))
		}
	}
	styles := [3]lipgloss.Style{cs, h.st.Text, cs}
	var out [3]string
	for i := range out {
		pad := strings.Repeat(" ", max(0, dw-lipgloss.Width(e[i])))
		out[i] = pad + cs.Render(e[i]) + "  " + styles[i].Render(fit(words[i], ww))
	}
	return out
}

// settingsLine names the settings in at most w cells where it can, the
// ones changed from the mission's own marked. The key source is named when
// it is not the per-intent default or not the mission's own. Keys hashed
// from the payload leave stable keys nothing to do: the line says so, or,
// where that does not fit, leaves them out.
func (h *header) settingsLine(w int) string {
	s, d := h.settings, h.defaults
	if h.rec != nil {
		// The toggles are shown off, with the reason, not hidden.
		full := h.st.Changed.Render("your client") + h.st.Subtle.Render(", as recorded in ") + h.st.Text.Render(termtext.CleanLine(h.recName)) +
			h.st.Subtle.Render(" · ") + h.st.Text.Render(s.Words(missions.SettingContract)) + h.st.Subtle.Render(" · k p c s f F off: its own")
		if lipgloss.Width(full) <= w {
			return full
		}
		return h.st.Changed.Render("your client's run") + h.st.Subtle.Render(" · ") + h.st.Text.Render(s.Words(missions.SettingContract)) +
			h.st.Subtle.Render(" · k p c s f F off")
	}
	part := func(f missions.Setting) string {
		label, value := s.Word(f)
		if _, own := d.Word(f); value != own {
			return h.st.Subtle.Render(label) + h.st.Changed.Render(value)
		}
		return h.st.Subtle.Render(label) + h.st.Text.Render(value)
	}
	stable := part(missions.SettingStableKeys)
	rest := []string{part(missions.SettingPolicy), part(missions.SettingContract)}
	if s.KeySource != missions.KeyPerIntent || s.KeySource != d.KeySource {
		rest = append(rest, part(missions.SettingKeySource))
	}
	sep := h.st.Subtle.Render(" · ")
	if s.KeySource != missions.KeyPayloadHash {
		return strings.Join(append([]string{stable}, rest...), sep)
	}
	full := strings.Join(append([]string{stable + h.st.Subtle.Render(" (no effect)")}, rest...), sep)
	if lipgloss.Width(full) <= w {
		return full
	}
	return strings.Join(rest, sep)
}

// minTitle is the fewest cells a cut mission title keeps beside its id.
const minTitle = 16

// titleLine names the lab and the mission in at most w cells. Where the
// line is too long, the lab's name goes first, then the title is cut: the
// id stays whole, since it is what the command line and the export files
// use. Only a title that would keep fewer than minTitle cells cuts the id.
func (h *header) titleLine(w int) string {
	app := h.st.AppTitle.Render("replaylab") + h.st.Subtle.Render(" · ")
	id := h.st.Subtle.Render(h.id)
	need := lipgloss.Width(h.title) + 1 + lipgloss.Width(h.id)
	// The lab's name and the title stay whole; the id, which the
	// picker and every file name also show, gives way first.
	switch aw := lipgloss.Width(app); {
	case aw+need <= w:
		return app + h.st.Title.Render(h.title) + " " + id
	case aw+lipgloss.Width(h.title) <= w:
		return app + h.st.Title.Render(h.title)
	case lipgloss.Width(h.title) <= w:
		return h.st.Title.Render(h.title)
	}
	return h.st.Title.Render(cut(h.title, w))
}

// positionLine says where the run stands in at most w cells: the step in
// full when it fits, else in short.
func (h *header) positionLine(w int) string {
	switch {
	case h.pos == 0:
		return h.st.Accent.Render("ready") + h.st.Subtle.Render(fmt.Sprintf(" · %d steps · n takes the first", h.n))
	case h.pos < h.n:
		at := fmt.Sprintf("step %d of %d", h.pos, h.n)
		// The held mark stays whole; the step's words give way to it.
		room := max(0, w-len(at)-3-lipgloss.Width(h.heldTag))
		step := h.stepLine[0]
		if lipgloss.Width(step) > room {
			step = cut(h.stepLine[1], room)
		}
		return h.st.Now.Render(at) + h.st.Subtle.Render(" · ") + h.st.Text.Render(step+h.heldTag)
	}
	lead := h.st.Now.Render(fmt.Sprintf("done, %d of %d", h.pos, h.n)) + h.st.Subtle.Render(" · verdict ")
	return lead + h.st.verdictList(h.verdicts, max(0, w-lipgloss.Width(lead)))
}

func (h *header) View() string {
	if h.w <= 0 || h.h <= 0 {
		return ""
	}
	right := h.counter()
	rw := 0
	for _, l := range right {
		rw = max(rw, lipgloss.Width(l))
	}
	// Two cells between the words and the large digits, so that a long
	// title never runs into them.
	const gap = 2
	lw := h.w - rw - gap
	left := []string{
		h.titleLine(lw),
		h.settingsLine(lw),
		h.positionLine(lw),
	}
	if lw < 24 {
		// Too narrow for the large counter: say it in one line.
		cs, state := h.counterLook()
		line := cs.Render(fmt.Sprintf("effects %d · intended %d · %s", h.effects, h.intended, state))
		return box([]string{left[0], left[2], line}, h.w, headerHeight)
	}
	l := box(left, lw, headerHeight)
	r := box(right[:], rw, headerHeight)
	return lipgloss.JoinHorizontal(lipgloss.Top, l, strings.Repeat(" ", gap), r)
}

// stepPhrase is a step as the header names it: an attempt's fixture is
// called one, since "attempt refund-1042 → success" above a conflict
// read as what came of it.
func stepPhrase(st missions.Step) string {
	return st.Phrase(func(a missions.Step) string {
		return fmt.Sprintf("attempt %s, fixture %s", a.Attempt, a.Fixture) + a.Terms()
	})
}
