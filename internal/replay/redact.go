package replay

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/musterhq/muster/internal/transcript"
)

// A secretPattern finds one kind of credential. When keep > 0, the first
// keep submatches are kept and the rest of the match is replaced.
type secretPattern struct {
	label string
	re    *regexp.Regexp
	keep  int
	// hint is a cheap substring test that must pass before the regexp runs
	// (lower-cased when fold is set).
	hint string
	fold bool
}

// patterns are the obvious credential shapes. They are deliberately
// conservative about what they match (prefixes vendors document, word
// boundaries) and deliberately broad about what follows a match. A
// replacement never matches any pattern again, so redaction is idempotent.
var patterns = []secretPattern{
	{label: "private-key", hint: "PRIVATE KEY-----", re: regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|[A-Za-z0-9+/=\s\\]*)`)},
	{label: "anthropic-key", hint: "sk-ant-", re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_\-]{20,}`)},
	{label: "openai-key", hint: "sk-", re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}`)},
	{label: "github-token", hint: "_", re: regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,}`)},
	{label: "github-token", hint: "github_pat_", re: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{22,}`)},
	{label: "aws-key", hint: "A", re: regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{label: "slack-token", hint: "xox", re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`)},
	{label: "google-key", hint: "AIza", re: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`)},
	{label: "gitlab-token", hint: "glpat-", re: regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`)},
	{label: "npm-token", hint: "npm_", re: regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}`)},
	{label: "stripe-key", hint: "_live_", re: regexp.MustCompile(`\b[sr]k_live_[A-Za-z0-9]{20,}`)},
	{label: "jwt", hint: "eyJ", re: regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`)},
	{label: "bearer-token", hint: "bearer", fold: true, keep: 1, re: regexp.MustCompile(`(?i)(\bbearer\s+)[A-Za-z0-9._~+/\-]{16,}=*`)},
	{label: "url-password", hint: "://", keep: 1, re: regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.\-]*://[^\s:/@\[\]]+:)[^\s@/\[][^\s@/]*(@)`)},
	{label: "secret", fold: true, keep: 1, re: regexp.MustCompile(`(?i)(\b(?:api[_\-]?key|secret[_\-]?key|access[_\-]?token|auth[_\-]?token|client[_\-]?secret|password|passwd)["']?\s*[:=]\s*["']?)[^\s"'\[][^\s"',;]{7,}`)},
}

// secretHints are the lower-cased keywords the "secret" pattern needs.
var secretHints = []string{"key", "token", "secret", "passw"}

// Redact replaces credential-shaped substrings of s with [REDACTED:kind]
// and returns how many it replaced.
func Redact(s string) (string, int) {
	n := 0
	var lower string
	for _, p := range patterns {
		if p.label == "secret" {
			if lower == "" {
				lower = strings.ToLower(s)
			}
			hit := false
			for _, h := range secretHints {
				if strings.Contains(lower, h) {
					hit = true
					break
				}
			}
			if !hit {
				continue
			}
		} else if p.fold {
			if lower == "" {
				lower = strings.ToLower(s)
			}
			if !strings.Contains(lower, p.hint) {
				continue
			}
		} else if p.hint != "" && !strings.Contains(s, p.hint) {
			continue
		}
		label := "[REDACTED:" + p.label + "]"
		s = p.re.ReplaceAllStringFunc(s, func(m string) string {
			n++
			if p.keep == 0 {
				return label
			}
			sub := p.re.FindStringSubmatch(m)
			if len(sub) <= p.keep {
				return label
			}
			out := strings.Join(sub[1:1+p.keep], "") + label
			if len(sub) > 1+p.keep {
				out += strings.Join(sub[1+p.keep:], "")
			}
			return out
		})
		if n > 0 {
			lower = ""
		}
	}
	return s, n
}

// RedactTranscript returns a copy of t with secrets redacted from every
// text a replay shows (titles, prompts, replies, thinking, tool inputs and
// outputs) and the count of replacements. Embedded images are left alone.
func RedactTranscript(t *transcript.Transcript) (*transcript.Transcript, int) {
	out := *t
	total := 0
	red := func(s string) string {
		r, n := Redact(s)
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
			raw, n := redactJSON(it.Input)
			it.Input = raw
			total += n
		}
		out.Items[i] = it
	}
	return &out, total
}

// redactJSON redacts every string value of a JSON document, keeping its
// structure; a document that does not decode is redacted as text.
func redactJSON(raw json.RawMessage) (json.RawMessage, int) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		s, n := Redact(string(raw))
		return json.RawMessage(s), n
	}
	n := 0
	v = walkJSON(v, &n)
	if n == 0 {
		return raw, 0
	}
	out, err := json.Marshal(v)
	if err != nil {
		s, m := Redact(string(raw))
		return json.RawMessage(s), m
	}
	return out, n
}

func walkJSON(v any, n *int) any {
	switch x := v.(type) {
	case string:
		s, m := Redact(x)
		*n += m
		return s
	case []any:
		for i := range x {
			x[i] = walkJSON(x[i], n)
		}
	case map[string]any:
		for k := range x {
			x[k] = walkJSON(x[k], n)
		}
	}
	return v
}
