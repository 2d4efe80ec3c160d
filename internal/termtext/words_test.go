package termtext_test

import (
	"slices"
	"testing"

	"github.com/replaylab/replaylab/internal/termtext"
)

// Wrap breaks prose at spaces and after hyphens, by display width;
// WrapWords breaks at spaces only and never inside a word.
func TestWrapAndWrapWords(t *testing.T) {
	for _, tt := range []struct {
		s     string
		width int
		wrap  []string
		words []string
	}{
		{"", 10, nil, nil},
		{"a timed-out write", 8, []string{"a timed-", "out", "write"}, []string{"a", "timed-out", "write"}},
		{"idempotency_key is  required", 11, []string{"idempotency", "_key is", "required"}, []string{"idempotency_key", "is required"}},
		{"héllo wörld", 5, []string{"héllo", "wörld"}, []string{"héllo", "wörld"}},
		{"one\ntwo three", 20, []string{"one", "two three"}, []string{"one two three"}},
	} {
		if got := termtext.Wrap(tt.s, tt.width); !slices.Equal(got, tt.wrap) {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tt.s, tt.width, got, tt.wrap)
		}
		if got := termtext.WrapWords(tt.s, tt.width); !slices.Equal(got, tt.words) {
			t.Errorf("WrapWords(%q, %d) = %q, want %q", tt.s, tt.width, got, tt.words)
		}
	}
}
