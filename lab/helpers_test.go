package lab

import (
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/list"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/replaylab/replaylab/ledger"
	"github.com/replaylab/replaylab/missions"
)

func init() {
	// Goldens and assertions read plain text.
	lipgloss.SetColorProfile(termenv.Ascii)
}

// keyMsg builds the message a terminal sends for a key name.
func keyMsg(k string) tea.KeyMsg {
	types := map[string]tea.KeyType{
		"space": tea.KeySpace, "right": tea.KeyRight, "left": tea.KeyLeft, "esc": tea.KeyEscape,
		"enter": tea.KeyEnter, "tab": tea.KeyTab, "up": tea.KeyUp, "down": tea.KeyDown,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "ctrl+c": tea.KeyCtrlC, "backspace": tea.KeyBackspace,
	}
	if t, ok := types[k]; ok {
		return tea.KeyMsg{Type: t}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// newLab opens the lab at a size, on a mission when one is named.
func newLab(t testing.TB, o Options, w, h int) Model {
	t.Helper()
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	// A steady filter cursor: its blink is a timer, and runCmd waits for
	// every command to answer.
	m.picker.list.FilterInput.Cursor.SetMode(cursor.CursorStatic)
	return resize(m, w, h)
}

func resize(m Model, w, h int) Model {
	next, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return next.(Model)
}

// press sends keys one by one and drops the commands they return.
func press(t testing.TB, m Model, keys ...string) Model {
	t.Helper()
	for _, k := range keys {
		next, _ := m.Update(keyMsg(k))
		m = next.(Model)
	}
	return m
}

// pressRun sends one key and feeds back whatever its command returns, as
// the program would (used for the picker's filter and for exports).
func pressRun(t testing.TB, m Model, k string) Model {
	t.Helper()
	next, cmd := m.Update(keyMsg(k))
	m = next.(Model)
	return runCmd(t, m, cmd)
}

func runCmd(t testing.TB, m Model, cmd tea.Cmd) Model {
	t.Helper()
	if cmd == nil {
		return m
	}
	// Every command the lab returns answers without a timer (newLab keeps
	// the filter cursor from blinking), so a command is waited for; the
	// bound only turns a hang into a failure. Only the messages the lab
	// acts on are fed back.
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(time.Minute):
		t.Fatal("a command did not answer within a minute")
	}
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			m = runCmd(t, m, c)
		}
		return m
	case list.FilterMatchesMsg, exportedMsg:
		next, more := m.Update(msg)
		return runCmd(t, next.(Model), more)
	}
	return m
}

// longMission is a mission whose schedule offers n attempts that all
// time out after committing: with fresh keys every one is a new effect.
func longMission(n int) *missions.Mission {
	m := &missions.Mission{
		ID:       "long-run",
		Title:    "A long run of timeouts",
		Goal:     "Many attempts, each committing while the caller hears a timeout.",
		Contract: ledger.V1, Retention: ledger.DefaultRetention, KeySource: missions.KeyPerIntent,
		Intents: []missions.Intent{{
			ID: "refund-1", Op: "refund", Principal: "support-agent",
			Label: "refund of 10.00 on order 1", Payload: map[string]string{"order": "1", "amount": "10.00"},
		}},
	}
	for i := 0; i < n; i++ {
		m.Schedule = append(m.Schedule, missions.Step{Attempt: "refund-1", Fixture: missions.TimeoutAfterCommit})
	}
	return m
}

// catalogOf is a catalog holding the given missions, in order.
func catalogOf(ms ...*missions.Mission) *missions.Catalog {
	return &missions.Catalog{Missions: ms}
}

// openMission opens a mission that is not in the built-in catalog.
func openMission(t testing.TB, m Model, ms *missions.Mission) Model {
	t.Helper()
	if err := m.open(ms); err != nil {
		t.Fatal(err)
	}
	m.layout()
	m.updateKeys()
	return m
}

const tts = "timeout-then-success"

func ttsLab(t *testing.T) Model {
	return newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30)
}

// wantCase is the engine's own case for the mission after pos steps.
func wantCase(t *testing.T, id string, o missions.Overrides, pos int) *missions.Case {
	t.Helper()
	m, err := missions.BuiltIn().Get(id)
	if err != nil {
		t.Fatal(err)
	}
	r, err := missions.NewRunner(m, m.Settings(o))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < pos; i++ {
		r.Step()
	}
	return r.Case()
}
