package replay

import (
	"encoding/json"
	"fmt"
	"html/template"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/musterhq/muster/internal/replay/diff"
	"github.com/musterhq/muster/internal/termtext"
	"github.com/musterhq/muster/internal/transcript"
)

// Bounds that keep a replay of a huge session a reasonable page: long tool
// outputs and file contents are clipped with a note.
const (
	maxOutputBytes = 64 << 10
	maxOutputLines = 400
	maxDiffLines   = 2000
	maxArgsBytes   = 16 << 10
	// longOutput is the line count past which an output starts collapsed.
	longOutput = 40
)

type page struct {
	Title    string
	Provider string
	ID       string
	// ForkedFrom is the native id of the conversation this one was forked
	// from (transcript.Session.ForkedFrom).
	ForkedFrom string
	Model      string
	Models     []string
	CWD        string
	Started    string
	Ended      string
	Duration   string
	Prompts    int
	ToolCalls  int
	Errors     int
	Thinking   int
	Compacted  int
	Redacted   bool
	Redactions int
	// RedactedKinds counts the redactions by kind of secret.
	RedactedKinds []kindCount
	Warnings      int
	Version       string
	Scenes        []scene
	// SceneTotal counts the session's scenes; Scenes are one page's.
	SceneTotal int
	// Unlinked are subagents whose call was not found.
	Unlinked []*subView
	Pager    *pager
	Nav      []navLink
}

type navLink struct {
	Label string
	URL   string // html/template filters an unsafe scheme
}

type pager struct {
	Page, Pages, From, To   int
	First, Prev, Next, Last template.URL
}

type kindCount struct {
	Kind string
	N    int
}

type scene struct {
	N      int
	Rewind bool
	// Forked is set on the first scene after a fork's inherited items:
	// the original's id.
	Forked    string
	Time      string
	Preamble  bool
	Directive bool
	Source    string
	Prompt    string
	Images    []image
	Blocks    []block
}

type image struct {
	URL  template.URL // a checked data: URL
	Alt  string
	Note string // set instead of URL when the image was not embeddable
}

type block struct {
	Kind string // text, thinking, tool, compaction, orphan
	Text string
	// HTML is Text rendered as markdown; empty when Text is shown as is.
	HTML   template.HTML
	Time   string
	Model  string
	Images []image
	Tool   *toolView
}

type toolView struct {
	Name     string
	Raw      string
	Class    string // bash, diff, generic
	Subject  string // file path, description
	Command  string
	Args     string
	Files    []diffFile
	Output   string
	OutLines int
	Clipped  bool
	HasOut   bool
	Error    bool
	Long     bool
	Pending  bool // no result recorded
	// Todos is the list a TodoWrite or plan call set, shown as a checklist.
	Todos []todo
	// Note is what a plan call said besides its steps.
	Note string
	// Exit is the exit code a command wrapper reported ("" when none).
	Exit string
	// Sub is the subagent a Task call started, rendered under the call.
	Sub *subView
	// taskPrompt is a Task call's prompt, which the subagent's first
	// prompt repeats.
	taskPrompt string
}

// subView is a subagent's conversation, nested under the call that
// started it.
type subView struct {
	Title     string
	Prompts   int
	ToolCalls int
	Scenes    []scene
}

type todo struct {
	Text   string
	Status string // pending, in_progress, completed, cancelled
}

type diffFile struct {
	Path    string
	Op      string
	Lines   []diffLine
	Added   int
	Removed int
	Clipped int
}

type diffLine struct {
	Class string // ctx, del, add, hunk
	Old   string
	New   string
	Sign  string
	Text  string
}

// dataURL and execHeader compile on first use, not at every muster
// command's start.
var dataURL = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]*={0,2}$`)
})

func images(imgs []transcript.Image) []image {
	var out []image
	for _, im := range imgs {
		alt := im.Path
		if alt == "" {
			alt = "image"
		}
		if dataURL().MatchString(im.DataURL) {
			out = append(out, image{URL: template.URL(im.DataURL), Alt: alt})
		} else {
			out = append(out, image{Alt: alt, Note: "image not embedded (not an inline PNG, JPEG, GIF or WebP)"})
		}
	}
	return out
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// clip bounds an output by bytes and lines.
func clip(s string) (out string, lines int, clipped bool) {
	s = strings.TrimRight(termtext.Strip(s), "\n")
	lines = strings.Count(s, "\n") + 1
	if s == "" {
		lines = 0
	}
	if len(s) > maxOutputBytes {
		cut := maxOutputBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s, clipped = s[:cut], true
	}
	if n := 0; true {
		for i := 0; i < len(s); i++ {
			if s[i] == '\n' {
				n++
				if n == maxOutputLines {
					s, clipped = s[:i], true
					break
				}
			}
		}
	}
	return s, lines, clipped
}

type toolInput struct {
	Command     string `json:"command"`
	Description string `json:"description"`
	FilePath    string `json:"file_path"`
	OldString   string `json:"old_string"`
	NewString   string `json:"new_string"`
	Content     string `json:"content"`
	Patch       string `json:"patch"`
	Pattern     string `json:"pattern"`
	Path        string `json:"path"`
	Edits       []struct {
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	} `json:"edits"`
	// TodoWrite (Claude, Cursor, OpenCode, Gemini's write_todos) and
	// Codex's update_plan.
	Todos []struct {
		Content     string `json:"content"`
		Description string `json:"description"`
		Status      string `json:"status"`
	} `json:"todos"`
	Plan []struct {
		Step   string `json:"step"`
		Status string `json:"status"`
	} `json:"plan"`
	Explanation string `json:"explanation"`
	Prompt      string `json:"prompt"`
}

func buildTool(use transcript.Item, res *transcript.Item) *toolView {
	tv := &toolView{Name: use.Tool, Raw: use.RawTool, Class: "generic"}
	if tv.Name == "" {
		tv.Name = use.RawTool
	}
	if tv.Name == "" {
		tv.Name = "tool"
	}
	if tv.Raw == tv.Name {
		tv.Raw = ""
	}
	var in toolInput
	decoded := json.Unmarshal(use.Input, &in) == nil
	switch {
	case use.Tool == transcript.ToolBash && decoded && in.Command != "":
		tv.Class = "bash"
		tv.Command = termtext.Strip(in.Command)
		tv.Subject = termtext.Strip(in.Description)
	case use.Tool == transcript.ToolEdit && decoded && in.FilePath != "":
		tv.Class = "diff"
		tv.Subject = in.FilePath
		tv.Files = []diffFile{fileDiff(in.FilePath, "edit", diff.Strings(in.OldString, in.NewString))}
	case use.Tool == transcript.ToolMultiEdit && decoded && in.FilePath != "":
		tv.Class = "diff"
		tv.Subject = in.FilePath
		var lines []diff.Line
		for i, e := range in.Edits {
			lines = append(lines, diff.Line{Kind: diff.Header, Text: fmt.Sprintf("@@ edit %d of %d @@", i+1, len(in.Edits))})
			lines = append(lines, diff.Strings(e.OldString, e.NewString)...)
		}
		tv.Files = []diffFile{fileDiff(in.FilePath, "edit", lines)}
	case use.Tool == transcript.ToolWrite && decoded && in.FilePath != "":
		tv.Class = "diff"
		tv.Subject = in.FilePath
		tv.Files = []diffFile{fileDiff(in.FilePath, "write", diff.Strings("", in.Content))}
	case use.Tool == transcript.ToolApplyPatch && decoded && in.Patch != "":
		tv.Class = "diff"
		for _, fp := range diff.ParsePatch(in.Patch) {
			p := fp.Path
			if fp.MoveTo != "" {
				p += " → " + fp.MoveTo
			}
			tv.Files = append(tv.Files, fileDiff(p, fp.Op, fp.Lines))
		}
		if len(tv.Files) == 0 {
			tv.Class = "generic"
			tv.Args = argsText(use.Input)
		}
	case (use.Tool == transcript.ToolTodoWrite || use.RawTool == "update_plan") && decoded && (len(in.Todos) > 0 || len(in.Plan) > 0):
		tv.Class = "todo"
		for _, t := range in.Todos {
			text := t.Content
			if text == "" {
				text = t.Description
			}
			tv.Todos = append(tv.Todos, todo{Text: termtext.Strip(text), Status: todoStatus(t.Status)})
		}
		for _, t := range in.Plan {
			tv.Todos = append(tv.Todos, todo{Text: termtext.Strip(t.Step), Status: todoStatus(t.Status)})
		}
		tv.Note = termtext.Strip(in.Explanation)
	default:
		if decoded {
			switch {
			case in.FilePath != "":
				tv.Subject = in.FilePath
			case in.Pattern != "":
				tv.Subject = in.Pattern
			case in.Description != "":
				tv.Subject = in.Description
			}
		}
		tv.Args = argsText(use.Input)
	}
	if use.Tool == transcript.ToolTask && decoded {
		tv.taskPrompt = strings.TrimSpace(in.Prompt)
	}
	tv.Subject = termtext.Strip(tv.Subject)
	if use.IsError {
		tv.Error = true
	}
	if res == nil {
		tv.Pending = true
		return tv
	}
	tv.Error = tv.Error || res.IsError
	out := res.Text
	if tv.Class == "bash" {
		out, tv.Exit = unwrapExec(out)
	}
	tv.HasOut = out != "" || tv.Error
	if tv.Class == "todo" && !tv.Error {
		// The result only acknowledges the list ("Todos have been modified").
		tv.HasOut = false
	}
	tv.Output, tv.OutLines, tv.Clipped = clip(out)
	tv.Long = tv.OutLines > longOutput
	return tv
}

func argsText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	var s string
	if json.Unmarshal(raw, &v) == nil {
		if b, err := json.MarshalIndent(v, "", "  "); err == nil {
			s = string(b)
		}
	}
	if s == "" {
		s = string(raw)
	}
	if s == "{}" || s == "null" {
		return ""
	}
	s = termtext.Strip(s)
	if len(s) > maxArgsBytes {
		cut := maxArgsBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "\n…"
	}
	return s
}

func fileDiff(path, op string, lines []diff.Line) diffFile {
	f := diffFile{Path: termtext.Strip(path), Op: op}
	f.Added, f.Removed = diff.Count(lines)
	oldN, newN := 1, 1
	for i, l := range lines {
		if i == maxDiffLines {
			f.Clipped = len(lines) - i
			break
		}
		dl := diffLine{Text: termtext.Strip(l.Text)}
		switch l.Kind {
		case diff.Header:
			dl.Class = "hunk"
			if o, n, ok := hunkStart(l.Text); ok {
				oldN, newN = o, n
			}
		case diff.Delete:
			dl.Class, dl.Sign, dl.Old = "del", "-", fmt.Sprint(oldN)
			oldN++
		case diff.Insert:
			dl.Class, dl.Sign, dl.New = "add", "+", fmt.Sprint(newN)
			newN++
		default:
			dl.Class, dl.Sign, dl.Old, dl.New = "ctx", " ", fmt.Sprint(oldN), fmt.Sprint(newN)
			oldN++
			newN++
		}
		f.Lines = append(f.Lines, dl)
	}
	return f
}

// hunkStart reads the start lines of "@@ -a,b +c,d @@".
func hunkStart(h string) (old, new int, ok bool) {
	var a, c int
	f := strings.Fields(h)
	if len(f) < 3 {
		return 0, 0, false
	}
	if _, err := fmt.Sscanf(strings.SplitN(f[1], ",", 2)[0], "-%d", &a); err != nil {
		return 0, 0, false
	}
	if _, err := fmt.Sscanf(strings.SplitN(f[2], ",", 2)[0], "+%d", &c); err != nil {
		return 0, 0, false
	}
	return max(a, 1), max(c, 1), true
}

// todoStatus maps the providers' item states onto the checklist's.
func todoStatus(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "completed", "complete", "done":
		return "completed"
	case "in_progress", "in-progress", "inprogress", "active":
		return "in_progress"
	case "cancelled", "canceled":
		return "cancelled"
	}
	return "pending"
}

// execHeader matches the lines Codex puts before a command's output
// ("Chunk ID: 4be1", "Wall time: 2.9 seconds", "Process exited with code
// 1", "Exit code: 0", "Original token count: 12", "Process running with
// session ID 3").
var execHeader = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:Chunk ID: \S+|Wall time: [0-9.]+ seconds?|Process exited with code (-?\d+)|Exit code: (-?\d+)|Original token count: \d+|Process running with session ID \d+|Total output lines: \d+)$`)
})

// unwrapExec strips Codex's wrapper from a command's output: the header
// lines up to "Output:", keeping the exit code they report. Text that does
// not start with a header line is returned as is.
func unwrapExec(s string) (out, exit string) {
	rest := s
	n := 0
	for rest != "" {
		line, after, _ := strings.Cut(rest, "\n")
		line = strings.TrimSuffix(line, "\r")
		if line == "Output:" && n > 0 {
			return after, exit
		}
		m := execHeader().FindStringSubmatch(line)
		if m == nil {
			break
		}
		if m[1] != "" {
			exit = m[1]
		} else if m[2] != "" {
			exit = m[2]
		}
		rest, n = after, n+1
	}
	if n == 0 {
		return s, ""
	}
	return rest, exit
}
