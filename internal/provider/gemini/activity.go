package gemini

import (
	"strings"
	"unicode/utf8"

	"github.com/musterhq/muster/internal/provider"
)

var _ provider.TitleReader = Provider{}

// TitleActivity implements provider.TitleReader: "◇  Ready (dir)" →
// waiting, "✦  Working… (dir)" → working, "✋  Action Required (dir)" →
// attention, "" (exit) → nothing known.
func (Provider) TitleActivity(title string) (string, bool) {
	title = strings.TrimSpace(title)
	if title == "" {
		return "", true
	}
	r, size := utf8.DecodeRuneInString(title)
	rest := strings.TrimSpace(title[size:])
	switch {
	case r == '◇' || strings.HasPrefix(title, "Ready"):
		return provider.ActivityWaiting, true
	case r == '✦' || strings.HasPrefix(title, "Working"):
		return provider.ActivityWorking, true
	case r == '✋' || strings.HasPrefix(title, "Action Required"):
		return provider.ActivityAttention, true
	}
	switch {
	case strings.HasPrefix(rest, "Ready"):
		return provider.ActivityWaiting, true
	case strings.HasPrefix(rest, "Working"):
		return provider.ActivityWorking, true
	case strings.HasPrefix(rest, "Action Required"):
		return provider.ActivityAttention, true
	}
	return "", false
}
