package gemini

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/provider"
)

var _ provider.LimitFinder = Provider{}

// Gemini CLI 0.61.0 at its quota (HTTP 429 RESOURCE_EXHAUSTED with a
// per-day QuotaFailure, the Gemini API's answer to a spent daily quota;
// measured with the real CLI against the fake model, e2e/realcli
// TestMusterGeminiLimit): one request, then a dialog holds the turn open,
// "Usage limit reached for all Pro models." (or the model's name), with
// "Access resets at 4:11 AM UTC." when the error carried a retry delay
// (not for a daily quota), and "● 1. Keep trying / 2. Stop". No hook fires
// and the chat file records nothing until the user answers, so the screen
// is the only evidence.
const (
	limitWords  = "Usage limit reached for "
	keepTrying  = "1. Keep trying"
	limitPrompt = "continue"
)

// ReadLimit implements provider.LimitReader for a failure that carries
// Gemini CLI's words.
func (Provider) ReadLimit(failure string, at time.Time) (time.Time, bool) {
	if !strings.Contains(failure, limitWords) {
		return time.Time{}, false
	}
	return accessResetsAt(failure, at), true
}

// ContinuePrompt implements provider.LimitReader.
func (Provider) ContinuePrompt() string { return limitPrompt }

// Continue implements provider.LimitFinder: while the limit dialog still
// holds the turn, Enter on its highlighted "Keep trying" is Gemini CLI's
// own retry of the same request; once the dialog is gone, a prompt.
func (Provider) Continue(screen string) (keys, text string) {
	if limitDialog(screen) {
		return "", ""
	}
	return "", limitPrompt
}

// FindLimit implements provider.LimitFinder from the screen: the limit
// dialog, open or not.
func (Provider) FindLimit(q provider.LimitQuery) (provider.Limit, bool) {
	if q.Screen == nil {
		return provider.Limit{}, false
	}
	screen := q.Screen()
	if !limitDialog(screen) {
		return provider.Limit{}, false
	}
	flat := strings.Join(strings.Fields(strings.ReplaceAll(screen, "│", " ")), " ")
	msg := flat[strings.LastIndex(flat, limitWords):]
	if i := strings.Index(msg, " /stats"); i >= 0 {
		msg = msg[:i]
	}
	return provider.Limit{ResetsAt: accessResetsAt(msg, q.At), Evidence: "screen: limit dialog (" + strings.TrimSpace(limitWords) + ")", Message: msg}, true
}

// limitDialog reports whether screen shows the limit dialog with its
// Keep trying option highlighted.
func limitDialog(screen string) bool {
	return strings.Contains(screen, limitWords) && strings.Contains(screen, "● "+keepTrying)
}

var resetsRE = regexp.MustCompile(`Access resets at (\d{1,2}):(\d{2})\s?([AP]M)(?:\s([A-Z]{2,5}))?`)

// accessResetsAt reads "Access resets at 4:11 AM UTC." (Intl en-US, local
// time with its zone's short name): the first such time after at, in UTC
// when the message says UTC or GMT, else in at's zone. Zero when the
// message names none.
func accessResetsAt(msg string, at time.Time) time.Time {
	m := resetsRE.FindStringSubmatch(strings.Join(strings.Fields(msg), " "))
	if m == nil {
		return time.Time{}
	}
	hour, _ := strconv.Atoi(m[1])
	minute, _ := strconv.Atoi(m[2])
	if hour < 1 || hour > 12 || minute > 59 {
		return time.Time{}
	}
	hour %= 12
	if m[3] == "PM" {
		hour += 12
	}
	loc := at.Location()
	if m[4] == "UTC" || m[4] == "GMT" {
		loc = time.UTC
	}
	local := at.In(loc)
	t := time.Date(local.Year(), local.Month(), local.Day(), hour, minute, 0, 0, loc)
	if !t.After(local) {
		t = t.AddDate(0, 0, 1)
	}
	return t
}
