package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/iostreams"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/termtext"
	"github.com/musterhq/muster/internal/transcript"
)

type historyOptions struct {
	JSON     bool
	Provider string
	Search   string
	Since    string
	Limit    int
	Rescan   bool
	Now      func() time.Time
}

func newHistoryCmd(f *Factory) *cobra.Command {
	return newHistoryCmdWith(f, nil)
}

func newHistoryCmdWith(f *Factory, runF func(*historyOptions) error) *cobra.Command {
	o := historyOptions{Now: time.Now}
	cmd := &cobra.Command{
		Use:   "history [--json] [--provider P] [--search TEXT] [--since D] [--limit N]",
		Short: "List past agent sessions found on disk",
		Long: "List the conversations that coding agents left on disk, newest first. The first run indexes\n" +
			"every transcript (progress is shown on a terminal); later runs re-read only files that changed.\n" +
			"Works without the daemon. --since takes a duration (30m, 24h, 7d, 2w) or a date (2026-01-31).\n" +
			"Sessions are named PROVIDER:ID; `muster show`, `replay` accept that, a unique id prefix or a path.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Provider != "" && all.Source(o.Provider) == nil {
				return usagef("unknown provider %q (known: %s)", o.Provider, strings.Join(all.Names(), ", "))
			}
			if o.Limit < 0 {
				return usagef("--limit must be 0 (no limit) or more, not %d", o.Limit)
			}
			if _, err := parseSince(o.Since, o.Now()); err != nil {
				return usagef("--since: %v", err)
			}
			if runF != nil {
				return runF(&o)
			}
			return runHistory(cmd.Context(), f, &o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print a JSON array of sessions")
	cmd.Flags().StringVar(&o.Provider, "provider", "", "only this provider ("+strings.Join(all.Names(), ", ")+")")
	cmd.Flags().StringVar(&o.Search, "search", "", "only sessions whose title, first prompt, folder, id or model contains TEXT (any case)")
	cmd.Flags().StringVar(&o.Since, "since", "", "only sessions active since a duration ago (7d, 24h) or a date (2026-01-31)")
	cmd.Flags().IntVar(&o.Limit, "limit", 50, "show at most N sessions (0: all)")
	cmd.Flags().BoolVar(&o.Rescan, "rescan", false, "compare every transcript file with the index, not only changed folders")
	return cmd
}

// historyEntry is one element of `muster history --json`: the session
// summary plus the reference other commands accept.
type historyEntry struct {
	Ref string `json:"ref"`
	transcript.Session
}

func runHistory(ctx context.Context, f *Factory, o *historyOptions) error {
	since, _ := parseSince(o.Since, o.Now())
	idx, err := openHistory(ctx, f)
	if err != nil {
		return err
	}
	defer idx.Close()
	sources := historySources(o.Provider)
	if err := refreshHistory(ctx, f, idx, sources, history.RefreshOptions{Rescan: o.Rescan}); err != nil {
		return err
	}
	q := history.Query{Provider: o.Provider, Search: o.Search, Since: since, Limit: o.Limit}
	list, err := idx.List(ctx, q)
	if err != nil {
		return err
	}
	if o.JSON {
		out := make([]historyEntry, 0, len(list))
		for _, s := range list {
			out = append(out, historyEntry{Ref: s.Provider + ":" + s.ID, Session: s})
		}
		return writeJSON(f.IO.Out, out)
	}
	if len(list) == 0 {
		fmt.Fprintln(f.IO.Out, "No sessions found.")
		return nil
	}
	printHistory(f.IO.Out, list, o.Now())
	if o.Limit > 0 && len(list) == o.Limit {
		if n, err := idx.Count(ctx, history.Query{Provider: o.Provider, Search: o.Search, Since: since}); err == nil && n > len(list) {
			fmt.Fprintf(f.IO.ErrOut, "%d more; use --limit 0 to list all\n", n-len(list))
		}
	}
	return nil
}

func printHistory(w io.Writer, list []transcript.Session, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTIVE\tSESSION\tPROMPTS\tTOOLS\tTITLE")
	for _, s := range list {
		when := s.EndedAt
		if when.IsZero() {
			when = s.StartedAt
		}
		title := s.Title
		if title == "" {
			title = transcript.Headline(s.FirstPrompt)
		}
		if s.ParentID != "" {
			title = "↳ " + title
		}
		fmt.Fprintf(tw, "%s\t%s:%s\t%d\t%d\t%s\n", historyAge(when, now), s.Provider, shortID(s.ID), s.PromptCount, s.ToolCallCount,
			termtext.Clip(title, 70))
	}
	tw.Flush()
}

// shortID keeps enough of an id to be a usable, usually unique, prefix.
func shortID(id string) string {
	id = termtext.Line(id)
	for i := range id {
		if i >= 12 {
			return id[:i]
		}
	}
	return id
}

func historyAge(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return t.Local().Format("2006-01-02")
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	case d < 14*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
	return t.Local().Format("2006-01-02")
}

// parseSince reads --since: "" (no bound), a duration with an s/m/h/d/w
// unit (or a Go duration such as 1h30m), a date (local midnight) or an
// RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if n, unit := strings.TrimRight(s, "dw"), s[len(strings.TrimRight(s, "dw")):]; len(unit) == 1 && n != "" {
		v, err := strconv.ParseFloat(n, 64)
		if err == nil && v >= 0 && v <= 36500 {
			day := 24 * time.Hour
			if unit == "w" {
				day *= 7
			}
			return now.Add(-time.Duration(v * float64(day))), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q is negative", s)
		}
		return now.Add(-d), nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, now.Location()); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (30m, 24h, 7d, 2w) nor a date (2026-01-31)", s)
}

// openHistory opens the discovery index in the store; the daemon may have
// the same database open (WAL).
func openHistory(ctx context.Context, f *Factory) (*history.Index, error) {
	dirs, err := f.Dirs()
	if err != nil {
		return nil, err
	}
	if err := dirs.EnsureState(); err != nil {
		return nil, err
	}
	return history.Open(ctx, dirs.Database(), Version)
}

func historySources(provider string) []transcript.Source {
	if provider != "" {
		if s := all.Source(provider); s != nil {
			return []transcript.Source{s}
		}
	}
	return all.Sources()
}

func transcriptEnv(f *Factory) transcript.Env {
	getenv := f.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return transcript.Env{Home: home, Getenv: getenv}
}

// refreshHistory brings the index up to date, with progress on a terminal.
// Files that cannot be read are reported in one line and skipped.
func refreshHistory(ctx context.Context, f *Factory, idx *history.Index, sources []transcript.Source, opts history.RefreshOptions) error {
	p := newProgress(f.IO, "indexing transcripts")
	opts.Progress = p.update
	st, err := idx.Refresh(ctx, sources, transcriptEnv(f), opts)
	p.done()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return fmt.Errorf("refresh history: %w", err)
	}
	if len(st.Errors) > 0 && f.IO.IsStderrTTY() {
		fmt.Fprintf(f.IO.ErrOut, "muster: %d transcript problem(s); first: %s\n", len(st.Errors), termtext.Line(st.Errors[0]))
	}
	return nil
}

// progress prints "label n/total" on a terminal's stderr, at most ten times
// a second, and clears it when done. It stays silent when stderr is not a
// terminal or the work is small.
type progress struct {
	w       io.Writer
	on      bool
	label   string
	last    time.Time
	printed bool
}

func newProgress(ios *iostreams.IOStreams, label string) *progress {
	return &progress{w: ios.ErrOut, on: ios.IsStderrTTY(), label: label}
}

func (p *progress) update(done, total int) {
	if !p.on || total < 20 {
		return
	}
	now := time.Now()
	if done != total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	p.printed = true
	fmt.Fprintf(p.w, "\r\x1b[K%s %d/%d", p.label, done, total)
}

func (p *progress) done() {
	if p.printed {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// resolveSession turns a SESSION argument into a loaded transcript,
// refreshing the index first unless the argument is a path.
func resolveSession(ctx context.Context, f *Factory, ref string) (*transcript.Transcript, error) {
	sources := all.Sources()
	r, err := history.ParseRef(ref, all.Names())
	if err != nil {
		return nil, usagef("%v", err)
	}
	idx, err := openHistory(ctx, f)
	if err != nil {
		return nil, err
	}
	defer idx.Close()
	if r.Path == "" {
		if err := refreshHistory(ctx, f, idx, historySources(r.Provider), history.RefreshOptions{}); err != nil {
			return nil, err
		}
	}
	env := transcriptEnv(f)
	res, err := idx.Resolve(ctx, ref, sources, env)
	if err != nil {
		if ae, ok := errors.AsType[*history.AmbiguousError](err); ok {
			return nil, &UserError{Err: ae, Hint: "give more of the id, or PROVIDER:ID", Code: ExitError}
		}
		if errors.Is(err, history.ErrNoSession) {
			return nil, &UserError{Err: err, Hint: "run `muster history` to list sessions", Code: ExitError}
		}
		return nil, Userf("%v", err)
	}
	t, err := history.Load(ctx, res, env)
	if err != nil {
		return nil, Userf("%v", err)
	}
	return t, nil
}
