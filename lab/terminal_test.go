package lab

import (
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

func TestNoColor(t *testing.T) {
	before := lipgloss.ColorProfile()
	defer lipgloss.SetColorProfile(before)
	for _, tt := range []struct {
		value string
		want  termenv.Profile
	}{{"", termenv.TrueColor}, {"1", termenv.Ascii}, {"no", termenv.Ascii}} {
		lipgloss.SetColorProfile(termenv.TrueColor)
		followNoColor(func(k string) string {
			if k == "NO_COLOR" {
				return tt.value
			}
			return ""
		})
		if got := lipgloss.ColorProfile(); got != tt.want {
			t.Errorf("NO_COLOR=%q: profile %v, want %v", tt.value, got, tt.want)
		}
	}
}
