package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/redact"
	"github.com/musterhq/muster/internal/termtext"
	"github.com/musterhq/muster/internal/transcript"
)

type historyOptions struct {
	JSON     bool
	Provider string
	Search   string
	Since    string
	Until    string
	Dir      string
	Limit    int
	Rescan   bool
	Verbose  bool
	Now      func() time.Time
}

func newHistoryCmd(f *Factory) *cobra.Command {
	return newHistoryCmdWith(f, nil)
}

func newHistoryCmdWith(f *Factory, runF func(*historyOptions) error) *cobra.Command {
	o := historyOptions{Now: f.now}
	cmd := &cobra.Command{
		Use:   "history [--json] [--provider P] [--search TEXT] [--dir DIR] [--since D] [--until D] [--limit N] [--verbose]",
		Short: "List past agent sessions found on disk",
		Long: "List the conversations that coding agents left on disk, newest first. The first run indexes\n" +
			"every transcript (progress is shown on a terminal); later runs re-read only files that changed.\n" +
			"Works without the daemon. --since and --until take a duration (30m, 24h, 7d, 2w) or a date\n" +
			"(2026-01-31; --until includes that day).\n" +
			"--search is a full-text search of everything said (prompts, replies, tool calls and the head of\n" +
			"their outputs): every word must be a word of the session, or start one when it has 4 or more\n" +
			"characters or ends in *. Sessions whose title, first prompt, directory or id hold every word come\n" +
			"first, then those where it was said, then tool calls only; newest first within each; with a snippet.\n" +
			"Titles and snippets are redacted (credential-shaped text shown as [REDACTED:kind]).\n" +
			"Sessions are named PROVIDER:ID; `muster show`, `replay` accept that, a unique id prefix or a path.\n" +
			"--verbose prints on stderr every file skipped (unreadable, not a regular file: a FIFO, a socket, a\n" +
			"symlink) and the parse warnings of the sessions listed.",
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
			if _, err := parseUntil(o.Until, o.Now()); err != nil {
				return usagef("--until: %v", err)
			}
			if runF != nil {
				return runF(&o)
			}
			return runHistory(cmd.Context(), f, &o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print a JSON array of sessions")
	cmd.Flags().StringVar(&o.Provider, "provider", "", "only this provider ("+strings.Join(all.Names(), ", ")+")")
	cmd.Flags().StringVar(&o.Search, "search", "", "full-text search of everything said; best matches first, with snippets")
	cmd.Flags().StringVar(&o.Dir, "dir", "", "only sessions run in DIR or below it")
	cmd.Flags().StringVar(&o.Since, "since", "", "only sessions active since a duration ago (7d, 24h) or a date (2026-01-31)")
	cmd.Flags().StringVar(&o.Until, "until", "", "only sessions started before a duration ago or by the end of a date")
	cmd.Flags().IntVar(&o.Limit, "limit", 50, "show at most N sessions (0: all)")
	cmd.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "print every transcript problem (files skipped, parse warnings) on stderr")
	cmd.Flags().BoolVar(&o.Rescan, "rescan", false, "compare every transcript file with the index, not only changed folders")
	return cmd
}

// historyEntry is one element of `muster history --json`: the session
// summary (full id) plus the reference other commands accept and, for a
// search, the redacted snippet with the [start, end) byte offsets of its
// highlighted words and the match tier (0: title, first prompt, directory
// or id; 1: what was said; 2: tool calls only).
type historyEntry struct {
	Ref string `json:"ref"`
	transcript.Session
	Snippet string `json:"snippet,omitempty"`
	// Subagent is the sub-agent of this conversation whose transcript the
	// snippet comes from.
	Subagent   string   `json:"subagent,omitempty"`
	Highlights [][2]int `json:"highlights,omitempty"`
	Tier       *int     `json:"tier,omitempty"`
	// Live names the running Muster session whose pane holds this
	// conversation.
	Live *liveEntry `json:"live,omitempty"`
}

func runHistory(ctx context.Context, f *Factory, o *historyOptions) error {
	since, _ := parseSince(o.Since, o.Now())
	until, _ := parseUntil(o.Until, o.Now())
	dir := o.Dir
	if dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
	}
	idx, err := openHistory(ctx, f)
	if err != nil {
		return err
	}
	defer idx.Close()
	sources := historySources(o.Provider)
	st, err := refreshHistoryStats(ctx, f, idx, sources, history.RefreshOptions{Rescan: o.Rescan})
	if err != nil {
		return err
	}
	if o.Verbose {
		// Every file skipped (unreadable, not a regular file, a symlink
		// loop), not only the first: --verbose is where a user asks why a
		// session is missing.
		for _, e := range st.Errors {
			fmt.Fprintf(f.IO.ErrOut, "muster: skipped: %s\n", termtext.Line(redactSecrets(e)))
		}
	}
	var hits []history.Hit
	if strings.TrimSpace(o.Search) != "" {
		hits, err = idx.Search(ctx, history.SearchQuery{Text: o.Search, Provider: o.Provider, Dir: dir, Since: since, Until: until, Limit: o.Limit})
		if err != nil {
			return err
		}
	} else {
		q := history.Query{Provider: o.Provider, Since: since, Until: until, Dir: dir, Limit: o.Limit}
		list, err := idx.List(ctx, q)
		if err != nil {
			return err
		}
		for _, s := range list {
			hits = append(hits, history.Hit{Session: s})
		}
	}
	searching := strings.TrimSpace(o.Search) != ""
	live := livePanes(ctx, f)
	if o.JSON {
		out := make([]historyEntry, 0, len(hits))
		for _, h := range hits {
			e := historyEntry{Ref: h.Session.Provider + ":" + h.Session.ID, Session: h.Session}
			if l, ok := live[e.Ref]; ok {
				e.Live = &liveEntry{Name: l.Name, RunState: l.RunState}
			}
			if searching {
				tier := h.Tier
				e.Tier = &tier
			}
			// The text stays as the transcript has it (JSON escapes
			// controls) unless it holds a secret; the snippet is
			// redacted already, and its offsets refer to it.
			s := &e.Session
			for _, p := range []*string{&s.Title, &s.FirstPrompt, &s.CWD, &s.Model, &s.Path} {
				*p = redactSecrets(*p)
			}
			for i := range s.Warnings {
				s.Warnings[i] = redactSecrets(s.Warnings[i])
			}
			e.Snippet, e.Highlights, e.Subagent = h.Snippet, h.Highlights, h.Subagent
			out = append(out, e)
		}
		return writeJSON(f.IO.Out, out)
	}
	if len(hits) == 0 {
		fmt.Fprintln(f.IO.Out, "No sessions found.")
		return nil
	}
	ids, err := idx.IDs(ctx)
	if err != nil {
		return err
	}
	home := f.Getenv("HOME")
	printHistory(f.IO.Out, hits, ids, live, home, searching, f.IO.IsStdoutTTY(), o.Now())
	if o.Verbose {
		for _, h := range hits {
			for _, w := range h.Session.Warnings {
				fmt.Fprintf(f.IO.ErrOut, "muster: %s:%s: %s\n", h.Session.Provider, termtext.Line(h.Session.ID), termtext.Line(redactSecrets(w)))
			}
		}
	}
	if !searching && o.Limit > 0 && len(hits) == o.Limit {
		if n, err := idx.Count(ctx, history.Query{Provider: o.Provider, Since: since, Until: until, Dir: dir}); err == nil && n > len(hits) {
			fmt.Fprintf(f.IO.ErrOut, "%d more; use --limit 0 to list all\n", n-len(hits))
		}
	}
	return nil
}

type liveEntry struct {
	Name     string  `json:"name"`
	RunState *string `json:"run_state,omitempty"`
}

// redactSecrets is s with its secrets redacted, or s unchanged (escapes
// included) when it holds none.
func redactSecrets(s string) string {
	if r, n := redact.String(s); n > 0 {
		return r
	}
	return s
}

// printHistory prints the table: a unique prefix of each id, the directory
// (home as ~), and the redacted title (⑂ before a fork's: a fork is a
// conversation of its own, resumed by its own id, so it keeps its row and
// --json names its original in forked_from); a PANE column names the running
// sessions that hold a listed conversation, when any does. For a search,
// each row is followed by its snippet, the matches in reverse video on a
// terminal.
func printHistory(w io.Writer, hits []history.Hit, allIDs []string, live map[string]proto.SessionInfo, home string, searching, tty bool, now time.Time) {
	pane := func(s transcript.Session) (string, bool) {
		l, ok := live[s.Provider+":"+s.ID]
		return termtext.Line(l.Name), ok
	}
	anyLive := false
	for _, h := range hits {
		if _, ok := pane(h.Session); ok {
			anyLive = true
		}
	}
	rows := [][]string{{"ACTIVE", "SESSION", "DIR", "PROMPTS", "TOOLS", "TITLE"}}
	if anyLive {
		rows[0] = slices.Insert(rows[0], 2, "PANE")
	}
	for _, h := range hits {
		s := h.Session
		when := s.EndedAt
		if when.IsZero() {
			when = s.StartedAt
		}
		title := s.Title
		if title == "" {
			title = transcript.Headline(s.FirstPrompt)
		}
		title, _ = redact.String(title)
		if s.ParentID != "" {
			title = "↳ " + title
		}
		if s.ForkedFrom != "" {
			title = "⑂ " + title
		}
		row := []string{historyAge(when, now), s.Provider + ":" + uniquePrefix(s.ID, allIDs), displayDir(s.CWD, home),
			strconv.Itoa(s.PromptCount), strconv.Itoa(s.ToolCallCount), termtext.Clip(title, 70)}
		if anyLive {
			name, ok := pane(s)
			if !ok {
				name = "-"
			}
			row = slices.Insert(row, 2, name)
		}
		rows = append(rows, row)
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for i, r := range rows {
		var b strings.Builder
		for j, c := range r {
			b.WriteString(c)
			if j < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[j]-utf8.RuneCountInString(c)+2))
			}
		}
		fmt.Fprintln(w, b.String())
		if i > 0 && searching && hits[i-1].Snippet != "" {
			lead := "    "
			if sub := hits[i-1].Subagent; sub != "" {
				lead += "(sub-agent " + termtext.Clip(sub, 24) + ") "
			}
			fmt.Fprintln(w, lead+highlight(hits[i-1], tty))
		}
	}
}

// highlight renders a snippet on one line, its matches in reverse video
// when the output is a terminal. The snippet is redacted and one line; its
// escapes and controls are removed (termtext), so only our SGR sequences
// reach the screen.
func highlight(h history.Hit, tty bool) string {
	s := h.Snippet
	if !tty {
		return termtext.Line(s)
	}
	var b strings.Builder
	at := 0
	for _, sp := range h.Highlights {
		if sp[0] < at || sp[1] > len(s) || sp[0] > sp[1] {
			continue
		}
		b.WriteString(termtext.Strip(s[at:sp[0]]))
		b.WriteString("\x1b[1;7m")
		b.WriteString(termtext.Strip(s[sp[0]:sp[1]]))
		b.WriteString("\x1b[22;27m")
		at = sp[1]
	}
	b.WriteString(termtext.Strip(s[at:]))
	return b.String()
}

// uniquePrefix is the shortest prefix of id, at least 8 characters, that
// no other id in sorted starts with (as git abbreviates hashes); the whole
// id when another id equals it or extends it.
func uniquePrefix(id string, sorted []string) string {
	i, _ := slices.BinarySearch(sorted, id) // the first equal, or where id would go
	k := i
	for k < len(sorted) && sorted[k] == id {
		k++
	}
	need := 8
	if k-i > 1 {
		need = len(id)
	}
	if i > 0 {
		need = max(need, commonPrefix(sorted[i-1], id)+1)
	}
	if k < len(sorted) {
		need = max(need, commonPrefix(sorted[k], id)+1)
	}
	if need >= len(id) {
		return termtext.Line(id)
	}
	for need < len(id) && !utf8.RuneStart(id[need]) {
		need++
	}
	return termtext.Line(id[:need])
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// displayDir shows a directory with the home directory as ~, cut from the
// left to keep its last components.
func displayDir(dir, home string) string {
	dir = termtext.Line(dir)
	if home != "" && (dir == home || strings.HasPrefix(dir, strings.TrimSuffix(home, "/")+"/")) {
		dir = "~" + dir[len(strings.TrimSuffix(home, "/")):]
	}
	if dir == "" {
		return "-"
	}
	const width = 32
	if r := []rune(dir); len(r) > width {
		return "…" + string(r[len(r)-width+1:])
	}
	return dir
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

// parseUntil reads --until as parseSince does, except that a date means
// the end of that day.
func parseUntil(s string, now time.Time) (time.Time, error) {
	t, err := parseSince(s, now)
	if err != nil || t.IsZero() {
		return t, err
	}
	if _, err := time.ParseInLocation(time.DateOnly, strings.TrimSpace(s), now.Location()); err == nil {
		t = t.AddDate(0, 0, 1)
	}
	return t, nil
}
