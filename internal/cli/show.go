package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/stats"
	"github.com/musterhq/muster/internal/termtext"
	"github.com/musterhq/muster/internal/transcript"
)

type showOptions struct {
	Session string
	JSON    bool
}

func newShowCmd(f *Factory) *cobra.Command {
	return newShowCmdWith(f, nil)
}

func newShowCmdWith(f *Factory, runF func(*showOptions) error) *cobra.Command {
	var o showOptions
	cmd := &cobra.Command{
		Use:   "show SESSION",
		Short: "Print a past session's transcript as plain text",
		Long: "Print a transcript: prompts, replies, thinking, tool calls and their results.\n" +
			"SESSION is PROVIDER:ID, a unique id prefix, a path to a transcript file, or the name of a\n" +
			"Muster session (its current conversation).\n" +
			"Terminal escape sequences in the transcript are removed.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Session = args[0]
			if runF != nil {
				return runF(&o)
			}
			return runShow(cmd.Context(), f, &o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the parsed transcript as JSON")
	return cmd
}

func runShow(ctx context.Context, f *Factory, o *showOptions) error {
	t, err := resolveSession(ctx, f, o.Session)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(f.IO.Out, t)
	}
	w := bufio.NewWriter(f.IO.Out)
	printTranscript(w, t)
	return w.Flush()
}

func fmtWhen(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func indent(w io.Writer, s, prefix string) {
	s = strings.TrimRight(termtext.Strip(s), "\n")
	for line := range strings.Lines(s) {
		fmt.Fprintf(w, "%s%s", prefix, line)
	}
	fmt.Fprintln(w)
}

// printTranscript writes the plain-text form of t.
func printTranscript(w io.Writer, t *transcript.Transcript) {
	title := t.Title
	if title == "" {
		title = transcript.Headline(t.FirstPrompt)
	}
	if title == "" {
		title = "Untitled session"
	}
	// The title is what lists show, so it is redacted as they redact it;
	// the body below is the transcript as recorded.
	title = redactSecrets(title)
	fmt.Fprintln(w, termtext.Line(title))
	meta := []string{t.Provider + ":" + t.ID}
	if t.Model != "" {
		meta = append(meta, t.Model)
	}
	if s := fmtWhen(t.StartedAt); s != "" {
		meta = append(meta, "started "+s)
	}
	if e := fmtWhen(t.EndedAt); e != "" {
		meta = append(meta, "ended "+e)
	}
	meta = append(meta, fmt.Sprintf("%d prompts, %d tool calls", t.PromptCount, t.ToolCallCount))
	fmt.Fprintln(w, termtext.Line(strings.Join(meta, " · ")))
	if t.CWD != "" {
		fmt.Fprintf(w, "folder %s\n", termtext.Line(t.CWD))
	}
	fmt.Fprintf(w, "file %s\n", termtext.Line(t.Path))
	if t.ForkedFrom != "" {
		fmt.Fprintf(w, "forked from %s:%s\n", t.Provider, termtext.Line(t.ForkedFrom))
	}
	if n := len(t.Warnings); n > 0 {
		fmt.Fprintf(w, "%d parse warning(s); first: %s\n", n, termtext.Line(t.Warnings[0]))
	}

	results := map[string]transcript.Item{}
	for _, it := range t.Items {
		if it.Kind == transcript.ToolResult && it.CallID != "" {
			results[it.CallID] = it
		}
	}
	shown := map[string]bool{}
	n := 0
	inherited := false
	for _, it := range t.Items {
		if it.Inherited {
			inherited = true
		} else if inherited {
			inherited = false
			head := "── forked from " + t.Provider + ":" + termtext.Line(t.ForkedFrom) + " here; above is its conversation until then "
			fmt.Fprintf(w, "\n%s%s\n", head, strings.Repeat("═", max(4, 60-len([]rune(head)))))
		}
		switch it.Kind {
		case transcript.UserPrompt:
			n++
			head := fmt.Sprintf("── prompt %d", n)
			if it.Directive {
				head += " (directive"
				if it.Source != "" {
					head += " " + it.Source
				}
				head += ")"
			}
			if s := fmtWhen(it.Time); s != "" {
				head += " · " + s
			}
			fmt.Fprintf(w, "\n%s %s\n", termtext.Line(head), strings.Repeat("─", max(4, 60-len([]rune(head)))))
			text := it.Text
			if strings.TrimSpace(text) == "" && len(it.Images) > 0 {
				text = "(image)"
			}
			indent(w, text, "> ")
			for _, im := range it.Images {
				fmt.Fprintf(w, "> [image %s %s]\n", termtext.Line(im.MIME), termtext.Line(im.Path))
			}
		case transcript.AssistantText:
			fmt.Fprintln(w)
			indent(w, it.Text, "")
		case transcript.Thinking:
			fmt.Fprintln(w, "\n[thinking]")
			indent(w, it.Text, "  ")
		case transcript.Compaction:
			fmt.Fprintln(w, "\n[context compacted]")
		case transcript.ToolUse:
			fmt.Fprintln(w)
			printToolUse(w, it, t.CWD)
			if r, ok := results[it.CallID]; ok && it.CallID != "" && !shown[it.CallID] {
				shown[it.CallID] = true
				printToolResult(w, r)
			}
		case transcript.ToolResult:
			if it.CallID != "" && shown[it.CallID] {
				continue
			}
			printToolResult(w, it)
		}
	}
}

type showInput struct {
	Command  string `json:"command"`
	FilePath string `json:"file_path"`
	Pattern  string `json:"pattern"`
}

func printToolUse(w io.Writer, it transcript.Item, cwd string) {
	name := it.Tool
	if name == "" {
		name = it.RawTool
	}
	var in showInput
	json.Unmarshal(it.Input, &in)
	switch {
	case in.Command != "":
		fmt.Fprintf(w, "[%s] $ %s\n", termtext.Line(name), strings.TrimSpace(termtext.Strip(in.Command)))
	default:
		edits := stats.Edits(it, cwd)
		if len(edits) > 0 {
			for _, e := range edits {
				fmt.Fprintf(w, "[%s] %s (+%d −%d)\n", termtext.Line(name), termtext.Line(e.Path), e.Added, e.Removed)
			}
			return
		}
		subject := in.FilePath
		if subject == "" {
			subject = in.Pattern
		}
		if subject == "" && len(it.Input) > 0 && string(it.Input) != "{}" {
			subject = transcript.Clip(string(it.Input), 200)
		}
		fmt.Fprintf(w, "[%s] %s\n", termtext.Line(name), termtext.Line(subject))
	}
}

const showOutputLines = 20

func printToolResult(w io.Writer, it transcript.Item) {
	text := strings.TrimRight(it.Text, "\n")
	if it.IsError {
		fmt.Fprintln(w, "  [error]")
	}
	if text == "" {
		return
	}
	lines := strings.Split(termtext.Strip(text), "\n")
	more := 0
	if len(lines) > showOutputLines {
		more = len(lines) - showOutputLines
		lines = lines[:showOutputLines]
	}
	for _, l := range lines {
		fmt.Fprintf(w, "  │ %s\n", l)
	}
	if more > 0 {
		fmt.Fprintf(w, "  │ … %d more lines\n", more)
	}
}
