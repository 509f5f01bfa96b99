// Package diff computes line diffs for the edits an agent made (Edit,
// MultiEdit and Write tool calls) and parses the patches it applied (Codex
// apply_patch text and unified diffs). Replays render the result and stats
// count its added and removed lines. It knows nothing about files on disk:
// every input is the text the transcript recorded.
package diff

import "strings"

// Kind says what a diff line is.
type Kind byte

const (
	Context Kind = ' '
	Delete  Kind = '-'
	Insert  Kind = '+'
	// Header is a hunk header ("@@ … @@") carried through from a patch.
	Header Kind = '@'
)

// Line is one line of a diff, without its newline.
type Line struct {
	Kind Kind
	Text string
}

// maxEdits bounds the Myers search; beyond it the differing middle is shown
// as a whole deletion followed by a whole insertion, which keeps the counts
// an upper bound and the time linear.
const maxEdits = 1500

// SplitLines splits s into lines without their terminators. A final newline
// does not start an empty line; "" has no lines.
func SplitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// Strings diffs old against new line by line.
func Strings(old, new string) []Line {
	return Lines(SplitLines(old), SplitLines(new))
}

// Lines diffs a against b with Myers' algorithm after trimming the common
// prefix and suffix.
func Lines(a, b []string) []Line {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]Line, 0, len(a)+len(b)-pre-suf)
	for _, l := range a[:pre] {
		out = append(out, Line{Context, l})
	}
	out = append(out, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		out = append(out, Line{Context, l})
	}
	return out
}

// myers returns the shortest edit script from a to b, or a replace-all
// script when more than maxEdits edits would be needed.
func myers(a, b []string) []Line {
	n, m := len(a), len(b)
	if n == 0 || m == 0 || n+m > 1<<20 {
		return replaceAll(a, b)
	}
	max := n + m
	if max > maxEdits {
		max = maxEdits
	}
	off := max + 1
	v := make([]int, 2*max+3)
	var trace [][]int
	found := -1
	for d := 0; d <= max && found < 0; d++ {
		// Keep only the diagonals round d can read: memory O(D²), not O(D·N).
		snap := make([]int, 2*d+1)
		copy(snap, v[off-d:off+d+1])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return replaceAll(a, b)
	}
	// Walk the trace backwards collecting the script in reverse.
	rev := make([]Line, 0, n+m)
	x, y := n, m
	for d := found; d > 0; d-- {
		vd := trace[d]
		at := func(k int) int { return vd[k+d] }
		k := x - y
		var prevK int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x--
			y--
			rev = append(rev, Line{Context, a[x]})
		}
		if x == prevX {
			y--
			rev = append(rev, Line{Insert, b[y]})
		} else {
			x--
			rev = append(rev, Line{Delete, a[x]})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, Line{Context, a[x]})
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

func replaceAll(a, b []string) []Line {
	out := make([]Line, 0, len(a)+len(b))
	for _, l := range a {
		out = append(out, Line{Delete, l})
	}
	for _, l := range b {
		out = append(out, Line{Insert, l})
	}
	return out
}

// Count returns the inserted and deleted lines of a diff.
func Count(lines []Line) (added, removed int) {
	for _, l := range lines {
		switch l.Kind {
		case Insert:
			added++
		case Delete:
			removed++
		}
	}
	return added, removed
}
