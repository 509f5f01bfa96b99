package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/musterhq/muster/internal/launcher"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/tui"
)

var _ tui.ExternalSource = (*dashboardBackend)(nil)

// External lists the background agents as `muster ls` does
// (externalSessions).
func (b *dashboardBackend) External(ctx context.Context, panes []proto.SessionInfo) ([]proto.SessionInfo, error) {
	return externalSessions(ctx, b.f, panes)
}

// externalSessions lists the background agents as `muster ls` does
// (externalRows), leaving out those the panes run, for the dashboard and
// `muster serve`'s Live page. A row whose name a pane or another agent
// already has goes by the supervisor's id: both select rows by name.
func externalSessions(ctx context.Context, f *Factory, panes []proto.SessionInfo) ([]proto.SessionInfo, error) {
	rows, errs := externalRows(ctx, f, panes)
	taken := map[string]bool{}
	for _, s := range panes {
		taken[s.Name] = true
	}
	for i := range rows {
		if taken[rows[i].Name] {
			rows[i].Name = rows[i].ID
		}
		taken[rows[i].Name] = true
	}
	redactSessions(rows)
	return rows, errors.Join(errs...)
}

// OpenExternal returns the live pane that runs the agent: one started
// with its attach command, or whose conversation it is. With none, it
// opens a pane running the attach command (what `muster ls` advises), so
// that the agent is joined, never started a second time on its
// conversation.
func (b *dashboardBackend) OpenExternal(ctx context.Context, agent proto.SessionInfo) (string, error) {
	x := agent.External
	if x == nil || x.Attach == "" {
		return "", fmt.Errorf("%s is not a background agent", agent.Name)
	}
	words, err := launcher.Words(x.Attach)
	if err != nil || len(words) == 0 {
		return "", fmt.Errorf("%s: cannot read its attach command %q", agent.Name, x.Attach)
	}
	attach := make([]string, len(words))
	for i, w := range words {
		attach[i] = w.Value
	}
	var list []proto.SessionInfo
	if err := b.call(ctx, proto.OpList, nil, &list); err != nil {
		return "", err
	}
	for _, s := range list {
		if proto.PaneWord(s.State) != proto.PaneLive {
			continue
		}
		if runsAttach(s, attach) || agent.NativeSessionID != "" && s.Provider == agent.Provider && s.NativeSessionID == agent.NativeSessionID {
			return s.Name, nil
		}
	}
	info, err := b.New(ctx, proto.NewArgs{Provider: agent.Provider, Dir: agent.CWD, Cmd: x.Attach})
	if err != nil {
		return "", err
	}
	return info.Name, nil
}
