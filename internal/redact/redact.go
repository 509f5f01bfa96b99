// Package redact replaces credential-shaped substrings (API keys, tokens,
// private keys, passwords in assignments, command lines and URLs) with
// [REDACTED:kind]. Replays and every response of `muster serve` go through
// it, so a secret hidden in one is hidden in the other.
//
// It is pattern-based, so it misses a secret that looks like nothing, and
// where a shape is ambiguous it prefers hiding a harmless value to showing
// a credential. Redaction is idempotent: a replacement never matches again.
package redact

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/musterhq/muster/internal/termtext"
	"github.com/musterhq/muster/internal/transcript"
)

// labelPrefix starts every replacement; a candidate that already holds one
// is left alone, which keeps redaction idempotent.
const labelPrefix = "[REDACTED:"

// A pattern finds one kind of credential.
type pattern struct {
	label string
	re    func() *regexp.Regexp
	// group is the submatch that holds the secret; 0: the whole match.
	group int
	// hints are cheap substring tests, one of which must pass before the
	// regexp runs (against the lower-cased text when fold is set).
	hints []string
	fold  bool
	// check, when set, must accept the secret too.
	check func(string) bool
}

// lazyRegexp compiles src on first use: every muster command links this
// package, and compiling all its patterns at start was a millisecond of
// each one, most of which never redact anything.
func lazyRegexp(src string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })
}

var patterns = []pattern{
	{label: "anthropic-key", hints: []string{"sk-ant-"}, re: lazyRegexp(`\bsk-ant-[A-Za-z0-9_\-]{20,}`)},
	{label: "openai-key", hints: []string{"sk-"}, re: lazyRegexp(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`)},
	{label: "github-token", hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, re: lazyRegexp(`\bgh[pousr]_[A-Za-z0-9]{36,}`)},
	{label: "github-token", hints: []string{"github_pat_"}, re: lazyRegexp(`\bgithub_pat_[A-Za-z0-9_]{22,}`)},
	{label: "aws-key", hints: []string{"AKIA", "ASIA"}, re: lazyRegexp(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{label: "slack-token", hints: []string{"xox"}, re: lazyRegexp(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`)},
	{label: "google-key", hints: []string{"AIza"}, re: lazyRegexp(`\bAIza[0-9A-Za-z_\-]{35}`)},
	{label: "gitlab-token", hints: []string{"glpat-"}, re: lazyRegexp(`\bglpat-[A-Za-z0-9_\-]{20,}`)},
	{label: "npm-token", hints: []string{"npm_"}, re: lazyRegexp(`\bnpm_[A-Za-z0-9]{36}`)},
	{label: "stripe-key", hints: []string{"_live_"}, re: lazyRegexp(`\b[sr]k_live_[A-Za-z0-9]{20,}`)},
	{label: "jwt", hints: []string{"eyJ"}, re: lazyRegexp(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`)},
	// An Authorization header says the next word is a credential, however
	// short; "bearer" alone needs a token-sized word ("the bearer of").
	{label: "basic-auth", hints: []string{"authorization"}, fold: true, group: 1,
		re: lazyRegexp(`(?i)\bauthorization["']?[ \t]*[:=][ \t]*["']?basic[ \t]+([A-Za-z0-9+/]{4,}={0,2})`)},
	{label: "bearer-token", hints: []string{"authorization"}, fold: true, group: 1,
		re: lazyRegexp(`(?i)\bauthorization["']?[ \t]*[:=][ \t]*["']?(?:bearer|token|bot)[ \t]+([A-Za-z0-9._~+/\-]{6,}=*)`)},
	{label: "bearer-token", hints: []string{"bearer"}, fold: true, group: 1,
		re: lazyRegexp(`(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{16,}=*)`)},
	// curl -u user:password, --user user:password.
	{label: "basic-auth", hints: []string{"curl"}, group: 1,
		re: lazyRegexp(`\bcurl\b[^\n|;&]*?\s(?:-u[ \t]*|--user[= \t]+)["']?[^\s:"']*:([^\s"'@]+)`)},
	// mysql -pSECRET (the password must touch -p; `-p` alone prompts).
	{label: "mysql-password", hints: []string{"mysql", "mariadb"}, group: 1,
		re: lazyRegexp(`\b(?:mysql(?:dump|admin|import|show|check|slap|pump|sh)?|mariadb(?:-dump|-admin)?)\b[^\n|;&]*?\s-p('[^'\n]*'|"[^"\n]*"|[^\s'"]+)`)},
	// sshpass -p SECRET, redis-cli -a SECRET, openssl -pass pass:SECRET
	// (also -passin, -passout): the flag names the next word a password.
	{label: "cli-password", hints: []string{"sshpass"}, group: 1,
		re: lazyRegexp(`\bsshpass\b[^\n|;&]*?\s-p[ \t]*('[^'\n]*'|"[^"\n]*"|[^\s'"-][^\s'"]*)`)},
	{label: "cli-password", hints: []string{"redis-cli"}, group: 1,
		re: lazyRegexp(`\bredis-cli\b[^\n|;&]*?\s(?:-a|--pass)[ \t]+('[^'\n]*'|"[^"\n]*"|[^\s'"-][^\s'"]*)`)},
	{label: "cli-password", hints: []string{"pass:"}, group: 1,
		re: lazyRegexp(`\s-pass(?:in|out)?[ \t]+["']?pass:([^\s"']+)`)},
	// An AWS secret access key has no prefix of its own: 40 base64
	// characters are taken for one only on a line that speaks of AWS
	// (an access key id, "aws", a credentials file's key names).
	{label: "aws-secret-key", hints: []string{"aws", "akia", "asia", "secretaccesskey"}, fold: true, group: 1,
		re:    lazyRegexp(`(?i)(?:\baws|\bakia|\basia|secretaccesskey)[^\n]*?(?:^|[^A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])`),
		check: mixedCase},
	{label: "url-password", hints: []string{"://"}, group: 1,
		re: lazyRegexp(`(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@\[\]]*:([^\s@/\[][^\s@/]*)@`)},
}

func (p *pattern) wanted(s string, lower *string) bool {
	text := s
	if p.fold {
		if *lower == "" {
			*lower = strings.ToLower(s)
		}
		text = *lower
	}
	for _, h := range p.hints {
		if strings.Contains(text, h) {
			return true
		}
	}
	return len(p.hints) == 0
}

// String replaces credential-shaped substrings of s with [REDACTED:kind]
// and returns how many it replaced.
//
// Text with escape sequences or control characters (colored terminal
// output, a password typed with backspaces) comes back without them
// (termtext.Strip): they can split a secret so that no pattern sees it,
// while every place that shows the text removes them and joins it again.
func String(s string) (string, int) {
	return clipped(termtext.Strip(s))
}

// clipped is redact, knowing that the text may have been cut short.
func clipped(s string) (string, int) {
	// A text cut short (transcript.Clip marks the cut with "…") may end
	// in the first characters of a secret, too few for its pattern: see
	// whether, continued, it would be one.
	if body, ok := strings.CutSuffix(s, "…"); ok {
		i := len(body)
		for i > 0 && tokenByte(body[i-1]) {
			i--
		}
		for _, p := range tokenPrefixes {
			if len(body)-i > len(p) && strings.HasPrefix(body[i:], p) {
				out, n := redact(body[:i])
				return out + labelPrefix + "token]…", n + 1
			}
		}
		const more = "0000000000000000000000000000000000000000000000000000000000000000"
		out, n := redact(body + more)
		if !strings.HasSuffix(out, more) {
			// The continuation went into a secret; drop what is left of it.
			return out[:strings.LastIndexByte(out, ']')+1] + "…", n
		}
	}
	return redact(s)
}

// tokenPrefixes start the vendor tokens of the patterns: a text cut short
// that ends in a word starting with one ends in part of a token.
var tokenPrefixes = []string{"sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "AKIA", "ASIA", "xox", "AIza", "glpat-", "npm_", "sk_live_", "rk_live_", "eyJ"}

func tokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

func redact(s string) (string, int) {
	s, n := keyBlocks(s)
	var lower string
	for i := range patterns {
		p := &patterns[i]
		if !p.wanted(s, &lower) {
			continue
		}
		matches := p.re().FindAllStringSubmatchIndex(s, -1)
		if matches == nil {
			continue
		}
		label := labelPrefix + p.label + "]"
		var b strings.Builder
		last, hits := 0, 0
		for _, m := range matches {
			lo, hi := m[2*p.group], m[2*p.group+1]
			if lo < 0 || strings.Contains(s[lo:hi], labelPrefix) || (p.check != nil && !p.check(s[lo:hi])) {
				continue
			}
			b.WriteString(s[last:lo])
			b.WriteString(label)
			last = hi
			hits++
		}
		if hits == 0 {
			continue
		}
		b.WriteString(s[last:])
		s, n, lower = b.String(), n+hits, ""
	}
	s, m := settings(s)
	return s, n + m
}

// mixedCase tells a random base64 key from a hex digest (a git commit id
// is 40 characters too): it has upper- and lower-case letters.
func mixedCase(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return 'A' <= r && r <= 'Z' }) &&
		strings.ContainsFunc(s, func(r rune) bool { return 'a' <= r && r <= 'z' })
}

// Private key blocks are found without a regexp: "from BEGIN to the
// nearest END" as one pattern costs a scan to the end of the text for each
// BEGIN that has no END, which is quadratic in a hostile transcript.
var (
	keyBegin = lazyRegexp(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
	keyEnd   = lazyRegexp(`-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
	// keyBody is what is left of a block cut short (no END): base64, its
	// line breaks, and the backslashes of a JSON-escaped "\n".
	keyBody = lazyRegexp(`^[A-Za-z0-9+/=\s\\]*`)
)

// keyBlocks replaces every private key block, from its BEGIN line to its
// END line, or to the end of its body when there is no END.
func keyBlocks(s string) (string, int) {
	if !strings.Contains(s, "PRIVATE KEY") {
		return s, 0
	}
	begins := keyBegin().FindAllStringIndex(s, -1)
	if begins == nil {
		return s, 0
	}
	const label = labelPrefix + "private-key]"
	var b strings.Builder
	last, n := 0, 0
	// end is the first END after the BEGIN being looked at, nil when none
	// remains; it is searched for again only once a BEGIN passes it, so
	// each part of s is searched once.
	var end []int
	searched := false
	for _, m := range begins {
		if m[0] < last {
			continue // inside the block just replaced
		}
		if !searched || (end != nil && end[0] < m[1]) {
			searched, end = true, nil
			if e := keyEnd().FindStringIndex(s[m[1]:]); e != nil {
				end = []int{e[0] + m[1], e[1] + m[1]}
			}
		}
		stop := m[1] + len(keyBody().FindString(s[m[1]:]))
		if end != nil {
			stop = end[1]
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(label)
		last = stop
		n++
	}
	b.WriteString(s[last:])
	return b.String(), n
}

// Settings whose name says secret: NAME=value in .env files and exports,
// "name": "value" in JSON, name: value in YAML, name = value in INI files
// (aws_secret_access_key = …), and --name value or --name=value on command
// lines. They are found from the keywords of their names rather than by one
// regexp over the whole text, which was the slowest part of redaction.
var nameKeywords = []string{"secret", "pass", "credential", "token", "key", "pwd"}

// flagName is a secret-named command-line flag, without its dashes.
var flagName = lazyRegexp(`^(?:[a-z0-9]+-)*(?:password|passwd|pass|passphrase|token|secret|api-?key|access-key|secret-key|private-key)$`)

// notSecrets are values a secret-named setting often has that are not
// secrets: switches, nothing, and the type names of declarations
// (`password: string`).
var notSecrets = map[string]bool{
	"true": true, "false": true, "yes": true, "null": true, "none": true, "nil": true, "undefined": true,
	"string": true, "str": true, "number": true, "int": true, "bool": true, "boolean": true, "bytes": true,
	"any": true, "object": true, "optional": true, "required": true,
}

var (
	// codeExpr is an unquoted value that reads as code rather than a
	// literal: a dotted path, a call or an index (args.password,
	// os.Getenv(…), cfg.Token).
	codeExpr = lazyRegexp(`^[A-Za-z_]\w*(?:(?:\.[A-Za-z_]\w*)+(?:[(\[].*)?|[(\[].*)$`)
	// envName is the name of an environment variable, as the value of a
	// setting that says where the secret is (env_key = "OPENAI_API_KEY").
	envName = lazyRegexp(`^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$`)
	// ident is a plain identifier.
	ident = lazyRegexp(`^[A-Za-z_]\w*$`)
)

func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// secretName reports whether a lower-case setting name says its value is
// a secret.
func secretName(name string) bool {
	for _, kw := range []string{"secret", "password", "passwd", "passphrase", "credential"} {
		if strings.Contains(name, kw) {
			return true
		}
	}
	// token, github_token, token_v2, but not max_tokens or tokenizer.
	for rest := name; ; {
		i := strings.Index(rest, "token")
		if i < 0 {
			break
		}
		rest = rest[i+len("token"):]
		if rest == "" || strings.IndexByte("_.-", rest[0]) >= 0 {
			return true
		}
	}
	// *_KEY, x-api-key, db.pass, db_pwd; not monkey, PWD or bypass.
	for _, kw := range []string{"key", "pass", "pwd"} {
		if k := len(name) - len(kw); k > 0 && strings.HasSuffix(name, kw) && strings.IndexByte("_.-", name[k-1]) >= 0 {
			return true
		}
	}
	for _, kw := range []string{"apikey", "accesskey", "privatekey"} {
		if strings.HasSuffix(name, kw) {
			return true
		}
	}
	return false
}

// settings redacts the values of secret-named settings and flags.
func settings(s string) (string, int) {
	lower := asciiLower(s)
	var runs [][2]int // runs of name characters that hold a keyword
	for _, kw := range nameKeywords {
		for off := 0; ; {
			i := strings.Index(lower[off:], kw)
			if i < 0 {
				break
			}
			start, end := off+i, off+i+len(kw)
			for start > 0 && nameByte(lower[start-1]) {
				start--
			}
			for end < len(lower) && nameByte(lower[end]) {
				end++
			}
			runs = append(runs, [2]int{start, end})
			off = end
		}
	}
	if runs == nil {
		return s, 0
	}
	slices.SortFunc(runs, func(a, b [2]int) int { return a[0] - b[0] })
	runs = slices.Compact(runs)
	const label = labelPrefix + "secret]"
	var b strings.Builder
	last, n := 0, 0
	for _, r := range runs {
		if r[0] < last {
			continue
		}
		lo, hi, ok := settingValue(s, lower[r[0]:r[1]], r[1])
		if !ok || strings.Contains(s[lo:hi], labelPrefix) {
			continue
		}
		b.WriteString(s[last:lo])
		b.WriteString(label)
		last = hi
		n++
	}
	if n == 0 {
		return s, 0
	}
	b.WriteString(s[last:])
	return b.String(), n
}

// settingValue finds the value that follows the name (lower-cased) ending
// at s[i:], and reports whether it may be a secret.
func settingValue(s, name string, i int) (lo, hi int, ok bool) {
	if flag, isFlag := strings.CutPrefix(name, "--"); isFlag && flagName().MatchString(flag) {
		// --name=value or --name value; the value is not the next flag.
		j := i
		if j < len(s) && s[j] == '=' {
			j++
		} else {
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
		}
		if j > i {
			if lo, hi, quoted, ok := value(s, j, "-"); ok && plausible(s[lo:hi], quoted, false, 4) {
				return lo, hi, true
			}
		}
	}
	if !secretName(name) {
		return 0, 0, false
	}
	j := i
	nameQuoted := j < len(s) && (s[j] == '"' || s[j] == '\'')
	if nameQuoted {
		j++
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j >= len(s) || (s[j] != ':' && s[j] != '=') {
		return 0, 0, false
	}
	j++
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	lo, hi, quoted, ok := value(s, j, "")
	if !ok || !plausible(s[lo:hi], quoted, nameQuoted, 6) {
		return 0, 0, false
	}
	// password=password, token = token: code passing a variable on.
	if v := strings.ToLower(s[lo:hi]); v == name || strings.HasSuffix(name, "_"+v) || strings.HasSuffix(name, "."+v) {
		return 0, 0, false
	}
	return lo, hi, true
}

// value finds a quoted (one line) or unquoted value at s[j:]. An unquoted
// value cannot start with what introduces a reference or an expression
// ($VAR, ${…}, $(…), `…`, <placeholder>, %s, :=, ==), nor with a byte of
// notFirst.
func value(s string, j int, notFirst string) (lo, hi int, quoted, ok bool) {
	if j >= len(s) {
		return 0, 0, false, false
	}
	if q := s[j]; q == '"' || q == '\'' {
		end := strings.IndexAny(s[j+1:], string(q)+"\n")
		if end < 0 || s[j+1+end] != q {
			return 0, 0, false, false
		}
		return j + 1, j + 1 + end, true, true
	}
	if strings.IndexByte(" \t\r\n\f\v\"'`[=$({<%", s[j]) >= 0 || strings.IndexByte(notFirst, s[j]) >= 0 {
		return 0, 0, false, false
	}
	k := j
	for k < len(s) && strings.IndexByte(" \t\r\n\f\v\"'`,;)]}", s[k]) < 0 {
		k++
	}
	return j, k, false, true
}

// plausible reports whether v, the value of a secret-named setting, may be
// a secret rather than a switch, a type, a variable or a call.
func plausible(v string, quoted, nameQuoted bool, minLen int) bool {
	if len(v) < minLen || notSecrets[strings.ToLower(v)] || envName().MatchString(v) {
		return false
	}
	if quoted {
		return true
	}
	// "name": bare is code (a map literal), never JSON.
	return !codeExpr().MatchString(v) && !(nameQuoted && ident().MatchString(v))
}

// asciiLower lower-cases ASCII letters only, so that offsets into the
// result are offsets into s.
func asciiLower(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return 'A' <= r && r <= 'Z' })
	if i < 0 {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Transcript returns a copy of t with secrets redacted from every text a
// replay shows (titles, prompts, replies, thinking, tool inputs and
// outputs) and the count of replacements. Embedded images are left alone.
func Transcript(t *transcript.Transcript) (*transcript.Transcript, int) {
	out := *t
	total := 0
	red := func(s string) string {
		r, n := String(s)
		total += n
		return r
	}
	out.Title = red(t.Title)
	out.FirstPrompt = red(t.FirstPrompt)
	out.CWD = red(t.CWD)
	out.Warnings = nil
	for _, w := range t.Warnings {
		out.Warnings = append(out.Warnings, red(w))
	}
	out.Items = make([]transcript.Item, len(t.Items))
	for i, it := range t.Items {
		it.Text = red(it.Text)
		if len(it.Input) > 0 {
			raw, n := JSON(it.Input)
			it.Input = raw
			total += n
		}
		out.Items[i] = it
	}
	return &out, total
}

// JSON redacts every string value of a JSON document, keeping its
// structure and numbers; a document that does not decode is redacted as
// text.
func JSON(raw json.RawMessage) (json.RawMessage, int) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		s, n := String(string(raw))
		return json.RawMessage(s), n
	}
	n, changed := 0, false
	v = walkJSON(v, &n, &changed)
	if !changed {
		return raw, 0
	}
	out, err := json.Marshal(v)
	if err != nil {
		s, m := String(string(raw))
		return json.RawMessage(s), m
	}
	return out, n
}

func walkJSON(v any, n *int, changed *bool) any {
	switch x := v.(type) {
	case string:
		s, m := String(x)
		*n += m
		*changed = *changed || s != x
		return s
	case []any:
		for i := range x {
			x[i] = walkJSON(x[i], n, changed)
		}
	case map[string]any:
		for k := range x {
			x[k] = walkJSON(x[k], n, changed)
		}
	}
	return v
}

// CountLabels adds to kinds how many [REDACTED:kind] labels s holds, by
// kind: what a page says it hid. A text that held such a label before
// redaction counts too.
func CountLabels(s string, kinds map[string]int) {
	for {
		i := strings.Index(s, labelPrefix)
		if i < 0 {
			return
		}
		s = s[i+len(labelPrefix):]
		j := strings.IndexByte(s, ']')
		if j < 0 || j > 40 {
			continue
		}
		kinds[s[:j]]++
		s = s[j+1:]
	}
}
