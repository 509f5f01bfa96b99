package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/iostreams"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/store"
	"github.com/musterhq/muster/internal/termtext"
	"github.com/musterhq/muster/internal/transcript"
)

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

// openHistory opens the discovery index, the file the daemon's watcher
// keeps fresh; the daemon may have it open too (WAL).
func openHistory(ctx context.Context, f *Factory) (*history.Index, error) {
	dirs, err := f.Dirs()
	if err != nil {
		return nil, err
	}
	err = dirs.EnsureState()
	if err == nil {
		var idx *history.Index
		if idx, err = history.Open(ctx, dirs.HistoryDatabase(), Version); err == nil {
			if r := idx.Store().Recovered; r != nil {
				fmt.Fprintln(f.IO.ErrOut, "muster: "+r.Notice())
			}
			return idx, nil
		}
	}
	// A state dir that cannot be written still holds an index to read.
	if _, serr := os.Stat(dirs.HistoryDatabase()); serr == nil && store.IsReadOnly(err) {
		idx, rerr := history.OpenReadOnly(ctx, dirs.HistoryDatabase(), Version)
		if rerr == nil {
			fmt.Fprintf(f.IO.ErrOut, "muster: %s cannot be written; showing the index as it was last written\n", dirs.State)
			return idx, nil
		}
	}
	return nil, err
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
	_, err := refreshHistoryStats(ctx, f, idx, sources, opts)
	return err
}

// refreshHistoryStats is refreshHistory, with what the refresh did.
func refreshHistoryStats(ctx context.Context, f *Factory, idx *history.Index, sources []transcript.Source, opts history.RefreshOptions) (history.RefreshStats, error) {
	if idx.ReadOnly() {
		return history.RefreshStats{}, nil
	}
	p := newProgress(f.IO, "indexing transcripts")
	opts.Progress = p.update
	st, err := idx.Refresh(ctx, sources, transcriptEnv(f), opts)
	p.done()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return st, err
		}
		return st, fmt.Errorf("refresh history: %w", err)
	}
	if len(st.Errors) > 0 && f.IO.IsStderrTTY() {
		fmt.Fprintf(f.IO.ErrOut, "muster: %d transcript problem(s); first: %s\n", len(st.Errors), termtext.Line(st.Errors[0]))
	}
	return st, nil
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
// refreshing the index first unless the argument is a path. The name of a
// Muster session stands for its current conversation.
func resolveSession(ctx context.Context, f *Factory, ref string) (*transcript.Transcript, error) {
	res, err := resolveRef(ctx, f, ref)
	if err != nil {
		return nil, err
	}
	t, err := history.Load(ctx, res, transcriptEnv(f))
	if err != nil {
		return nil, Userf("%v", err)
	}
	return t, nil
}

// resolveRef finds the session a SESSION argument names, as resolveSession
// does, without reading its transcript.
func resolveRef(ctx context.Context, f *Factory, ref string) (history.Resolved, error) {
	sources := all.Sources()
	ref, err := liveRef(ctx, f, ref)
	if err != nil {
		return history.Resolved{}, err
	}
	r, err := history.ParseRef(ref, all.Names())
	if err != nil {
		return history.Resolved{}, usagef("%v", err)
	}
	idx, err := openHistory(ctx, f)
	if err != nil {
		return history.Resolved{}, err
	}
	defer idx.Close()
	if r.Path == "" {
		if err := refreshHistory(ctx, f, idx, historySources(r.Provider), history.RefreshOptions{}); err != nil {
			return history.Resolved{}, err
		}
	}
	res, err := idx.Resolve(ctx, ref, sources, transcriptEnv(f))
	if err != nil {
		if ae, ok := errors.AsType[*history.AmbiguousError](err); ok {
			return history.Resolved{}, &UserError{Err: ae, Hint: "give more of the id, or PROVIDER:ID", Code: ExitError}
		}
		if errors.Is(err, history.ErrNoSession) {
			return history.Resolved{}, &UserError{Err: err, Hint: "run `muster history` to list sessions", Code: ExitError}
		}
		return history.Resolved{}, Userf("%v", err)
	}
	return res, nil
}
