package lab

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
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
