package codex

import (
	"strings"
	"unicode/utf8"

	"github.com/musterhq/muster/internal/provider"
)

var _ provider.TitleReader = Provider{}

// TitleActivity implements provider.TitleReader: "⠋ dir" (a braille
// spinner) → working, "[ ! ] Action Required | dir" → attention, any other
// title → waiting, "" → nothing known.
func (Provider) TitleActivity(title string) (string, bool) {
	title = strings.TrimSpace(title)
	if title == "" {
		return "", true
	}
	if strings.Contains(title, "Action Required") {
		return provider.ActivityAttention, true
	}
	if r, size := utf8.DecodeRuneInString(title); r >= 0x2800 && r <= 0x28FF && (size == len(title) || title[size] == ' ') {
		return provider.ActivityWorking, true
	}
	return provider.ActivityWaiting, true
}
