package codex

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/termsignal"
	"github.com/musterhq/muster/internal/transcript"
)

var (
	_ provider.SessionRouter = Provider{}
	_ provider.SignalReader  = Provider{}
)

// IsAgentProcess implements provider.SessionRouter: a process whose command
// name or executable is "codex" or "codex-…".
func (Provider) IsAgentProcess(comm, exe string) bool {
	for _, n := range []string{comm, filepath.Base(exe)} {
		if n == "codex" || strings.HasPrefix(n, "codex-") {
			return true
		}
	}
	return false
}

// SharedProcess implements provider.SessionRouter: `codex app-server …`
// (the background daemon a TUI starts unless run with --no-daemon, and its
// pid-update-loop) and `codex mcp-server`. Measured with 0.169.0 in two
// shell panes of one directory: the daemon was a child of the first pane's
// TUI, held the rollout of every session open, and ran the hooks of both
// panes; the TUIs held no rollout open.
func (p Provider) SharedProcess(argv []string) bool {
	i := 0
	for i < len(argv) && !p.IsAgentProcess(filepath.Base(argv[i]), argv[i]) {
		i++ // an interpreter running the codex script
	}
	for i++; i < len(argv); i++ {
		a := argv[i]
		switch {
		case valueFlags[a]:
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a == "app-server" || a == "mcp-server"
		}
	}
	return false
}

// valueFlags are Codex's global options that take a separate value, which
// is not a subcommand.
var valueFlags = map[string]bool{
	"-c": true, "--config": true, "-m": true, "--model": true, "-p": true, "--profile": true,
	"-s": true, "--sandbox": true, "-a": true, "--ask-for-approval": true, "-C": true, "--cd": true,
	"-i": true, "--image": true, "--add-dir": true, "--enable": true, "--disable": true, "--local-provider": true,
}

// SessionFile implements provider.SessionRouter: the rollout, which the
// Codex process of the session holds open.
func (Provider) SessionFile(env transcript.Env, sessionID string) (string, error) {
	return FindRollout(env, sessionID)
}

// SessionInfo implements provider.SessionRouter from the rollout's
// session_meta. Interactive is routing's rule (seed 004, rule 4), stricter
// than SessionMeta.Interactive: see tuiSession.
func (Provider) SessionInfo(path string) (provider.SessionInfo, error) {
	m, x, err := readMeta(path)
	if err != nil {
		return provider.SessionInfo{}, err
	}
	if m.CWD == "" {
		return provider.SessionInfo{}, errors.New("read rollout meta: session_meta has no cwd")
	}
	src := m.Source
	switch {
	case x.subagent:
		src = "subagent"
	case x.otherSource:
		src = "other"
	}
	return provider.SessionInfo{
		CWD:         m.CWD,
		Interactive: tuiSession(m.Originator, src, x.threadSource),
		Originator:  m.Originator,
		Source:      src,
	}, nil
}

// tuiSession reports whether a session is an interactive Codex TUI session
// started by the user: originator codex-tui (any source but exec, mcp or a
// sub-agent), or the older codex_cli_rs with source cli. codex exec
// (originator codex_exec, source exec), sub-agent threads (source object,
// thread_source other than user), MCP servers and desktop or IDE app
// threads (other originators) do not qualify.
func tuiSession(originator, source, threadSource string) bool {
	switch source {
	case "exec", "mcp", "subagent":
		return false
	}
	if threadSource != "" && threadSource != "user" {
		return false
	}
	switch originator {
	case "codex-tui":
		return true
	case "codex_cli_rs":
		return source == "cli"
	}
	return false
}

// Resumes implements provider.SessionRouter: argv runs `codex … resume …
// <id>`; a shell command line among the arguments is split into words.
func (Provider) Resumes(argv []string, id string) bool {
	var words []string
	for _, a := range argv {
		words = append(words, strings.Fields(a)...)
	}
	for i, a := range words {
		if a != "resume" {
			continue
		}
		for _, b := range words[i+1:] {
			if b == id {
				return true
			}
		}
		return false
	}
	return false
}

// TurnFailed implements provider.SignalReader. Codex 0.169 fires no hook
// when a turn fails (no Stop, no StopFailure: the run would stay "running"
// until the next prompt), but it reports `ESC]7501;state=error:app=codex`
// on the failed turn, after the UserPromptSubmit hook that started it.
// Every other status is left to the hooks: `done` is followed by Stop,
// `blocked` by PermissionRequest.
func (Provider) TurnFailed(sig termsignal.Signal) bool {
	if sig.Kind != termsignal.KindAgentStatus || sig.State != "error" {
		return false
	}
	app := sig.Param("app")
	return app == "" || app == "codex"
}
