package termtext

import "strings"

// Closest is the word of words nearest to s within two edits (the
// Levenshtein distance), the first of equals, or "" when none is that near:
// what a "did you mean" names.
func Closest[T ~string](s string, words []T) string {
	best, bestDist := "", 3
	for _, w := range words {
		if d := Distance(s, string(w)); d < bestDist {
			best, bestDist = string(w), d
		}
	}
	return best
}

// Distance is the Levenshtein edit distance between a and b.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// JoinWords lists words with commas, as an "accepted:" list does.
func JoinWords[T ~string](words []T) string {
	s := make([]string, len(words))
	for i, w := range words {
		s[i] = string(w)
	}
	return strings.Join(s, ", ")
}
