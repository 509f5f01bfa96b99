package codex

import (
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/termsignal"
)

var (
	_ provider.RequestReader = Provider{}
	_ provider.StatusReader  = Provider{}
)

// Request implements provider.RequestReader for Codex 0.169.0's OSC 7501
// statuses (app=codex): `state=blocked:app=codex:kind=permission` while
// its approval dialog ("Would you like to run the following command?")
// waits, working, idle, done or error once it no longer does (research
// real-cli REPORT.md §2; issue 23 measured blocked in a Muster pane). Only
// kind=permission was seen; a kind that names a question is the user's
// answer Codex waits for, any other kind its approval.
func (Provider) Request(sig termsignal.Signal) (proto.EventKind, bool) {
	if sig.Kind != termsignal.KindAgentStatus {
		return "", false
	}
	if app := sig.Param("app"); app != "" && app != "codex" {
		return "", false
	}
	switch sig.State {
	case "blocked":
		switch sig.Param("kind") {
		case "question", "input", "user_input", "request_user_input", "elicitation":
			return proto.KindInputRequested, true
		}
		return proto.KindApprovalRequested, true
	case "working", "idle", "done", "error", "clear":
		return "", true
	}
	return "", false
}

// Status implements provider.StatusReader: state=working while a dialog
// waits is its answer, whichever key gave it (Codex fires no hook between
// its approval and the command's end). Its ends are read elsewhere: done
// and error with the Stop hook or the rollout, idle after an Esc with the
// key and the rollout's turn_aborted.
func (Provider) Status(sig termsignal.Signal, state proto.RunState) proto.EventKind {
	if sig.Kind != termsignal.KindAgentStatus || sig.State != "working" {
		return ""
	}
	if app := sig.Param("app"); app != "" && app != "codex" {
		return ""
	}
	if state == proto.StateWaitingApproval || state == proto.StateWaitingInput {
		return proto.KindRunning
	}
	return ""
}
