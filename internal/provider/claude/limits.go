package claude

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

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
