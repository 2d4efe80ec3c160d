package termtext_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/replaylab/replaylab/export"
	"github.com/replaylab/replaylab/internal/termtext"
	"github.com/replaylab/replaylab/missions"
)

// Characters a person cannot see are shown as escapes, not dropped: a
// value that differs by one still reads as different.
func TestCleanShowsHiddenCharacters(t *testing.T) {
	cases := map[string]string{
		"45.0\u200b0":           `45.0\u200b0`,
		"refund \u202eoder":     `refund \u202eoder`,
		"a\u2066b\u2069":        `a\u2066b\u2069`,
		"soft\u00adhyphen":      `soft\u00adhyphen`,
		"bom\ufeff":             `bom\ufeff`,
		"c1\u0085next":          `c1\u0085next`,
		"tag\U000e0041":         `tag\U000e0041`,
		"tab\there":             "tab here",
		"line\nbreak":           "line\nbreak",
		"\x1b[31mred\x1b[0m":    "red",
		"plain 45.00, café, 名前": "plain 45.00, café, 名前",
	}
	for in, want := range cases {
		if got := termtext.Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

// A case whose payload carries hidden characters is written as JSON a
// terminal shows as it is: only visible characters, the hidden ones as
// escapes, and the same value when read back.
func TestJSONShowsHiddenCharacters(t *testing.T) {
	m, err := missions.BuiltIn().Get("changed-parameters")
	if err != nil {
		t.Fatal(err)
	}
	mm := *m
	mm.Intents = append([]missions.Intent{}, m.Intents...)
	mm.Intents[0].Label = "refund \u202e\u200b\u0085 of 45.00"
	c, err := missions.Run(&mm, mm.Settings(missions.Overrides{}))
	if err != nil {
		t.Fatal(err)
	}
	data, err := export.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range string(data) {
		if r != '\n' && termtext.Hidden(r) {
			t.Fatalf("the JSON carries %U raw", r)
		}
	}
	if !strings.Contains(string(data), `\u202e\u200b\u0085`) || !utf8.Valid(data) {
		t.Fatal("the hidden characters are not escaped")
	}
	back, err := export.Unmarshal("c.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Mission.Intents[0].Label != mm.Intents[0].Label {
		t.Fatalf("read back as %q", back.Mission.Intents[0].Label)
	}
}
