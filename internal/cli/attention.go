package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/host"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

type attentionOptions struct {
	All    bool
	JSON   bool
	Follow bool
}

func newAttentionCmd(f *Factory) *cobra.Command {
	return newAttentionCmdWith(f, nil)
}

func newAttentionCmdWith(f *Factory, runF func(*attentionOptions) error) *cobra.Command {
	var o attentionOptions
	cmd := &cobra.Command{
		Use:   "attention [--all] [--json]",
		Short: "List what needs you: approvals, questions, failures, disconnects, long runs that finished",
		Long: "List the attention drawer: open items, oldest first. An item resolves when its run moves on\n" +
			"or when you acknowledge it with `muster ack ID`; --all also lists items resolved in the last 24 hours.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Follow && o.All {
				return usagef("--follow and --all do not go together: --follow prints the open items, then each change")
			}
			if runF != nil {
				return runF(&o)
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			if o.Follow {
				return followAttention(cmd.Context(), f, c, o.JSON)
			}
			defer c.Close()
			var items []proto.AttentionItem
			if err := c.Call(cmd.Context(), proto.OpAttention, proto.AttentionArgs{All: o.All}, &items); err != nil {
				return err
			}
			// Every host's drawer too, asked at once, each bounded.
			if cfg, err := f.Config(); err == nil && len(cfg.Hosts) > 0 {
				d, err := f.Dirs()
				if err != nil {
					return err
				}
				remote, down := host.AttentionAll(cmd.Context(), d, cfg, Version, o.All, hostListTimeout)
				items = append(items, remote...)
				for _, s := range down {
					fmt.Fprintf(f.IO.ErrOut, "muster: host %s %s: %s\n", s.Name, s.State, termtext.Line(s.Reason))
				}
			}
			if o.JSON {
				if items == nil {
					items = []proto.AttentionItem{}
				}
				return writeJSON(f.IO.Out, items)
			}
			printAttention(f.IO.Out, items, o.All, f.now())
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.All, "all", false, "also list items resolved in the last 24 hours")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print a JSON array (with --follow: one JSON object a line)")
	cmd.Flags().BoolVarP(&o.Follow, "follow", "f", false, "print the open items, then each item as it opens or resolves, until interrupted")
	return cmd
}

// Events of `muster attention --follow`.
const (
	followOpen     = "open"     // open when the command started
	followNew      = "new"      // opened since
	followResolved = "resolved" // resolved since
)

// followLine is one line of `muster attention --follow --json`.
type followLine struct {
	Event string              `json:"event"`
	Item  proto.AttentionItem `json:"item"`
}

// followAttention prints the drawer's open items, then every item that
// opens or resolves, from the daemon's watch stream, until ctx ends or
// the daemon stops.
func followAttention(ctx context.Context, f *Factory, c *client.Client, asJSON bool) error {
	first, s, err := openStream[proto.WatchUpdate](ctx, c, proto.OpWatch, nil)
	if err != nil {
		return err
	}
	var writeErr error
	print := func(event string, it proto.AttentionItem) {
		if writeErr != nil {
			return
		}
		if asJSON {
			writeErr = writeJSONLine(f.IO.Out, followLine{Event: event, Item: it})
			return
		}
		line := fmt.Sprintf("%-8s %d %s %s", event, it.ID, itemSession(it), termtext.Line(it.Reason))
		if m := termtext.Clip(it.Message, 80); m != "" {
			line += ": " + m
		}
		if event == followResolved && it.Resolution != "" {
			line += " (" + termtext.Line(it.Resolution) + ")"
		}
		_, writeErr = fmt.Fprintln(f.IO.Out, line)
	}
	open := map[int64]bool{}
	var before int64 // items up to this id were there when it started
	started := false
	err = follow(first, s, func(u proto.WatchUpdate) {
		if u.Attention == nil {
			return // unchanged
		}
		if !started {
			started = true
			for _, it := range u.Attention {
				before = max(before, it.ID)
				if it.Open {
					open[it.ID] = true
					print(followOpen, it)
				}
			}
			return
		}
		listed := map[int64]bool{}
		for _, it := range u.Attention {
			listed[it.ID] = true
			switch {
			case it.Open && !open[it.ID]:
				open[it.ID] = true
				print(followNew, it)
			case !it.Open && open[it.ID]:
				delete(open, it.ID)
				print(followResolved, it)
			case !it.Open && it.ID > before:
				// Opened and resolved between two pushes.
				before = it.ID
				print(followNew, it)
				print(followResolved, it)
			}
			before = max(before, it.ID)
		}
		for id := range open {
			if !listed[id] {
				delete(open, id)
				print(followResolved, proto.AttentionItem{ID: id})
			}
		}
	})
	if writeErr != nil {
		return writeErr
	}
	if err != nil || ctx.Err() != nil {
		return err
	}
	return Userf("the daemon stopped")
}

func printAttention(w io.Writer, items []proto.AttentionItem, all bool, now time.Time) {
	if len(items) == 0 {
		fmt.Fprintln(w, "Nothing needs your attention.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "ID\tSESSION\tREASON\tAGE\tMESSAGE"
	if all {
		header += "\tSTATUS"
	}
	fmt.Fprintln(tw, header)
	for _, it := range items {
		id := strconv.FormatInt(it.ID, 10)
		if it.Host != "" {
			id = it.Host + ":" + id // what `muster ack` takes
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", termtext.Line(id), itemSession(it), termtext.Line(it.Reason), itemAge(it.OpenedAt, now),
			termtext.Clip(it.Message, 60))
		if all {
			status := "open"
			if !it.Open {
				status = "resolved: " + termtext.Line(it.Resolution)
			}
			line += "\t" + status
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

// itemAge renders how long ago an RFC 3339 time was, coarsely.
func itemAge(ts string, now time.Time) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return "?"
	}
	return age(max(0, now.Sub(t)))
}

// itemSession names an item's session for a terminal.
func itemSession(it proto.AttentionItem) string {
	name := it.SessionName
	if name == "" {
		name = it.SessionID
	}
	if it.Host != "" {
		name = it.Host + ":" + name
	}
	return termtext.Line(name)
}
