package launcher

import "strings"

// ShellQuote returns s as a single POSIX shell word whose value is s. Words
// made only of letters, digits and @%+=:,./_- are returned unchanged; the
// rest are single-quoted, and each embedded single quote becomes the
// four bytes ' \ ' ' (close, escaped quote, reopen).
// A NUL byte cannot be passed to a program and is kept as is; callers
// reject it earlier.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for i := 0; i < len(s); i++ {
		if !isSafe(s[i]) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func isSafe(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("@%+=:,./_-", c) >= 0
}
