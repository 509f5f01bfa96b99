package launcher

import "strings"

// ShellQuote returns s as a single POSIX shell word whose value is s. Words
// made only of letters, digits and @%+=:,./_- are returned unchanged unless
// a shell would read them as a keyword where a command starts (do, fi,
// time, declare, …); the rest are single-quoted, and each embedded single quote becomes the
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
	if safe && !keywords[s] {
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

// keywords are the reserved words of POSIX sh and bash, and the bash
// builtins that the parser reads as clauses of their own, which would stop
// being a plain word in command position.
var keywords = map[string]bool{
	"case": true, "do": true, "done": true, "elif": true, "else": true, "esac": true,
	"fi": true, "for": true, "if": true, "in": true, "then": true, "until": true, "while": true,
	"function": true, "select": true, "time": true, "coproc": true,
	"declare": true, "export": true, "local": true, "readonly": true, "typeset": true, "nameref": true, "let": true,
}
