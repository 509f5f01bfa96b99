package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/blob"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/replay"
)

type replayOptions struct {
	Session  string
	Output   string
	Publish  bool
	NoRedact bool
}

func newReplayCmd(f *Factory) *cobra.Command {
	return newReplayCmdWith(f, nil)
}

func newReplayCmdWith(f *Factory, runF func(*replayOptions) error) *cobra.Command {
	var o replayOptions
	cmd := &cobra.Command{
		Use:   "replay SESSION [-o FILE] [--publish] [--no-redact]",
		Short: "Write a past session as one self-contained HTML page",
		Long: "Render a transcript as a single HTML file that needs no network (it opens from file://):\n" +
			"a scene per prompt, collapsible thinking, terminal-styled commands, diffs of edits, images.\n" +
			"Obvious secrets (API keys, tokens, private keys, passwords) are redacted unless --no-redact.\n" +
			"Without -o the file is replay-PROVIDER-ID.html in the current folder; -o - writes to stdout.\n" +
			"--publish stores the page as an immutable blob (same content, same id) that `muster serve`\n" +
			"serves at /api/v1/blob/ID, and prints the id and that URL (at serve's default address).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Session = args[0]
			if runF != nil {
				return runF(&o)
			}
			return runReplay(cmd.Context(), f, &o)
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "write the page to FILE (- for stdout)")
	cmd.Flags().BoolVar(&o.Publish, "publish", false, "store the page as an immutable blob and print its id and URL")
	cmd.Flags().BoolVar(&o.NoRedact, "no-redact", false, "keep secrets as recorded (the page says so)")
	return cmd
}

func runReplay(ctx context.Context, f *Factory, o *replayOptions) error {
	if o.Output != "" && o.Output != "-" {
		if fi, err := os.Stat(o.Output); err == nil && fi.IsDir() {
			return usagef("-o %s is a directory; give a file name", o.Output)
		}
	}
	t, err := resolveSession(ctx, f, o.Session)
	if err != nil {
		return err
	}
	subs := replay.LoadSubagents(ctx, all.Source(t.Provider), transcriptEnv(f), t)
	page, err := replay.HTML(t, replay.Options{NoRedact: o.NoRedact, Version: Version, Subagents: subs})
	if err != nil {
		return err
	}
	out := o.Output
	if out == "" && !o.Publish {
		id := t.ID
		if len(id) > 12 {
			id = id[:12]
		}
		out = "replay-" + fileSafe(t.Provider) + "-" + fileSafe(id) + ".html"
	}
	switch out {
	case "":
	case "-":
		if _, err := f.IO.Out.Write(page); err != nil {
			return err
		}
	default:
		if err := writeFileAtomic(out, page); err != nil {
			return Userf("write %s: %v", out, err)
		}
		fmt.Fprintf(f.IO.ErrOut, "wrote %s\n", out)
	}
	if o.Publish {
		dirs, err := f.Dirs()
		if err != nil {
			return err
		}
		id, err := blob.New(dirs.Blobs()).Put(page)
		if err != nil {
			return Userf("publish replay: %v", err)
		}
		if o.NoRedact {
			fmt.Fprintln(f.IO.ErrOut, "muster: published without redaction: the page may contain secrets")
		}
		if addr := runningServe(dirs); addr != "" {
			fmt.Fprintf(f.IO.Out, "%s\nhttp://%s/api/v1/blob/%s\n", id, addr, id)
		} else {
			fmt.Fprintf(f.IO.Out, "%s\n/api/v1/blob/%s\n", id, id)
			fmt.Fprintln(f.IO.ErrOut, "muster: no `muster serve` runs; start one and open this path at the address it prints")
		}
	}
	return nil
}

func fileSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
	if s == "" {
		return "session"
	}
	return s
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it into place, so a reader never sees half a page.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
