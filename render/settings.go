package render

import (
	"strings"

	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// SettingsLine renders a case's settings on one line, e.g.
// "stable keys on · policy naive · contract v1 · keys from intent · seed 1",
// followed by the caller's budget where it is not the default.
func SettingsLine(s missions.Settings) string {
	return strings.Join(append(SettingWords(s)[:5], BudgetWords(s)...), " · ")
}

// BudgetWords says the caller's budget where it is not the default: none,
// one or both of "at most N attempts per intent" and "deadline tick D".
func BudgetWords(s missions.Settings) []string {
	words := SettingWords(s)
	var out []string
	if s.MaxAttempts > 0 {
		out = append(out, words[5])
	}
	if s.Deadline > 0 {
		out = append(out, words[6])
	}
	return out
}

// SettingWords renders each setting the way a person reads it, in the
// fixed order of missions.AllSettings.
func SettingWords(s missions.Settings) []string {
	out := make([]string, len(missions.AllSettings))
	for i, f := range missions.AllSettings {
		out[i] = termtext.CleanLine(s.Words(f))
	}
	return out
}
