package claude

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/provider"
)

var _ provider.LimitFinder = Provider{}

// ReadLimit implements provider.LimitReader. Claude Code ends a turn that
// hit the plan's usage limit with the StopFailure hook, error
// "rate_limit" (claudehook maps it to a failed event whose message starts
// with the error), and its last assistant message says when the limit
// resets, in the user's time zone or the one it names: "5-hour limit
// reached ∙ resets 3pm", "You've hit your limit · resets 3pm
// (Europe/Berlin)", "resets Oct 7, 1am (UTC)".
func (Provider) ReadLimit(failure string, at time.Time) (time.Time, bool) {
	if !strings.HasPrefix(failure, "rate_limit") {
		return time.Time{}, false
	}
	return resetTime(failure, at), true
}

// ContinuePrompt implements provider.LimitReader: a plain prompt; Claude
// Code resumes the conversation it stopped.
func (Provider) ContinuePrompt() string { return "continue" }

var resetsRE = regexp.MustCompile(`(?i)\bresets?\s+(?:at\s+)?(?:([A-Z][a-z]{2})\s+(\d{1,2}),?\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)(?:\s*\(([^)]+)\))?`)

// resetTime reads the reset time of a limit message: the first such time
// after at, in the zone the message names (else at's). Zero when the
// message says none.
func resetTime(msg string, at time.Time) time.Time {
	m := resetsRE.FindStringSubmatch(msg)
	if m == nil {
		return time.Time{}
	}
	loc := at.Location()
	if m[6] != "" {
		l, err := time.LoadLocation(strings.TrimSpace(m[6]))
		if err != nil {
			return time.Time{}
		}
		loc = l
	}
	hour, _ := strconv.Atoi(m[3])
	minute := 0
	if m[4] != "" {
		minute, _ = strconv.Atoi(m[4])
	}
	if hour < 1 || hour > 12 || minute > 59 {
		return time.Time{}
	}
	hour %= 12
	if strings.EqualFold(m[5], "pm") {
		hour += 12
	}
	local := at.In(loc)
	if m[1] != "" {
		month, err := time.Parse("Jan", m[1])
		day, _ := strconv.Atoi(m[2])
		if err != nil || day < 1 || day > 31 {
			return time.Time{}
		}
		t := time.Date(local.Year(), month.Month(), day, hour, minute, 0, 0, loc)
		if t.Before(local.Add(-24 * time.Hour)) {
			t = t.AddDate(1, 0, 0) // "resets Jan 2" said on Dec 30
		}
		return t
	}
	t := time.Date(local.Year(), local.Month(), local.Day(), hour, minute, 0, 0, loc)
	if !t.After(local) {
		t = t.AddDate(0, 0, 1)
	}
	return t
}

// Claude Code 2.1.332 with an API key sends a 429 that carries the unified
// limit headers (anthropic-ratelimit-unified-status: rejected) again up to
// CLAUDE_CODE_MAX_RETRIES times (default 10, about 3 minutes), and while
// it waits its spinner line says which limit and when it resets, from the
// anthropic-ratelimit-unified-reset header, in the process's time zone:
// "5-hour limit reached · retrying in 16s (4:10am) · attempt 7/10" ("Dec
// 6, 5am" when more than a day away). The StopFailure hook that ends the
// turn says no reset ("rate_limit: API Error: Request rejected (429) ·
// …") and the transcript records none of the attempts (measured in
// e2e/realcli TestMusterClaudeLimit), so the retry line on the screen is
// the only place that names the reset: a last resort, read while the run
// is open.
var retryLineRE = regexp.MustCompile(`([A-Za-z0-9-]+(?: [A-Za-z]+)? limit) reached · retrying in [^·(]+\(([^)]+)\) · attempt (\d+)/(\d+)`)

// FindLimit implements provider.LimitFinder from the retry line, for a run
// still open (the line is gone once the turn failed). The finding is
// Retrying: the turn goes on until Claude Code gives up and fires
// StopFailure.
func (Provider) FindLimit(q provider.LimitQuery) (provider.Limit, bool) {
	if !q.Open || q.Screen == nil {
		return provider.Limit{}, false
	}
	flat := strings.Join(strings.Fields(q.Screen()), " ")
	all := retryLineRE.FindAllStringSubmatch(flat, -1)
	if all == nil {
		return provider.Limit{}, false
	}
	m := all[len(all)-1]
	at := q.At
	if tz := q.Env.Get("TZ"); tz != "" {
		if loc, err := time.LoadLocation(strings.TrimPrefix(tz, ":")); err == nil {
			at = at.In(loc)
		}
	}
	return provider.Limit{
		ResetsAt: retryResetTime(m[2], at),
		Evidence: "screen: retry line (" + m[1] + " reached)",
		Message:  m[0],
		Retrying: true,
	}, true
}

// retryResetTime reads the time of a retry line, "4:10am", "Dec 6, 5am"
// or "Jan 2, 2027, 5:30am", in at's zone (Claude Code's own).
func retryResetTime(s string, at time.Time) time.Time {
	s = yearRE.ReplaceAllString(s, "")
	return resetTime("resets "+s, at)
}

var yearRE = regexp.MustCompile(`,\s*\d{4}\b`)

// Continue implements provider.LimitFinder: a prompt; Claude Code holds no
// dialog at its limit.
func (p Provider) Continue(string) (keys, text string) { return "", p.ContinuePrompt() }
