package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/musterhq/muster/internal/blob"
	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/web"
)

func init() { register(newServeCmd) }

type serveOptions struct {
	Addr   string
	Public bool
}

func newServeCmd(f *Factory) *cobra.Command {
	return newServeCmdWith(f, nil)
}

func newServeCmdWith(f *Factory, runF func(*serveOptions) error) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:PORT] [--public]",
		Short: "Serve a read-only web UI: history, replays, live sessions and published blobs",
		Long: "Serve the history (with search), replay pages, the live sessions of a running daemon, and\n" +
			"GET /api/v1/blob/ID for replays published with `muster replay --publish`. It listens on\n" +
			"loopback and answers only requests addressed to a localhost name. Transcripts can hold\n" +
			"secrets and source code: an address other than loopback is refused unless --public is\n" +
			"given, which also accepts any Host header. Stop it with Ctrl-C.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, _, err := net.SplitHostPort(o.Addr); err != nil {
				return usagef("--addr %q: want HOST:PORT", o.Addr)
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
	cmd.Flags().StringVar(&o.Addr, "addr", "127.0.0.1:7777", "listen on HOST:PORT")
	cmd.Flags().BoolVar(&o.Public, "public", false, "allow a non-loopback address and any Host header")
	return cmd
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
	env := transcriptEnv(f)
	sources := all.Sources()
	srv := web.New(web.Options{
		Index: idx, Sources: sources, Env: env, Blobs: blob.New(dirs.Blobs()), Public: o.Public, Version: Version,
		Live: func(ctx context.Context) ([]proto.SessionInfo, error) {
			c, err := client.Dial(dirs)
			if err != nil {
				return nil, err
			}
			defer c.Close()
			if d, ok := ctx.Deadline(); ok {
				c.Conn().SetDeadline(d)
			}
			var list []proto.SessionInfo
			if err := c.Call("ls", nil, &list); err != nil {
				return nil, err
			}
			return list, nil
		},
	})
	fmt.Fprintf(f.IO.ErrOut, "serving on http://%s (Ctrl-C to stop)\n", ln.Addr())
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
