package cli

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/termtext"
)

// externalRows lists the agents the CLIs' own supervisors run (Claude
// Code's `claude --bg`, provider.BackgroundLister) as rows beside the
// panes in list, marked external; an agent whose conversation a live pane
// already runs is that pane's. A supervisor that cannot be asked is
// reported on stderr and left out: the panes are still listed.
func externalRows(ctx context.Context, f *Factory, list []proto.SessionInfo) []proto.SessionInfo {
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
	for _, s := range list {
		if s.NativeSessionID != "" && proto.PaneWord(s.State) == proto.PaneLive {
			inPane[s.Provider+":"+s.NativeSessionID] = true
		}
	}
	var rows []proto.SessionInfo
	for _, p := range all.Providers() {
		bl, ok := p.(provider.BackgroundLister)
		if !ok {
			continue
		}
		agents, err := bl.BackgroundAgents(ctx, env)
		if err != nil {
			fmt.Fprintf(f.IO.ErrOut, "muster: %s's background agents: %s\n", p.Name(), termtext.Line(err.Error()))
			continue
		}
		for _, a := range agents {
			if inPane[p.Name()+":"+a.SessionID] {
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
	return rows
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
