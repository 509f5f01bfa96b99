package codex

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/provider"
)

var _ provider.LimitFinder = Provider{}

// Codex 0.171.0 at its usage limit (HTTP 429, error type
// usage_limit_reached; measured with the real CLI against the fake model,
// e2e/realcli TestMusterCodexLimit): one request, no retry, no hook; the
// screen says "■ You’ve hit your usage limit. Upgrade to Pro (…), visit …
// or try again at 4:11 AM." (local time; a later day adds the date), then
// an "Approaching rate limits / Switch to gpt-6-luna …?" dialog; OSC 7501
// state=error fails the run. The rollout records the turn's
// task_complete with error {message: the same words, codex_error_info:
// "usage_limit_exceeded"}, after a token_count whose rate_limits window at
// used_percent 100 has resets_at in Unix seconds.
const (
	limitInfo   = "usage_limit_exceeded"
	limitWords  = "hit your usage limit"
	rateDialog  = "Approaching rate limits"
	limitPrompt = "continue"
)

// ReadLimit implements provider.LimitReader for a failure that carries
// Codex's own words (Codex fires no hook when a turn fails, so the words
// come from its rollout or screen through FindLimit).
func (Provider) ReadLimit(failure string, at time.Time) (time.Time, bool) {
	if !strings.Contains(normalizeQuotes(failure), limitWords) && !strings.HasPrefix(failure, limitInfo) {
		return time.Time{}, false
	}
	return tryAgainAt(failure, at), true
}

// ContinuePrompt implements provider.LimitReader: Codex goes on with the
// conversation it stopped when prompted.
func (Provider) ContinuePrompt() string { return limitPrompt }

// Continue implements provider.LimitFinder: Esc first closes the rate
// limit dialog Codex puts up after the limit, whose highlighted option
// (Enter) would switch the model.
func (Provider) Continue(screen string) (keys, text string) {
	if strings.Contains(screen, rateDialog) {
		return "\x1b", limitPrompt
	}
	return "", limitPrompt
}

// FindLimit implements provider.LimitFinder: the rollout's last turn
// (task_complete with codex_error_info usage_limit_exceeded, the reset from
// its rate_limits), else the screen's words. A limit always ends Codex's
// turn, so an open run has none.
func (Provider) FindLimit(q provider.LimitQuery) (provider.Limit, bool) {
	if q.Open {
		return provider.Limit{}, false
	}
	if path := FindRecentRollout(q.Env, q.NativeID, q.At); path != "" {
		if l, ok := rolloutLimit(path, q.At); ok {
			return l, true
		}
	}
	if q.Screen == nil {
		return provider.Limit{}, false
	}
	screen := strings.Join(strings.Fields(normalizeQuotes(q.Screen())), " ")
	i := strings.LastIndex(screen, limitWords)
	if i < 0 {
		return provider.Limit{}, false
	}
	msg := screen[max(i-8, 0):]
	if j := strings.Index(msg, "M."); j >= 0 {
		msg = msg[:j+2]
	}
	return provider.Limit{ResetsAt: tryAgainAt(msg, q.At), Evidence: "screen: " + limitWords, Message: msg}, true
}

// rolloutTail bounds what FindLimit reads of a rollout: the last turn's
// records are a few KB, though one line may carry a long instruction.
const rolloutTail = 512 << 10

// rolloutLimit reads the limit of the rollout's last turn, if it ended at
// one.
func rolloutLimit(path string, at time.Time) (provider.Limit, bool) {
	f, err := os.Open(path)
	if err != nil {
		return provider.Limit{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return provider.Limit{}, false
	}
	off := max(fi.Size()-rolloutTail, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return provider.Limit{}, false
	}
	var (
		found   bool
		l       provider.Limit
		resets  time.Time // of the last token_count at its limit
		limitTS time.Time
	)
	for line := range bytes.SplitSeq(buf, []byte{'\n'}) {
		if !bytes.Contains(line, []byte("task_complete")) && !bytes.Contains(line, []byte("task_started")) && !bytes.Contains(line, []byte("rate_limits")) {
			continue
		}
		var rec struct {
			Type    string `json:"type"`
			Payload struct {
				Type  string `json:"type"`
				Error *struct {
					Message string `json:"message"`
					Info    string `json:"codex_error_info"`
				} `json:"error"`
				RateLimits map[string]json.RawMessage `json:"rate_limits"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Type != "event_msg" {
			continue
		}
		switch rec.Payload.Type {
		case "task_started":
			found, resets = false, time.Time{}
		case "token_count":
			if t := spentWindowReset(rec.Payload.RateLimits); !t.IsZero() {
				resets = t
			}
		case "task_complete":
			e := rec.Payload.Error
			found = e != nil && e.Info == limitInfo
			if found {
				l = provider.Limit{Evidence: "rollout task_complete (codex_error_info " + limitInfo + ")", Message: e.Message}
				limitTS = resets
			}
		}
	}
	if !found {
		return provider.Limit{}, false
	}
	l.ResetsAt = limitTS
	if l.ResetsAt.IsZero() {
		l.ResetsAt = tryAgainAt(l.Message, at)
	} else {
		l.Evidence += ", token_count rate_limits resets_at"
	}
	return l, true
}

// spentWindowReset returns the latest reset of the rate-limit windows used
// up (used_percent ≥ 100), zero when none is.
func spentWindowReset(limits map[string]json.RawMessage) time.Time {
	var latest time.Time
	for _, raw := range limits {
		var w struct {
			Used     *float64 `json:"used_percent"`
			ResetsAt *int64   `json:"resets_at"`
		}
		if json.Unmarshal(raw, &w) != nil || w.Used == nil || w.ResetsAt == nil || *w.Used < 100 {
			continue
		}
		if t := time.Unix(*w.ResetsAt, 0); t.After(latest) {
			latest = t
		}
	}
	return latest
}

var tryAgainRE = regexp.MustCompile(`try again at (?:([A-Z][a-z]{2})[a-z]* (\d{1,2})(?:st|nd|rd|th)?,? (?:(\d{4}) )?)?(\d{1,2}):(\d{2}) ?([AP]M)`)

// tryAgainAt reads Codex's "try again at 4:11 AM" (or "… at Oct 7th, 2026
// 3:45 PM"), which Codex prints in its local time: the first such time
// after at, in at's zone. Zero when the words name none.
func tryAgainAt(msg string, at time.Time) time.Time {
	m := tryAgainRE.FindStringSubmatch(strings.Join(strings.Fields(msg), " "))
	if m == nil {
		return time.Time{}
	}
	hour, _ := strconv.Atoi(m[4])
	minute, _ := strconv.Atoi(m[5])
	if hour < 1 || hour > 12 || minute > 59 {
		return time.Time{}
	}
	hour %= 12
	if m[6] == "PM" {
		hour += 12
	}
	loc := at.Location()
	if m[1] != "" {
		month, err := time.Parse("Jan", m[1])
		day, _ := strconv.Atoi(m[2])
		if err != nil || day < 1 || day > 31 {
			return time.Time{}
		}
		year := at.Year()
		if m[3] != "" {
			year, _ = strconv.Atoi(m[3])
		}
		return time.Date(year, month.Month(), day, hour, minute, 0, 0, loc)
	}
	t := time.Date(at.Year(), at.Month(), at.Day(), hour, minute, 0, 0, loc)
	if !t.After(at) {
		t = t.AddDate(0, 0, 1)
	}
	return t
}

// normalizeQuotes turns Codex's typographic apostrophe ("You’ve") into the
// plain one.
func normalizeQuotes(s string) string { return strings.ReplaceAll(s, "’", "'") }
