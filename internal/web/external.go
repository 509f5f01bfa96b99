package web

import (
	"context"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/launcher"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

// The Live page lists the agents the CLIs' own supervisors run (Claude
// Code's `claude --bg`) beside the panes, as `muster ls` and the
// dashboard do (Options.External): read-only rows marked external, with
// the command that opens one in a pane. The page never opens one itself:
// that starts a pane, and a page may start nothing.

// defaultExternalInterval is how long a listing of the background agents
// serves every page: a listing starts the CLI (`claude agents --json`,
// about a second on a loaded 2-core box), as the dashboard's
// ExternalInterval says.
const defaultExternalInterval = 5 * time.Second

// externalList is the last listing of the background agents, shared by
// every page and event, with one listing running at a time.
type externalList struct {
	list     func(ctx context.Context, panes []proto.SessionInfo) ([]proto.SessionInfo, error)
	interval time.Duration
	// turn is held while a listing runs.
	turn chan struct{}

	mu   sync.Mutex
	rows []proto.SessionInfo
	err  string
	at   time.Time
	// gen counts the listings, so that the hub wakes its pages only
	// after a new one.
	gen int
}

func newExternalList(list func(ctx context.Context, panes []proto.SessionInfo) ([]proto.SessionInfo, error), interval time.Duration) *externalList {
	if interval <= 0 {
		interval = defaultExternalInterval
	}
	return &externalList{list: list, interval: interval, turn: make(chan struct{}, 1)}
}

// get returns the agents that none of panes runs, listing them again
// when the last listing is older than the interval. A caller whose ctx
// ends while another listing runs gets the last one.
func (e *externalList) get(ctx context.Context, panes []proto.SessionInfo) ([]proto.SessionInfo, string) {
	select {
	case e.turn <- struct{}{}:
	case <-ctx.Done():
		rows, err, _ := e.last()
		return rows, err
	}
	defer func() { <-e.turn }()
	if rows, err, at := e.last(); !at.IsZero() && time.Since(at) < e.interval {
		return rows, err
	}
	rows, err := e.list(ctx, panes)
	msg := ""
	if err != nil {
		msg = "background agents: " + termtext.Line(err.Error())
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rows, e.err, e.at = rows, msg, time.Now()
	e.gen++
	return rows, msg
}

// last is the last listing, without listing.
func (e *externalList) last() (rows []proto.SessionInfo, err string, at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rows, e.err, e.at
}

func (e *externalList) generation() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gen
}

// externalSession is an agent's row as the page shows it: the
// dashboard's mark (↗ external and the CLI's word for the process), the
// CLI's word for the agent as its activity, and the command `muster ls`
// advises to open it in a pane.
func externalSession(si proto.SessionInfo) liveSession {
	x := si.External
	ls := liveSession{Name: si.Name, Provider: si.Provider, State: proto.PaneExternal, Status: "↗ external",
		CWD: si.CWD, Title: termtext.Line(si.Title), External: true}
	if x.Status != "" {
		ls.Status += " " + termtext.Line(x.Status)
	}
	ls.Activity = termtext.Line(x.State)
	ls.RunBy = termtext.Line(x.Supervisor)
	if ls.RunBy == "" {
		ls.RunBy = "its CLI"
	}
	if x.Attach != "" {
		ls.Open = "muster new " + termtext.Line(si.Provider) + " --cmd " + launcher.ShellQuote(termtext.Line(x.Attach))
	}
	return ls
}
