package daemon

import (
	"strings"
	"unicode/utf8"
)

// unknownNameHintLocked is the hint of a session name that matches none:
// the closest name when one is close enough to be a slip of the finger;
// d.mu is held.
func (d *Daemon) unknownNameHintLocked(name string) string {
	names := make([]string, 0, len(d.sessions))
	for _, s := range d.sessions {
		names = append(names, s.rec.Name)
	}
	if best := closestName(name, names); best != "" {
		return "did you mean " + best + "? `muster ls` lists the sessions"
	}
	return "run `muster ls` to see session names"
}

// closestName is the name in names nearest to typed, by edit distance
// (case-insensitive), when it is at most a third of typed's length (one
// edit at least); or a name typed begins, or that begins with typed;
// "" when none is. Ties go to the first name in sort order.
func closestName(typed string, names []string) string {
	t := strings.ToLower(typed)
	best, bestDist := "", utf8.RuneCountInString(t)/3+1
	for _, n := range names {
		l := strings.ToLower(n)
		dist := editDistance(t, l)
		if strings.HasPrefix(l, t) || strings.HasPrefix(t, l) {
			dist = min(dist, 1)
		}
		if dist < bestDist || (dist == bestDist && best != "" && n < best) {
			best, bestDist = n, dist
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
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
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
