package gemini

import (
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/termsignal"
)

var _ provider.RequestReader = Provider{}

// Request implements provider.RequestReader for Gemini CLI 0.61.0's
// titles: "✋  Action Required (dir)" while its tool confirmation ("Allow
// execution of …?") waits, "✦  Working… (dir)" or "◇  Ready (dir)" once
// it no longer does (research real-cli REPORT.md §3). The title does not
// tell a question from an approval; the confirmation is the only dialog
// seen, so it is an approval.
func (p Provider) Request(sig termsignal.Signal) (proto.EventKind, bool) {
	if sig.Kind != termsignal.KindTitle {
		return "", false
	}
	act, ok := p.TitleActivity(sig.Title)
	if !ok || act == "" {
		return "", false
	}
	if act == provider.ActivityAttention {
		return proto.KindApprovalRequested, true
	}
	return "", true
}
