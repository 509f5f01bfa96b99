package cli

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/launcher"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/termtext"
)

// externalRows lists the agents the CLIs' own supervisors run (Claude
// Code's `claude --bg`, provider.BackgroundLister) as rows beside the
// panes in list, marked external; an agent whose conversation a live pane
// already runs, or that a live pane has joined with the CLI's attach, is
// that pane's. A supervisor that cannot be asked is left out, with its
// error: the panes and the other supervisors' agents are still listed.
// `muster ls` and the dashboard both list them through this.
func externalRows(ctx context.Context, f *Factory, list []proto.SessionInfo) ([]proto.SessionInfo, []error) {
	// The user's environment as this command sees it (tests give their
	// own): a variable it has not set stays unset, since Claude Code reads
	// an empty CLAUDE_CONFIG_DIR as a directory ("").
	own := []string{"HOME", "PATH", "TMPDIR", "CLAUDE_CONFIG_DIR"}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(own, k) {
			env = append(env, kv)
		}
	}
	for _, k := range own {
		if v := f.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	inPane := map[string]bool{}
	var live []proto.SessionInfo
	for _, s := range list {
		if proto.PaneWord(s.State) != proto.PaneLive {
			continue
		}
		live = append(live, s)
		if s.NativeSessionID != "" {
			inPane[s.Provider+":"+s.NativeSessionID] = true
		}
	}
	var rows []proto.SessionInfo
	var errs []error
	for _, p := range all.Providers() {
		bl, ok := p.(provider.BackgroundLister)
		if !ok {
			continue
		}
		agents, err := bl.BackgroundAgents(ctx, env)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s's background agents: %s", p.Name(), termtext.Line(err.Error())))
			continue
		}
		for _, a := range agents {
			if inPane[p.Name()+":"+a.SessionID] || slices.ContainsFunc(live, func(s proto.SessionInfo) bool { return runsAttach(s, a.Attach) }) {
				continue
			}
			row := proto.SessionInfo{
				ID: a.ID, Name: cmp.Or(a.Name, a.ID), Provider: p.Name(), Pane: proto.PaneExternal, State: proto.PaneExternal,
				Status: a.Status, PID: a.PID, CWD: a.CWD, NativeSessionID: a.SessionID, NativeConfirmed: true,
				Command: strings.Join(a.Attach, " "),
				External: &proto.ExternalAgent{
					Supervisor: p.Name() + " agents", ID: a.ID, Status: a.Status, State: a.State, Attach: strings.Join(a.Attach, " "),
				},
			}
			if !a.StartedAt.IsZero() {
				row.CreatedAt = a.StartedAt.UTC().Format(time.RFC3339)
			}
			rows = append(rows, row)
		}
	}
	return rows, errs
}

// runsAttach reports whether the pane s runs attach, the command that
// joins a background agent (`claude attach ID`, as ls advises it with
// `muster new --cmd`): the agent is then the pane's, whose conversation
// it shows without a hook having named it yet. The program is compared
// by its base name, so that a pane started with its full path counts.
func runsAttach(s proto.SessionInfo, attach []string) bool {
	if len(attach) == 0 {
		return false
	}
	words, err := launcher.Words(s.Command)
	if err != nil || len(words) != len(attach) {
		return false
	}
	for i, w := range words {
		want := attach[i]
		if i == 0 {
			if filepath.Base(w.Value) != filepath.Base(want) {
				return false
			}
			continue
		}
		if w.Value != want {
			return false
		}
	}
	return true
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
