// Package replay renders a transcript as one self-contained HTML page: no
// network at all (a Content-Security-Policy meta tag allows only inline
// styles, inline scripts and data: images), so it works from file:// and
// can be published as an immutable blob. One scene per user prompt;
// replies and thinking are markdown (goldmark: raw HTML dropped, links
// kept only with an http, https or mailto scheme, images turned into
// links) with fenced code highlighted by chroma (markdown.go), whose lexers
// and styles this package registers on first use (lexers.go: chroma's own
// registries are built in package init, which every muster command paid);
// thinking
// collapses; Bash calls look like a terminal, with Codex's exec wrapper
// (Chunk ID, Wall time, exit code) reduced to the output and its exit
// code; TodoWrite and plan calls are checklists; Edit, MultiEdit, Write
// and ApplyPatch calls show diffs; tool errors are marked; images the
// provider embedded as data URLs are shown. A fork's page shows the
// conversation it inherited once, then a mark naming its original where
// the fork goes on (transcript.Item.Inherited). Secrets are redacted unless the
// caller opts out, and the page says which. Every transcript string goes
// through html/template's contextual escaping.
//
// The output depends only on the transcript and the options (no clock), so
// publishing the same replay twice gives the same blob id.
package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/redact"
	"github.com/musterhq/muster/internal/termtext"
	"github.com/musterhq/muster/internal/transcript"
)

// CSP is the page's Content-Security-Policy: nothing may be fetched.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

// Options tune a replay.
type Options struct {
	// NoRedact keeps secrets as recorded. The default redacts.
	NoRedact bool
	// Version is the muster version named in the footer.
	Version string
	// Nav are links shown above the title (a server's way back).
	Nav []Link
	// PageURL, when set, splits a long session into pages of at most
	// PageScenes scenes and about PageBytes of content (defaults below),
	// and Page (1-based) says which one to render; PageURL(n) is the
	// address of page n. Unset, the whole session is one page.
	PageURL func(n int) string
	// Subagents are the conversations of subagents the session started
	// (LoadSubagents); each is nested under the Task call that started it
	// (the call whose prompt its first prompt repeats, else the first
	// Task call left, in order), or listed at the end.
	Subagents  []*transcript.Transcript
	Page       int
	PageScenes int
	PageBytes  int
	// forkBefore says the items before this page's ended with a fork's
	// inherited ones, so a page that starts at the fork point marks it.
	forkBefore bool
}

// Link is a navigation link of a served replay.
type Link struct {
	Label string
	URL   string
}

// Page bounds of a paged replay: a browser paints a few megabytes of
// HTML quickly; a 100 MB transcript in one page takes it seconds.
const (
	DefaultPageScenes = 100
	DefaultPageBytes  = 2 << 20
)

// ErrNoPage is returned for a page number past the last page.
var ErrNoPage = errors.New("no such page of the replay")

// Render writes the replay of t to w.
func Render(w io.Writer, t *transcript.Transcript, opts Options) error {
	p, err := build(t, opts)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := pageTemplate().Execute(&buf, p); err != nil {
		return fmt.Errorf("render replay: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// HTML returns the replay of t.
func HTML(t *transcript.Transcript, opts Options) ([]byte, error) {
	var buf bytes.Buffer
	if err := Render(&buf, t, opts); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func build(t *transcript.Transcript, opts Options) (*page, error) {
	if opts.PageURL != nil {
		return buildPage(t, opts)
	}
	p := &page{Redacted: !opts.NoRedact, Version: opts.Version}
	for _, l := range opts.Nav {
		p.Nav = append(p.Nav, navLink(l))
	}
	if p.Redacted {
		t, p.Redactions = redact.Transcript(t)
		if p.Redactions > 0 {
			p.RedactedKinds = redactedKinds(t)
		}
	}
	p.Title = termtext.Strip(t.Title)
	if p.Title == "" {
		p.Title = transcript.Headline(termtext.Strip(t.FirstPrompt))
	}
	if p.Title == "" {
		p.Title = "Untitled session"
	}
	p.Provider, p.ID, p.Model, p.CWD = termtext.Strip(t.Provider), termtext.Strip(t.ID), termtext.Strip(t.Model), termtext.Strip(t.CWD)
	p.ForkedFrom = termtext.Strip(t.ForkedFrom)
	p.Started, p.Ended = fmtTime(t.StartedAt), fmtTime(t.EndedAt)
	if !t.StartedAt.IsZero() && t.EndedAt.After(t.StartedAt) {
		p.Duration = t.EndedAt.Sub(t.StartedAt).Round(time.Second).String()
	}
	p.Warnings = len(t.Warnings)

	// Results by call id, so each tool call renders with its result.
	results := map[string]*transcript.Item{}
	for i := range t.Items {
		it := &t.Items[i]
		if it.Kind == transcript.ToolResult && it.CallID != "" {
			if _, dup := results[it.CallID]; !dup {
				results[it.CallID] = it
			}
		}
	}
	used := map[*transcript.Item]bool{}
	hasUse := map[string]bool{}
	for _, it := range t.Items {
		if it.Kind == transcript.ToolUse && it.CallID != "" {
			hasUse[it.CallID] = true
		}
	}
	var tasks []*toolView
	var cur *scene
	inherited := opts.forkBefore
	newScene := func() *scene {
		p.Scenes = append(p.Scenes, scene{N: len(p.Scenes) + 1})
		return &p.Scenes[len(p.Scenes)-1]
	}
	for i := range t.Items {
		it := &t.Items[i]
		if it.Model != "" && !slices.Contains(p.Models, it.Model) {
			p.Models = append(p.Models, termtext.Strip(it.Model))
		}
		forkPoint := false
		if it.Inherited {
			inherited = true
		} else if inherited {
			inherited, forkPoint = false, true
		}
		if forkPoint && it.Kind != transcript.UserPrompt {
			cur = newScene()
			cur.Preamble = true
			cur.Forked = termtext.Strip(t.ForkedFrom)
		}
		if it.Kind == transcript.UserPrompt {
			cur = newScene()
			if forkPoint {
				cur.Forked = termtext.Strip(t.ForkedFrom)
			}
			cur.Time = fmtTime(it.Time)
			cur.Directive, cur.Source = it.Directive, termtext.Strip(it.Source)
			cur.Rewind = it.Rewind
			cur.Prompt = termtext.Strip(it.Text)
			cur.Images = images(it.Images)
			if strings.TrimSpace(cur.Prompt) == "" && len(cur.Images) > 0 {
				cur.Prompt = "(image)"
			}
			p.Prompts++
			continue
		}
		if cur == nil {
			cur = newScene()
			cur.Preamble = true
		}
		b := block{Kind: string(it.Kind), Time: fmtTime(it.Time), Model: termtext.Strip(it.Model), Images: images(it.Images)}
		switch it.Kind {
		case transcript.AssistantText:
			b.Kind, b.Text = "text", termtext.Strip(it.Text)
		case transcript.Thinking:
			b.Text = termtext.Strip(it.Text)
			p.Thinking++
		case transcript.ToolUse:
			res := results[it.CallID]
			if it.CallID == "" || used[res] {
				res = nil
			}
			if res != nil {
				used[res] = true
			}
			b.Kind = "tool"
			b.Tool = buildTool(*it, res)
			if it.Tool == transcript.ToolTask {
				tasks = append(tasks, b.Tool)
			}
			p.ToolCalls++
			if b.Tool.Error {
				p.Errors++
			}
		case transcript.ToolResult:
			if used[it] || (it.CallID != "" && hasUse[it.CallID] && results[it.CallID] == it) {
				continue
			}
			// A result whose call is not in the transcript.
			b.Kind = "orphan"
			b.Tool = buildTool(transcript.Item{Tool: "result", CallID: it.CallID}, it)
			if b.Tool.Error {
				p.Errors++
			}
		case transcript.Compaction:
			b.Text = transcript.Clip(termtext.Strip(it.Text), 300)
			p.Compacted++
		default:
			b.Kind, b.Text = "text", termtext.Strip(it.Text)
		}
		cur.Blocks = append(cur.Blocks, b)
	}
	if p.Prompts == 0 {
		p.Prompts = t.PromptCount
	}
	if len(opts.Subagents) > 0 {
		p.nest(tasks, opts)
	}
	p.SceneTotal = len(p.Scenes)
	// Markdown is rendered for the scenes shown only: it is the costly part.
	md := newMarkdown()
	for i := range p.Scenes {
		for j := range p.Scenes[i].Blocks {
			if b := &p.Scenes[i].Blocks[j]; b.Kind == "text" || b.Kind == "thinking" {
				b.HTML, _ = md.render(b.Text)
			}
		}
	}
	return p, nil
}

// maxSubagents bounds the subagents nested in one replay.
const maxSubagents = 200

// nest builds each subagent's view and puts it under its Task call.
func (p *page) nest(tasks []*toolView, opts Options) {
	subs := opts.Subagents
	if len(subs) > maxSubagents {
		subs = subs[:maxSubagents]
	}
	taken := map[*toolView]bool{}
	var unmatched []*subView
	for _, st := range subs {
		sp, err := build(st, Options{NoRedact: opts.NoRedact, Version: opts.Version})
		if err != nil {
			continue
		}
		p.Redactions += sp.Redactions
		sv := &subView{Title: sp.Title, Prompts: sp.Prompts, ToolCalls: sp.ToolCalls, Scenes: sp.Scenes}
		first := ""
		for _, it := range st.Items {
			if it.Kind == transcript.UserPrompt {
				first = strings.TrimSpace(it.Text)
				break
			}
		}
		var call *toolView
		for _, tv := range tasks {
			if !taken[tv] && tv.taskPrompt != "" && tv.taskPrompt == first {
				call = tv
				break
			}
		}
		if call == nil {
			unmatched = append(unmatched, sv)
			continue
		}
		taken[call] = true
		call.Sub = sv
	}
	// Unmatched subagents take the Task calls left, in order.
	for _, sv := range unmatched {
		i := slices.IndexFunc(tasks, func(tv *toolView) bool { return !taken[tv] })
		if i < 0 {
			p.Unlinked = append(p.Unlinked, sv)
			continue
		}
		taken[tasks[i]] = true
		tasks[i].Sub = sv
	}
}

// buildPage builds one page of a paged replay. Only the page's items
// are redacted and built (a 100 MB session has thousands of scenes); the
// header still counts the whole session, and the redaction notice counts
// what this page hides.
func buildPage(t *transcript.Transcript, opts Options) (*page, error) {
	maxScenes, maxBytes := opts.PageScenes, opts.PageBytes
	if maxScenes <= 0 {
		maxScenes = DefaultPageScenes
	}
	if maxBytes <= 0 {
		maxBytes = DefaultPageBytes
	}
	// Scenes start at each prompt (and at 0, for a preamble).
	var scenes []int
	for i, it := range t.Items {
		if i == 0 || it.Kind == transcript.UserPrompt {
			scenes = append(scenes, i)
		}
	}
	var pages []int // the first scene of each page
	size := 0
	for sc, start := range scenes {
		end := len(t.Items)
		if sc+1 < len(scenes) {
			end = scenes[sc+1]
		}
		n := itemsSize(t.Items[start:end])
		if sc == 0 || sc-pages[len(pages)-1] >= maxScenes || (size+n > maxBytes && size > 0) {
			pages = append(pages, sc)
			size = 0
		}
		size += n
	}
	page := max(opts.Page, 1)
	if page > max(len(pages), 1) {
		return nil, ErrNoPage
	}
	sub := *t
	forkBefore := false
	firstScene, lastScene := 0, len(scenes)
	if len(pages) > 0 {
		firstScene = pages[page-1]
		if page < len(pages) {
			lastScene = pages[page]
		}
		lo, hi := scenes[firstScene], len(t.Items)
		if lastScene < len(scenes) {
			hi = scenes[lastScene]
		}
		sub.Items = t.Items[lo:hi]
		forkBefore = lo > 0 && t.Items[lo-1].Inherited
	}
	one := opts
	one.PageURL = nil
	one.forkBefore = forkBefore
	one.Subagents = pageSubagents(sub.Items, opts.Subagents)
	p, err := build(&sub, one)
	if err != nil {
		return nil, err
	}
	for i := range p.Scenes {
		p.Scenes[i].N += firstScene
	}
	p.SceneTotal = len(scenes)
	p.Prompts, p.ToolCalls, p.Errors, p.Thinking, p.Compacted, p.Models = sessionCounts(t)
	if len(pages) > 1 {
		p.Pager = &pager{Page: page, Pages: len(pages), From: firstScene + 1, To: lastScene}
		if page > 1 {
			p.Pager.Prev = template.URL(opts.PageURL(page - 1))
			p.Pager.First = template.URL(opts.PageURL(1))
		}
		if page < len(pages) {
			p.Pager.Next = template.URL(opts.PageURL(page + 1))
			p.Pager.Last = template.URL(opts.PageURL(len(pages)))
		}
	}
	return p, nil
}

// itemsSize estimates the bytes items add to a page, outputs clipped as
// the page clips them.
func itemsSize(items []transcript.Item) int {
	n := 200
	for i := range items {
		it := &items[i]
		text := len(it.Text)
		if it.Kind == transcript.ToolResult {
			text = min(text, maxOutputBytes)
		}
		n += text + min(len(it.Input), maxArgsBytes+8*maxDiffLines) + 200
		for _, im := range it.Images {
			n += len(im.DataURL)
		}
	}
	return n
}

// pageSubagents keeps the subagents whose Task call is among items, so a
// page nests its own and lists no other page's as unlinked.
func pageSubagents(items []transcript.Item, subs []*transcript.Transcript) []*transcript.Transcript {
	if len(subs) == 0 {
		return nil
	}
	prompts := map[string]int{}
	for _, it := range items {
		if it.Kind == transcript.ToolUse && it.Tool == transcript.ToolTask {
			var in toolInput
			if json.Unmarshal(it.Input, &in) == nil {
				prompts[strings.TrimSpace(in.Prompt)]++
			}
		}
	}
	var out []*transcript.Transcript
	for _, st := range subs {
		for _, it := range st.Items {
			if it.Kind == transcript.UserPrompt {
				if p := strings.TrimSpace(it.Text); prompts[p] > 0 {
					prompts[p]--
					out = append(out, st)
				}
				break
			}
		}
	}
	return out
}

// sessionCounts are the header's figures over the whole session.
func sessionCounts(t *transcript.Transcript) (prompts, calls, errs, thinking, compacted int, models []string) {
	failed := map[string]bool{}
	for _, it := range t.Items {
		if it.Kind == transcript.ToolResult && it.IsError && it.CallID != "" {
			failed[it.CallID] = true
		}
	}
	for _, it := range t.Items {
		if it.Model != "" && len(models) < 20 {
			if m := termtext.Strip(it.Model); !slices.Contains(models, m) {
				models = append(models, m)
			}
		}
		switch it.Kind {
		case transcript.UserPrompt:
			prompts++
		case transcript.ToolUse:
			calls++
			if it.IsError || failed[it.CallID] {
				errs++
			}
		case transcript.Thinking:
			thinking++
		case transcript.Compaction:
			compacted++
		}
	}
	if prompts == 0 {
		prompts = t.PromptCount
	}
	return prompts, calls, errs, thinking, compacted, models
}

// redactedKinds says which kinds of secret the redacted t hides, most
// frequent first.
func redactedKinds(t *transcript.Transcript) []kindCount {
	kinds := map[string]int{}
	redact.CountLabels(t.Title, kinds)
	redact.CountLabels(t.CWD, kinds)
	for i := range t.Items {
		redact.CountLabels(t.Items[i].Text, kinds)
		redact.CountLabels(string(t.Items[i].Input), kinds)
	}
	out := make([]kindCount, 0, len(kinds))
	for k, n := range kinds {
		out = append(out, kindCount{termtext.Strip(k), n})
	}
	slices.SortFunc(out, func(a, b kindCount) int {
		if a.N != b.N {
			return b.N - a.N
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	return out
}

var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("replay").Funcs(template.FuncMap{
		"csp":     func() string { return CSP },
		"codeCSS": codeCSS,
	}).Parse(pageHTML))
})
