package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/replay"
	"github.com/musterhq/muster/internal/transcript"
	"github.com/musterhq/muster/internal/tui"
)

// runDashboard is `muster` with no command: the dashboard on a terminal,
// the help otherwise. Attaching leaves the dashboard, runs the attach, and
// comes back to it on detach.
func runDashboard(f *Factory, cmd *cobra.Command) error {
	if !f.IO.IsStdinTTY() || !f.IO.IsStdoutTTY() {
		return cmd.Help()
	}
	ctx := cmd.Context()
	// Start the daemon when none runs: its start-up sweep is what offers
	// the sessions to restore.
	c, err := f.Client(ctx)
	if err != nil {
		return err
	}
	b := &dashboardBackend{f: f, c: c}
	defer b.Close()
	if cfg, err := f.Config(); err == nil && len(cfg.Hosts) > 0 {
		if d, err := f.Dirs(); err == nil {
			b.feed = startHostFeed(d, cfg)
			defer b.feed.stop()
		}
	}
	home, _ := os.UserHomeDir()
	wd, _ := os.Getwd()
	opts := tui.Options{Backend: b, Home: home, Dir: wd, DetachKey: config.DefaultDetachKey, NoColor: os.Getenv("NO_COLOR") != "",
		Bell: config.Default().NotifyBell()}
	// A broken config.toml is reported by the attach itself.
	if cfg, err := f.Config(); err == nil {
		if cfg.Keys.Detach != "" {
			opts.DetachKey = cfg.Keys.Detach
		}
		opts.Bell = cfg.NotifyBell()
	}
	for {
		name, state, err := tui.Run(ctx, opts)
		if err != nil {
			return err
		}
		if name == "" {
			return nil
		}
		opts.Select, opts.Notice, opts.State = name, "", state
		attach := func() error { return runAttach(ctx, f, attachOptions{Name: name}) }
		if l, n, ok := b.onHost(name); ok {
			attach = func() error { return attachFromDashboard(ctx, f, l, n) }
		}
		if err := attach(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			opts.Notice = "attach " + name + ": " + dashboardErrorText(err)
		}
	}
}

// dashboardErrorText is the one line of an error meant for the user.
func dashboardErrorText(err error) string {
	if ue, ok := errors.AsType[*UserError](err); ok {
		return ue.Err.Error()
	}
	return err.Error()
}

// dashboardBackend serves the dashboard over one control connection,
// redialling (without starting a daemon) after the connection breaks.
type dashboardBackend struct {
	f  *Factory
	mu sync.Mutex
	c  *client.Client
	// feed, when hosts are configured, adds their sessions (HOST:NAME)
	// and items to the watch stream; calls naming one go to its host.
	feed *hostFeed
}

// Hosts is each host's state (tui.HostSource); none without hosts.
func (b *dashboardBackend) Hosts() []tui.HostState {
	if b.feed == nil {
		return nil
	}
	return b.feed.Hosts()
}

func (b *dashboardBackend) call(ctx context.Context, op string, args, out any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	reused := b.c != nil
	for {
		if b.c == nil {
			c, err := b.f.RunningClient(ctx)
			if err != nil {
				return err
			}
			b.c = c
		}
		err := b.c.Call(ctx, op, args, out)
		if _, refused := errors.AsType[*proto.Error](err); err == nil || refused || ctx.Err() != nil {
			if ctx.Err() != nil {
				b.c.Close()
				b.c = nil
			}
			return err
		}
		// The connection is in an unknown state: drop it. The daemon
		// closes connections left idle for a minute (while a session is
		// attached, say), so a kept one that broke is dialled again once.
		b.c.Close()
		b.c = nil
		if !reused {
			return err
		}
		reused = false
	}
}

// Close closes the connection.
func (b *dashboardBackend) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.c != nil {
		b.c.Close()
		b.c = nil
	}
}

// Watch opens a watch stream on a connection of its own, which ends with
// ctx. A daemon that crashed is started again (the dashboard is one of
// the clients racing to do so, and waits for the winner); one stopped on
// purpose is not started behind the user's back.
func (b *dashboardBackend) Watch(ctx context.Context) (proto.WatchUpdate, tui.WatchStream, error) {
	c, err := b.f.RunningClient(ctx)
	if errors.Is(err, client.ErrDaemonNotRunning) || errors.Is(err, client.ErrConnectionLost) {
		c, err = b.restartCrashed(ctx, err)
	}
	if err != nil {
		return proto.WatchUpdate{}, nil, err
	}
	first, s, err := openStream[proto.WatchUpdate](ctx, c, proto.OpWatch, nil)
	if err != nil {
		return first, nil, err
	}
	if b.feed != nil {
		m, merged := newMergedWatch(first, watchStream{s}, b.feed)
		return merged, m, nil
	}
	return first, watchStream{s}, nil
}

// restartCrashed starts a daemon when the last one died without stopping
// (its lock file still names it; a clean stop empties it), and returns
// notRunning otherwise.
func (b *dashboardBackend) restartCrashed(ctx context.Context, notRunning error) (*client.Client, error) {
	dirs, err := b.f.Dirs()
	if err != nil {
		return nil, err
	}
	if h := dirs.ReadDaemonLock(); h.PID == 0 {
		return nil, notRunning
	}
	// Notes go nowhere: the dashboard owns the terminal; the daemon logs them.
	return client.EnsureFrom(ctx, b.f.Executable, dirs, Version)
}

// watchStream is a watch, which the daemon ends only when it stops.
type watchStream struct{ *stream[proto.WatchUpdate] }

func (s watchStream) Next() (proto.WatchUpdate, error) {
	u, err := s.stream.Next()
	if errors.Is(err, io.EOF) {
		err = errors.New("the daemon closed the connection")
	}
	return u, err
}

func (b *dashboardBackend) Ack(ctx context.Context, ids []int64, all bool) (proto.AckResult, error) {
	var res proto.AckResult
	if b.feed != nil {
		local, err := b.ackOnHosts(ctx, ids, all, &res)
		if err != nil || (!all && len(local) == 0) {
			return res, err
		}
		ids = local
	}
	var mine proto.AckResult
	err := b.call(ctx, proto.OpAck, proto.AckArgs{IDs: ids, All: all}, &mine)
	res.Acknowledged, res.Already = append(mine.Acknowledged, res.Acknowledged...), append(mine.Already, res.Already...)
	return res, err
}

// environ is the caller's environment as ops new and resume take it.
func environ() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

func (b *dashboardBackend) Resume(ctx context.Context, names []string, all bool) ([]tui.ResumeOutcome, error) {
	var res []tui.ResumeOutcome
	if b.feed != nil {
		var local []string
		for _, n := range names {
			if ok, err := b.hostAction(ctx, n, "resume"); !ok {
				local = append(local, n)
			} else {
				o := tui.ResumeOutcome{Name: n, Resumed: err == nil}
				if err != nil {
					o.Reason = err.Error()
				}
				res = append(res, o)
			}
		}
		if !all && len(local) == 0 {
			return res, nil
		}
		names = local
	}
	env := environ()
	cols, rows := termSize()
	var out []proto.ResumeOutcome
	if err := b.call(ctx, proto.OpResume, proto.ResumeArgs{Names: names, All: all, Env: env, Cols: cols, Rows: rows}, &out); err != nil {
		return nil, err
	}
	for _, o := range out {
		res = append(res, tui.ResumeOutcome{Name: o.Name, Resumed: o.Resumed, Reason: o.Reason})
	}
	return res, nil
}

func (b *dashboardBackend) Kill(ctx context.Context, name string) error {
	if ok, err := b.hostAction(ctx, name, "kill"); ok {
		return err
	}
	return b.call(ctx, proto.OpKill, proto.Target{Name: name}, nil)
}

// Preview opens a preview stream on a connection of its own, which ends
// with ctx.
func (b *dashboardBackend) Preview(ctx context.Context, name string) (proto.PreviewScreen, tui.PreviewStream, error) {
	if l, n, ok := b.onHost(name); ok {
		return previewOn(ctx, l, n, name)
	}
	c, err := b.f.RunningClient(ctx)
	if err != nil {
		return proto.PreviewScreen{}, nil, err
	}
	first, s, err := openStream[proto.PreviewScreen](ctx, c, proto.OpPreview, proto.PreviewArgs{Name: name})
	if err != nil {
		return first, nil, err
	}
	return first, s, nil
}

// Choices are the built-in providers (looked up on PATH), the launchers of
// config.toml and the shell.
func (b *dashboardBackend) Choices(ctx context.Context) ([]tui.Choice, error) {
	var provs []tui.ProviderLaunch
	for _, name := range all.LaunchNames() {
		l, _ := all.Launch(name)
		provs = append(provs, tui.ProviderLaunch{Name: name, Executables: l.Executables, Install: l.Install})
	}
	var launchers []tui.Choice
	var cfgErr error
	cfg, err := b.f.Config()
	if err != nil {
		cfgErr = err
	}
	for _, l := range cfg.Launchers {
		launchers = append(launchers, tui.Choice{Name: l.Name, Kind: "launcher", Command: l.Command, Resume: l.Resume})
	}
	sh := os.Getenv("SHELL")
	if sh == "" {
		sh = "/bin/sh"
	}
	return tui.ChoicesFrom(provs, launchers, sh, exec.LookPath), cfgErr
}

func (b *dashboardBackend) New(ctx context.Context, a proto.NewArgs) (proto.SessionInfo, error) {
	a.Env = environ()
	a.Cols, a.Rows = termSize()
	var info proto.SessionInfo
	return info, b.call(ctx, proto.OpNew, a, &info)
}

func (b *dashboardBackend) Rename(ctx context.Context, name, newName string) error {
	if h, _, ok := strings.Cut(name, ":"); ok {
		newName = strings.TrimPrefix(newName, h+":")
	}
	if ok, err := b.hostAction(ctx, name, "rename", newName); ok {
		return err
	}
	return b.call(ctx, proto.OpRename, proto.RenameArgs{Name: name, NewName: newName}, nil)
}

func (b *dashboardBackend) Autocontinue(ctx context.Context, name string, on bool) error {
	word := map[bool]string{true: "on", false: "off"}[on]
	if ok, err := b.hostAction(ctx, name, "autocontinue", word); ok {
		return err
	}
	return b.call(ctx, proto.OpAutocontinue, proto.AutocontinueArgs{Name: name, On: on}, nil)
}

func (b *dashboardBackend) Explain(ctx context.Context, name string) (proto.Explanation, error) {
	var x proto.Explanation
	if l, n, ok := b.onHost(name); ok {
		err := runOn(ctx, l, &x, "explain", "--json", "--", n)
		x.Name = name
		return x, err
	}
	return x, b.call(ctx, proto.OpExplain, proto.Target{Name: name}, &x)
}

// History refreshes the history index without progress output (the
// dashboard owns the terminal) and lists or searches it.
func (b *dashboardBackend) History(ctx context.Context, query string) ([]tui.HistoryRow, error) {
	idx, err := openHistory(ctx, b.f)
	if err != nil {
		return nil, err
	}
	defer idx.Close()
	if _, err := idx.Refresh(ctx, all.Sources(), transcriptEnv(b.f), history.RefreshOptions{}); err != nil {
		return nil, fmt.Errorf("refresh history: %w", err)
	}
	const limit = 200
	var hits []history.Hit
	if query != "" {
		if hits, err = idx.Search(ctx, history.SearchQuery{Text: query, Limit: limit}); err != nil {
			return nil, err
		}
	} else {
		list, err := idx.List(ctx, history.Query{Limit: limit})
		if err != nil {
			return nil, err
		}
		for _, s := range list {
			hits = append(hits, history.Hit{Session: s})
		}
	}
	rows := make([]tui.HistoryRow, 0, len(hits))
	for _, h := range hits {
		s := h.Session
		title := s.Title
		if title == "" {
			title = transcript.Headline(s.FirstPrompt)
		}
		when := s.EndedAt
		if when.IsZero() {
			when = s.StartedAt
		}
		l, ok := all.Launch(s.Provider)
		rows = append(rows, tui.HistoryRow{
			Ref: s.Provider + ":" + s.ID, Provider: s.Provider, ID: s.ID,
			Title: redactSecrets(title), CWD: s.CWD, Snippet: h.Snippet, When: when,
			Prompts: s.PromptCount, Tools: s.ToolCallCount,
			Resumable: ok && l.ResumeArgs != nil && s.ParentID == "",
		})
	}
	return rows, nil
}

// Transcript reads one conversation, as `muster show` does but without
// progress output.
func (b *dashboardBackend) Transcript(ctx context.Context, ref string) (*transcript.Transcript, error) {
	idx, err := openHistory(ctx, b.f)
	if err != nil {
		return nil, err
	}
	defer idx.Close()
	env := transcriptEnv(b.f)
	res, err := idx.Resolve(ctx, ref, all.Sources(), env)
	if err != nil {
		return nil, err
	}
	return history.Load(ctx, res, env)
}

// WriteReplay writes the conversation's redacted replay into the
// directory the dashboard was started in, named as `muster replay` names
// it.
func (b *dashboardBackend) WriteReplay(ctx context.Context, ref string) (string, error) {
	t, err := b.Transcript(ctx, ref)
	if err != nil {
		return "", err
	}
	page, err := replay.HTML(t, replay.Options{Version: Version})
	if err != nil {
		return "", err
	}
	id := t.ID
	if len(id) > 12 {
		id = id[:12]
	}
	out, err := filepath.Abs("replay-" + fileSafe(t.Provider) + "-" + fileSafe(id) + ".html")
	if err != nil {
		return "", err
	}
	if err := writeFileAtomic(out, page); err != nil {
		return "", fmt.Errorf("write %s: %w", out, err)
	}
	return out, nil
}
