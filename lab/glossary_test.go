package lab

import (
	"strings"
	"testing"

	"github.com/replaylab/replaylab/missions"
)

// TestGlossaryHasEveryWordTheLabShows: the glossary, reached from the
// full key list, explains each word of the lab's jargon and every
// fixture, provider action, observation, checkpoint and verdict a catalog
// run shows; esc goes back where it came from.
func TestGlossaryHasEveryWordTheLabShows(t *testing.T) {
	var text strings.Builder
	for _, term := range missions.Glossary {
		text.WriteString(term.Word + " " + term.Meaning + "\n")
	}
	all := text.String()
	words := []string{"fixture", "checkpoint", "tick", "observed", "replayed", "pruned", "contract v1", "contract v2", "contract none",
		"policy naive", "policy guarded", "late_commit +N", "kept to t100", "key A", "stable keys", "retention", "effect", "intended", "◆"}
	for _, v := range missions.Verdicts {
		words = append(words, string(v))
		// The counter's third line, with its number as the glossary
		// writes it.
		for _, n := range []int{0, 1, 2} {
			words = append(words, strings.Map(func(r rune) rune {
				if r >= '0' && r <= '9' {
					return 'N'
				}
				return r
			}, counterState(n, 1, v)))
		}
	}
	for _, f := range missions.Fixtures {
		words = append(words, string(f))
	}
	for _, ms := range missions.BuiltIn().Missions {
		for _, p := range missions.Policies {
			c, err := missions.Run(ms, ms.Settings(missions.Overrides{Policy: &p}))
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range c.Events {
				words = append(words, ev.Provider, string(ev.Observed), string(ev.Checkpoint))
			}
		}
	}
	for _, w := range words {
		if w != "" && !strings.Contains(all, w) {
			t.Errorf("the glossary does not explain %q", w)
		}
	}
	m := newLab(t, Options{Mission: tts, Dir: t.TempDir()}, 100, 30)
	m = press(t, m, "?")
	if !strings.Contains(m.View(), "words (glossary)") {
		t.Fatalf("the full key list does not offer the glossary:\n%s", m.View())
	}
	m = press(t, m, "w")
	if m.screen != screenGlossary || !strings.Contains(m.View(), "timeout_after_commit") {
		t.Fatalf("w from the key list did not open the glossary:\n%s", m.View())
	}
	m = press(t, m, "pgdown")
	if m = press(t, m, "esc"); m.screen != screenLab {
		t.Errorf("esc from the glossary went to screen %d, not the lab", m.screen)
	}
}
