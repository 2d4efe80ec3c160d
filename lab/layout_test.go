package lab

import (
	"strings"
	"testing"
)

// At 120x40 the seed lab's short runs leave room over. A blank line parts
// the bands, a rule closes the bottom row, and the rest is margin under
// the rule: no panel ends in a stretch of blank lines.
func TestSpareRoomStaysOutOfThePanels(t *testing.T) {
	blank := func(l string) bool { return strings.TrimSpace(l) == "" }
	for _, id := range []string{"timeout-then-success", "failure-then-failure", "timeout-before-commit"} {
		m := press(t, newLab(t, Options{Mission: id}, 120, 40), "r")
		v := m.View()
		lines := strings.Split(v, "\n")
		body := lines[:len(lines)-chromeLines]
		rule := -1
		for i, l := range body {
			if t := strings.TrimSpace(l); t != "" && strings.Trim(t, "─") == "" {
				rule = i
			}
		}
		if rule < 0 {
			t.Fatalf("%s: no rule closes the bottom row:\n%s", id, v)
		}
		if blank(body[rule-1]) {
			t.Errorf("%s: the bottom row ends in blank lines:\n%s", id, v)
		}
		for _, title := range []string{"what this mission shows", "▸ timeline", "schedule"} {
			i := -1
			for j, l := range body {
				if strings.HasPrefix(l, title) {
					i = j
				}
			}
			if i < 1 || !blank(body[i-1]) || blank(body[i-2]) {
				t.Errorf("%s: %q is not parted from the band above by one blank line:\n%s", id, title, v)
			}
		}
		run := 0
		for i, l := range body[:rule] {
			if run = map[bool]int{true: run + 1, false: 0}[blank(l)]; run > 1 {
				t.Fatalf("%s: blank lines inside the panels up to line %d:\n%s", id, i+1, v)
			}
		}
		for _, l := range body[rule+1:] {
			if !blank(l) {
				t.Fatalf("%s: text under the closing rule:\n%s", id, v)
			}
		}
	}
}
