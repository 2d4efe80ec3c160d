package lab

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// TestIdleKeysSayWhy presses lab keys at moments when they can do
// nothing: each leaves the run where it was and says why on the status
// line, instead of doing nothing in silence.
func TestIdleKeysSayWhy(t *testing.T) {
	guarded := missions.Guarded
	for _, tc := range []struct {
		name    string
		mission string
		o       missions.Overrides
		before  []string
		key     string
		want    string
	}{
		{"n at the end", tts, missions.Overrides{}, []string{"r"}, "n", "the run is over (step 3 of 3)"},
		{"space at the end", tts, missions.Overrides{}, []string{"r"}, "space", "the run is over"},
		{"r at the end", tts, missions.Overrides{}, []string{"r"}, "r", "the run is over"},
		{"b at the start", tts, missions.Overrides{}, nil, "b", "this is the start"},
		{"0 at the start", tts, missions.Overrides{}, nil, "0", "this is the start"},
		{"v with no pins", tts, missions.Overrides{}, nil, "v", "nothing pinned yet: m pins"},
		{"g under naive", tts, missions.Overrides{}, []string{"r"}, "g", "under the naive policy nothing is"},
		{"g before the escalation", "changed-parameters", missions.Overrides{Policy: &guarded}, []string{"n"}, "g",
			"nothing handed to a person yet: this run escalates at step 2 of 3"},
		{"g when guarded settles all", tts, missions.Overrides{Policy: &guarded}, []string{"r"}, "g", "settled every intent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := press(t, newLab(t, Options{Mission: tc.mission, Overrides: tc.o, Dir: t.TempDir()}, 100, 30), tc.before...)
			pos, scr := m.pos, m.screen
			m = press(t, m, tc.key)
			if m.pos != pos || m.screen != scr {
				t.Fatalf("%s moved the lab: position %d → %d, screen %d → %d", tc.key, pos, m.pos, scr, m.screen)
			}
			if !strings.Contains(m.status, tc.want) {
				t.Fatalf("%s: status %q, want it to contain %q", tc.key, m.status, tc.want)
			}
			if !strings.Contains(m.View(), tc.want) {
				t.Fatalf("%s: the status is not on screen:\n%s", tc.key, m.View())
			}
		})
	}
}
