// Package suggest finds the names a misspelt one was probably meant to be:
// the "did you mean" of unknown fields, rule ids and chain links.
package suggest

import (
	"strings"
	"unicode/utf8"
)

// maxEdits is the most edits a typo is taken to have: beyond two, a name
// is more often another name than a misspelling of it.
const maxEdits = 2

// Near returns the candidates closest to name that are plausible typos of
// it, in the candidates' order: those equal to name but for case when there
// are any, else those at the smallest edit distance (Damerau-Levenshtein,
// optimal string alignment, in runes), when that distance is at most 2 and
// under half of name's length, so a short name is not matched to any other
// short name. A candidate equal to name is no suggestion.
func Near(name string, candidates []string) []string {
	return Within(name, candidates, maxEdits)
}

// Within is Near with at most edits edits: fewer for names from a dense
// set, such as rule ids, where two edits reach nearly every other name.
func Within(name string, candidates []string, edits int) []string {
	var folded []string
	for _, c := range candidates {
		if c != name && strings.EqualFold(c, name) {
			folded = append(folded, c)
		}
	}
	if len(folded) > 0 {
		return folded
	}
	limit := min(edits, (utf8.RuneCountInString(name)-1)/2)
	lower := strings.ToLower(name)
	n := utf8.RuneCountInString(name)
	var best []string
	bestD := limit + 1
	for _, c := range candidates {
		// A length further off than the limit is further off in edits:
		// skip the distance, as a long list of ids mostly is.
		if c == name || abs(utf8.RuneCountInString(c)-n) > limit {
			continue
		}
		lowerC := strings.ToLower(c)
		// A candidate whose letters alone are too far off needs no
		// distance: with thousands of ids a set's broken links would
		// otherwise cost links x ids full distances.
		if lb, ok := bagDistance(lower, lowerC); ok && lb > min(bestD, limit) {
			continue
		}
		d := Distance(lower, lowerC)
		switch {
		case d < bestD:
			best, bestD = append(best[:0], c), d
		case d == bestD && d <= limit:
			best = append(best, c)
		}
	}
	return best
}

// One returns the single candidate Near suggests, "" when it suggests none
// or several: a link is worth a suggestion only when it names one value.
func One(name string, candidates []string) string {
	if near := Near(name, candidates); len(near) == 1 {
		return near[0]
	}
	return ""
}

// bagDistance is a lower bound of Distance for ASCII strings (ok false
// otherwise): the characters of the longer that the other lacks, counted
// with their repeats. An insertion, deletion or substitution changes it by
// at most one, a transposition not at all.
func bagDistance(a, b string) (int, bool) {
	var counts [utf8.RuneSelf]int32
	for i := 0; i < len(a); i++ {
		if a[i] >= utf8.RuneSelf {
			return 0, false
		}
		counts[a[i]]++
	}
	shared := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= utf8.RuneSelf {
			return 0, false
		}
		if counts[c] > 0 {
			counts[c]--
			shared++
		}
	}
	return max(len(a), len(b)) - shared, true
}

// Distance is the optimal string alignment distance between a and b, in
// runes: insertions, deletions, substitutions and transpositions of two
// adjacent runes each count one.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows: the one before last is what a transposition needs.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
