package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/musterhq/muster/internal/blob"
	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/tui"
	"github.com/musterhq/muster/internal/web"
)

type serveOptions struct {
	Addr        string
	Port        int
	Public      bool
	Interactive bool
	Hosts       []string
}

// serveAddrFile, in the runtime directory, holds the address a running
// `muster serve` listens on (never its token), so that the URLs other
// commands print point at it although its port is random.
const serveAddrFile = "serve.addr"

// runningServe is the address of the `muster serve` that runs for this
// Muster home, or "".
func runningServe(dirs paths.Dirs) string {
	b, err := os.ReadFile(filepath.Join(dirs.Runtime, serveAddrFile))
	if err != nil {
		return ""
	}
	pid, addr, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
	if n, err := strconv.Atoi(pid); !ok || err != nil || unix.Kill(n, 0) != nil {
		return ""
	}
	return addr
}

// recordServe writes the address; the returned func removes it.
func recordServe(dirs paths.Dirs, addr string) func() {
	if dirs.EnsureRuntime() != nil {
		return func() {}
	}
	path := filepath.Join(dirs.Runtime, serveAddrFile)
	mine := fmt.Sprintf("%d %s\n", os.Getpid(), addr)
	if os.WriteFile(path, []byte(mine), 0o600) != nil {
		return func() {}
	}
	return func() {
		if b, err := os.ReadFile(path); err == nil && string(b) == mine {
			os.Remove(path)
		}
	}
}

func newServeCmd(f *Factory) *cobra.Command {
	return newServeCmdWith(f, nil)
}

func newServeCmdWith(f *Factory, runF func(*serveOptions) error) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve [--port PORT] [--addr HOST:PORT] [--public] [--interactive]",
		Short: "Serve a read-only web UI: history, replays, live sessions and published blobs",
		Long: "Serve the history (with search), replay pages, the live sessions of a running daemon, and\n" +
			"GET /api/v1/blob/ID for replays published with `muster replay --publish`. Secrets are\n" +
			"redacted on every page and in every answer, as in replays. It listens on loopback and\n" +
			"answers only requests addressed to a localhost name (or a --host name), on a random port\n" +
			"unless --port (or a port in --addr) is given, so other web pages cannot guess it.\n\n" +
			"Transcripts hold source code and secrets the redaction may miss: an address other than\n" +
			"loopback is refused unless --public is given. A public server prints, once, a URL with a\n" +
			"random token; opening it sets a cookie, and every request without that cookie (or an\n" +
			"Authorization: Bearer TOKEN header) is refused. It answers only to the names of the\n" +
			"address it listens on, its host name and --host names. Stop it with Ctrl-C.\n\n" +
			"Live panes open as terminals in the page (/term/NAME), read-only. --interactive lets the page\n" +
			"take control of a pane and type into it, and answer attention items from the Live page's\n" +
			"drawer (the agent's own options, sent only while its dialog is still the one shown) or\n" +
			"acknowledge them; every request then\n" +
			"needs the token of the printed URL, and a request that changes anything must come from the\n" +
			"server's own page. Terminals and pane screens need the token on every server.\n\n" +
			"The hosts of config.toml (muster host add) are listed too, their sessions as HOST:NAME, each\n" +
			"followed over one relay while a page is open; /term/HOST:NAME opens one, and the drawer\n" +
			"answers a host's items through the host. A host that is down is shown as such, with its\n" +
			"last listing, and never holds up this machine's sessions.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			host, port, err := net.SplitHostPort(o.Addr)
			if err != nil {
				return usagef("--addr %q: want HOST:PORT", o.Addr)
			}
			if cmd.Flags().Changed("port") {
				if o.Port < 1 || o.Port > 65535 {
					return usagef("--port %d: want 1–65535", o.Port)
				}
				if port != "0" && port != strconv.Itoa(o.Port) {
					return usagef("--addr %s and --port %d name two ports: give one", o.Addr, o.Port)
				}
				o.Addr = net.JoinHostPort(host, strconv.Itoa(o.Port))
			}
			if !o.Public && !web.IsLoopback(o.Addr) {
				return &UserError{Err: fmt.Errorf("--addr %s is not a loopback address", o.Addr),
					Hint: "serving transcripts beyond this machine needs --public", Code: ExitUsage}
			}
			if runF != nil {
				return runF(&o)
			}
			return runServe(cmd.Context(), f, &o)
		},
	}
	cmd.Flags().StringVar(&o.Addr, "addr", "127.0.0.1:0", "listen on HOST:PORT (port 0: a random one)")
	cmd.Flags().IntVar(&o.Port, "port", 0, "listen on this port instead of a random one")
	cmd.Flags().BoolVar(&o.Public, "public", false, "allow a non-loopback address; every request then needs the printed token")
	cmd.Flags().BoolVar(&o.Interactive, "interactive", false, "let the page type into panes and acknowledge attention items (every request then needs the printed token)")
	cmd.Flags().StringArrayVar(&o.Hosts, "host", nil, "also answer requests addressed to `NAME` (a DNS name of this machine, a proxy's)")
	return cmd
}

// daemonCall makes one call to a running daemon; serve never starts one.
func daemonCall(ctx context.Context, dirs paths.Dirs, op string, args, res any) error {
	c, err := client.Dial(ctx, dirs, Version)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Call(ctx, op, args, res)
}

// daemonStream opens a stream op on the running daemon and calls push with
// each result until ctx ends or the stream does.
func daemonStream[T any](ctx context.Context, dirs paths.Dirs, op string, args any, push func(T)) error {
	c, err := client.Dial(ctx, dirs, Version)
	if err != nil {
		return err
	}
	first, s, err := openStream[T](ctx, c, op, args)
	if err != nil {
		return err
	}
	return follow(first, s, push)
}

func runServe(ctx context.Context, f *Factory, o *serveOptions) error {
	dirs, err := f.Dirs()
	if err != nil {
		return err
	}
	idx, err := openHistory(ctx, f)
	if err != nil {
		return err
	}
	defer idx.Close()
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return Userf("listen on %s: %v", o.Addr, err)
	}
	defer ln.Close()
	env := transcriptEnv(f)
	sources := all.Sources()
	// The hosts as config.toml names them now; a broken config.toml
	// leaves the page to this machine (every command reports it).
	cfg, _ := f.Config()
	hostsOf := serveHosts{dirs: dirs, cfg: cfg}
	var remote web.Remote
	if len(cfg.Hosts) > 0 {
		remote = hostsOf
	}
	// Names on this machine never hold a ':' (the daemon refuses them):
	// one that does is HOST:NAME.
	onHost := func(name string) bool { return strings.Contains(name, ":") }
	hosts := o.Hosts
	if h, _, _ := net.SplitHostPort(o.Addr); h != "" && net.ParseIP(h) == nil {
		hosts = append(hosts, h) // the name it was asked to listen on
	}
	srv, err := web.New(web.Options{
		Index: idx, Sources: sources, Env: env, Blobs: blob.New(dirs.Blobs()), Version: Version,
		Addr: ln.Addr().String(), Hosts: hosts, Public: o.Public, Interactive: o.Interactive,
		Attach: func(ctx context.Context, a proto.AttachArgs) (web.PaneStream, error) {
			if onHost(a.Name) {
				return hostsOf.attach(ctx, a)
			}
			return attachStream(ctx, dirs, a)
		},
		Ack: func(ctx context.Context, ids []int64) (proto.AckResult, error) {
			res := proto.AckResult{Acknowledged: []int64{}, Already: []int64{}}
			local, err := hostsOf.ack(ctx, ids, &res)
			if err != nil || len(local) == 0 {
				return res, err
			}
			var mine proto.AckResult
			err = daemonCall(ctx, dirs, proto.OpAck, proto.AckArgs{IDs: local}, &mine)
			res.Acknowledged = append(res.Acknowledged, mine.Acknowledged...)
			res.Already = append(res.Already, mine.Already...)
			return res, err
		},
		Send: func(ctx context.Context, name, keys string) error {
			if onHost(name) {
				return hostsOf.send(ctx, name, keys)
			}
			return daemonCall(ctx, dirs, proto.OpSend, proto.SendArgs{Name: name, Text: keys}, nil)
		},
		Live: func(ctx context.Context) ([]proto.SessionInfo, error) {
			var list []proto.SessionInfo
			return list, daemonCall(ctx, dirs, proto.OpList, nil, &list)
		},
		Capture: func(ctx context.Context, name string) (string, error) {
			if onHost(name) {
				return hostsOf.capture(ctx, name)
			}
			var res proto.CaptureResult
			return res.Text, daemonCall(ctx, dirs, proto.OpCapture, proto.CaptureArgs{Name: name}, &res)
		},
		Attention: func(ctx context.Context) ([]proto.AttentionItem, error) {
			var items []proto.AttentionItem
			return items, daemonCall(ctx, dirs, proto.OpAttention, proto.AttentionArgs{}, &items)
		},
		Watch: func(ctx context.Context, push func(proto.WatchUpdate)) error {
			return daemonStream(ctx, dirs, proto.OpWatch, nil, push)
		},
		Preview: func(ctx context.Context, name string, push func(proto.PreviewScreen)) error {
			return daemonStream(ctx, dirs, proto.OpPreview, proto.PreviewArgs{Name: name}, push)
		},
		// The background agents as ls and the dashboard list them; the
		// page only lists them (it may start nothing).
		External: func(ctx context.Context, panes []proto.SessionInfo) ([]proto.SessionInfo, error) {
			return externalSessions(ctx, f, panes)
		},
		ExternalInterval: tui.ExternalInterval,
		Remote:           remote,
	})
	if err != nil {
		return err
	}
	defer recordServe(dirs, ln.Addr().String())()
	fmt.Fprintf(f.IO.ErrOut, "serving on %s (Ctrl-C to stop)\n", srv.URL())
	switch {
	case o.Public && o.Interactive:
		fmt.Fprintln(f.IO.ErrOut, "anyone with this URL can read your transcripts and type into your panes, over plain HTTP; it is not shown again")
	case o.Public:
		fmt.Fprintln(f.IO.ErrOut, "anyone with this URL can read your transcripts, over plain HTTP; it is not shown again")
	case o.Interactive:
		fmt.Fprintln(f.IO.ErrOut, "anyone with this URL can type into your panes; it is not shown again")
	}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Serve(ctx, ln) })
	// Keep the index fresh while serving; the first pass indexes.
	g.Go(func() error { return history.Watch(ctx, idx, sources, env, slog.New(slog.DiscardHandler)) })
	err = g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// paneStream is one attach on its own control connection, for a terminal
// view of `muster serve`.
type paneStream struct {
	c   *client.Client
	buf []byte
}

func attachStream(ctx context.Context, dirs paths.Dirs, a proto.AttachArgs) (*paneStream, error) {
	c, err := client.Dial(ctx, dirs, Version)
	if err != nil {
		return nil, err
	}
	var res proto.AttachResult
	if err := c.Call(ctx, proto.OpAttach, a, &res); err != nil {
		c.Close()
		return nil, err
	}
	return &paneStream{c: c}, nil
}

func (p *paneStream) Next() (byte, []byte, error) {
	typ, payload, err := proto.ReadFrame(p.c.Reader(), p.buf)
	if err == nil && cap(payload) > cap(p.buf) {
		p.buf = payload[:0]
	}
	return typ, payload, err
}

func (p *paneStream) Input(b []byte) error {
	return proto.WriteFrame(p.c.Conn(), proto.FrameInput, b)
}

func (p *paneStream) Resize(cols, rows int) error {
	return proto.WriteFrame(p.c.Conn(), proto.FrameResize, proto.ResizePayload(cols, rows))
}

func (p *paneStream) Close() error { return p.c.Close() }
