package diff

import (
	"strconv"
	"strings"
)

// FilePatch is one file's part of a patch.
type FilePatch struct {
	// Op is "add", "delete" or "update".
	Op      string
	Path    string
	MoveTo  string // set when the patch renames the file
	Lines   []Line
	Added   int
	Removed int
}

// ParsePatch reads a Codex apply_patch text ("*** Begin Patch" … "*** End
// Patch") or a unified diff (git or plain). Unrecognised lines are ignored,
// so any input gives a (possibly empty) result.
func ParsePatch(text string) []FilePatch {
	lines := SplitLines(text)
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "*** Begin Patch") || strings.HasPrefix(t, "*** Add File:") ||
			strings.HasPrefix(t, "*** Update File:") || strings.HasPrefix(t, "*** Delete File:") {
			return parseApplyPatch(lines)
		}
		break
	}
	return parseUnified(lines)
}

// parseApplyPatch reads the apply_patch envelope ("*** Begin Patch").
func parseApplyPatch(lines []string) []FilePatch {
	var out []FilePatch
	var cur *FilePatch
	flush := func() {
		if cur != nil {
			cur.Added, cur.Removed = Count(cur.Lines)
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "*** Add File: "):
			flush()
			cur = &FilePatch{Op: "add", Path: strings.TrimSpace(l[len("*** Add File: "):])}
		case strings.HasPrefix(l, "*** Update File: "):
			flush()
			cur = &FilePatch{Op: "update", Path: strings.TrimSpace(l[len("*** Update File: "):])}
		case strings.HasPrefix(l, "*** Delete File: "):
			flush()
			cur = &FilePatch{Op: "delete", Path: strings.TrimSpace(l[len("*** Delete File: "):])}
		case strings.HasPrefix(l, "*** Move to: "):
			if cur != nil {
				cur.MoveTo = strings.TrimSpace(l[len("*** Move to: "):])
			}
		case strings.HasPrefix(l, "*** "):
			// Begin/End Patch, End of File: structure only.
		case cur == nil:
		case strings.HasPrefix(l, "@@"):
			cur.Lines = append(cur.Lines, Line{Header, l})
		case strings.HasPrefix(l, "+"):
			cur.Lines = append(cur.Lines, Line{Insert, l[1:]})
		case strings.HasPrefix(l, "-"):
			cur.Lines = append(cur.Lines, Line{Delete, l[1:]})
		case strings.HasPrefix(l, " "):
			cur.Lines = append(cur.Lines, Line{Context, l[1:]})
		case l == "":
			cur.Lines = append(cur.Lines, Line{Context, ""})
		}
	}
	flush()
	return out
}

func parseUnified(lines []string) []FilePatch {
	var out []FilePatch
	var cur *FilePatch
	oldLeft, newLeft := 0, 0
	flush := func() {
		if cur != nil {
			cur.Added, cur.Removed = Count(cur.Lines)
			out = append(out, *cur)
			cur = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if cur != nil && (oldLeft > 0 || newLeft > 0) {
			switch {
			case strings.HasPrefix(l, "+"):
				cur.Lines = append(cur.Lines, Line{Insert, l[1:]})
				newLeft--
				continue
			case strings.HasPrefix(l, "-"):
				cur.Lines = append(cur.Lines, Line{Delete, l[1:]})
				oldLeft--
				continue
			case strings.HasPrefix(l, " ") || l == "":
				cur.Lines = append(cur.Lines, Line{Context, strings.TrimPrefix(l, " ")})
				oldLeft--
				newLeft--
				continue
			case strings.HasPrefix(l, `\`):
				continue
			}
			oldLeft, newLeft = 0, 0
		}
		switch {
		case strings.HasPrefix(l, "diff --git "):
			flush()
			cur = &FilePatch{Op: "update", Path: gitPath(l)}
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			from, to := diffPath(l[4:]), diffPath(lines[i+1][4:])
			if cur == nil || len(cur.Lines) > 0 {
				flush()
				cur = &FilePatch{Op: "update"}
			}
			switch {
			case from == "/dev/null":
				cur.Op, cur.Path = "add", to
			case to == "/dev/null":
				cur.Op, cur.Path = "delete", from
			default:
				cur.Path = to
				if from != to {
					cur.MoveTo = to
					cur.Path = from
				}
			}
			i++
		case strings.HasPrefix(l, "new file mode") && cur != nil:
			cur.Op = "add"
		case strings.HasPrefix(l, "deleted file mode") && cur != nil:
			cur.Op = "delete"
		case strings.HasPrefix(l, "@@"):
			if cur == nil {
				cur = &FilePatch{Op: "update"}
			}
			o, n, ok := hunkCounts(l)
			if !ok {
				continue
			}
			cur.Lines = append(cur.Lines, Line{Header, l})
			oldLeft, newLeft = o, n
		}
	}
	flush()
	return out
}

// hunkCounts reads "@@ -a,b +c,d @@"; a missing count means 1.
func hunkCounts(h string) (old, new int, ok bool) {
	f := strings.Fields(h)
	if len(f) < 3 || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, false
	}
	count := func(s string) (int, bool) {
		_, c, has := strings.Cut(s[1:], ",")
		if !has {
			return 1, true
		}
		n, err := strconv.Atoi(c)
		return n, err == nil && n >= 0 && n < 1<<24
	}
	o, ok1 := count(f[1])
	n, ok2 := count(f[2])
	return o, n, ok1 && ok2
}

func gitPath(l string) string {
	f := strings.Fields(strings.TrimPrefix(l, "diff --git "))
	if len(f) == 0 {
		return ""
	}
	return strings.TrimPrefix(f[len(f)-1], "b/")
}

func diffPath(s string) string {
	s, _, _ = strings.Cut(s, "\t")
	s = strings.TrimSpace(s)
	if s == "/dev/null" {
		return s
	}
	if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
		return s[2:]
	}
	return s
}
