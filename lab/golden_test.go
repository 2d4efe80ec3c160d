package lab

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/replaylab/replaylab/missions"
)

// The two sizes the lab is drawn for: usable and good.
var goldenSizes = [][2]int{{80, 24}, {120, 40}}

// seedCatalog is the seed lab's three missions, so the picker's golden does
// not move when the catalog grows.
func seedCatalog(t *testing.T) *missions.Catalog {
	t.Helper()
	all := missions.BuiltIn()
	var ms []*missions.Mission
	for _, id := range []string{"timeout-then-success", "failure-then-failure", "timeout-before-commit"} {
		m, err := all.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return catalogOf(ms...)
}

func TestGoldenPicker(t *testing.T) {
	for _, s := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", s[0], s[1]), func(t *testing.T) {
			m := newLab(t, Options{Catalog: seedCatalog(t)}, s[0], s[1])
			golden.RequireEqual(t, m.View())
		})
	}
}

// TestGoldenLabSteps draws the lab after every step of the first seed
// mission, with stable keys on (the counter stays at one) and off (it
// reaches two on the retry).
func TestGoldenLabSteps(t *testing.T) {
	for _, stable := range []bool{true, false} {
		for _, s := range goldenSizes {
			t.Run(fmt.Sprintf("stable-%s/%dx%d", missions.OnOff(stable), s[0], s[1]), func(t *testing.T) {
				o := missions.Overrides{StableKeys: &stable}
				m := newLab(t, Options{Mission: tts, Overrides: o}, s[0], s[1])
				for pos := 0; pos <= m.steps; pos++ {
					t.Run(fmt.Sprintf("step%d", pos), func(t *testing.T) {
						golden.RequireEqual(t, m.View())
					})
					m = press(t, m, "n")
				}
			})
		}
	}
}

// TestGoldenCompare draws the seed lab's three cases side by side.
func TestGoldenCompare(t *testing.T) {
	for _, s := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", s[0], s[1]), func(t *testing.T) {
			cat := seedCatalog(t)
			m := openMission(t, newLab(t, Options{Catalog: cat}, s[0], s[1]), cat.Missions[0])
			m = press(t, m, "r", "m", "k", "r", "m", "esc", "down", "enter", "k", "r", "m", "v")
			if len(m.pinned) != 3 {
				t.Fatalf("%d pinned", len(m.pinned))
			}
			golden.RequireEqual(t, m.View())
		})
	}
}

func TestGoldenGuardedEnd(t *testing.T) {
	for _, s := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", s[0], s[1]), func(t *testing.T) {
			m := newLab(t, Options{Mission: tts}, s[0], s[1])
			golden.RequireEqual(t, press(t, m, "p", "r").View())
		})
	}
}

// TestGoldenKeySource draws two-intended-refunds at the end after s has
// switched to keys hashed from the payload: both refunds share one key and
// the second is a phantom.
func TestGoldenKeySource(t *testing.T) {
	m := newLab(t, Options{Mission: "two-intended-refunds"}, 80, 24)
	golden.RequireEqual(t, press(t, m, "r", "s").View())
}
