// Package stats turns indexed sessions into analytics: prompts, tool calls
// by canonical name, files edited with lines added and removed (from Edit,
// MultiEdit, Write and ApplyPatch calls), tokens, durations and an
// approximate cost from a small built-in price table (prices.go). The
// per-session part needs a full parse; Analyzer hands it to the history
// index, which stores it beside the summary so it is computed once per
// file version.
//
// Usage is counted response by response (transcript.UsageEntry): a
// response that several files record (a resumed or forked conversation's
// new file repeating the old one, a sub-agent's messages echoed in its
// parent) counts once, in the earliest-starting session, as ccusage
// de-duplicates Claude usage by message id and request id across files.
// Reports group it by the response's own time (day, week, month, 5-hour
// block), by conversation, project, provider or model.
package stats

import (
	"encoding/json"
	"path/filepath"
	"slices"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/replay/diff"
	"github.com/musterhq/muster/internal/transcript"
)

// AnalyzerVersion changes whenever Detail's meaning or its stored format
// does, so stored analyses are recomputed. 2: binary, with the usage log;
// 3: a brief with the usage rolled up, and the log apart; 4: the brief's
// paths front-coded, at its end.
const AnalyzerVersion = 4

// Detail is what a full parse adds to a session summary.
type Detail struct {
	// Tools counts tool calls by canonical name (the provider's own name
	// when it has no canonical one).
	Tools      map[string]int `json:"tools,omitempty"`
	ToolErrors int            `json:"tool_errors,omitempty"`
	// Files are the files successfully edited, by path (relative patch
	// paths joined to the session's cwd).
	Files map[string]FileChange `json:"files,omitempty"`
}

// FileChange sums the edits to one file.
type FileChange struct {
	Edits   int `json:"edits"`
	Added   int `json:"added"`
	Removed int `json:"removed"`
}

// Analyzer is the history.Analyzer that stores Detail and the transcript's
// usage log (detail.go).
func Analyzer() *history.Analyzer {
	return &history.Analyzer{Version: AnalyzerVersion, Analyze: func(t *transcript.Transcript) (history.Analysis, error) {
		brief, full := encodeAnalysis(Analyze(t), usageLog(t.Session, t.UsageLog), t.CostUSD)
		return history.Analysis{Brief: brief, Full: full}, nil
	}}
}

// usageLog is what a report counts of a session: its usage log, responses
// of unknown time dated at the session's start; or, for a format without
// one, the session's usage per model dated at its start, and a recorded
// cost without usage as an empty response of the session's model.
func usageLog(s transcript.Session, log []transcript.UsageEntry) []transcript.UsageEntry {
	if len(log) == 0 {
		log = nil
		for _, mu := range usageByModel(s) {
			log = append(log, transcript.UsageEntry{Time: s.StartedAt, Model: mu.model, Usage: mu.usage})
		}
		if len(log) == 0 && s.CostUSD > 0 {
			log = append(log, transcript.UsageEntry{Time: s.StartedAt, Model: s.Model})
		}
		return log
	}
	out := slices.Clone(log)
	for i := range out {
		if out[i].Time.IsZero() {
			out[i].Time = s.StartedAt
		}
	}
	return out
}

// Analyze computes a transcript's Detail. An edit whose result is an error
// (the old string was not found, the patch did not apply) changed nothing
// and is not counted as an edit, only as a tool call.
func Analyze(t *transcript.Transcript) Detail {
	d := Detail{}
	failed := map[string]bool{}
	for _, it := range t.Items {
		if it.Kind == transcript.ToolResult && it.IsError && it.CallID != "" {
			failed[it.CallID] = true
		}
	}
	for _, it := range t.Items {
		if it.Kind != transcript.ToolUse {
			continue
		}
		name := it.Tool
		if name == "" {
			name = it.RawTool
		}
		if name == "" {
			name = "unknown"
		}
		if d.Tools == nil {
			d.Tools = map[string]int{}
		}
		d.Tools[name]++
		if it.IsError || (it.CallID != "" && failed[it.CallID]) {
			d.ToolErrors++
			continue
		}
		for _, e := range Edits(it, t.CWD) {
			if d.Files == nil {
				d.Files = map[string]FileChange{}
			}
			fc := d.Files[e.Path]
			fc.Edits++
			fc.Added += e.Added
			fc.Removed += e.Removed
			d.Files[e.Path] = fc
		}
	}
	return d
}

// Edit is one file's change by one tool call.
type Edit struct {
	Path           string
	Added, Removed int
}

type editInput struct {
	FilePath  string `json:"file_path"`
	OldString string `json:"old_string"`
	NewString string `json:"new_string"`
	Content   string `json:"content"`
	Patch     string `json:"patch"`
	Edits     []struct {
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	} `json:"edits"`
}

// Edits returns the file changes a canonical tool call makes: Edit and
// MultiEdit diff their old and new strings, Write counts its content as
// added (the previous content is unknown), ApplyPatch counts its hunks.
func Edits(it transcript.Item, cwd string) []Edit {
	switch it.Tool {
	case transcript.ToolEdit, transcript.ToolMultiEdit, transcript.ToolWrite, transcript.ToolApplyPatch:
	default:
		return nil
	}
	var in editInput
	if json.Unmarshal(it.Input, &in) != nil {
		return nil
	}
	abs := func(p string) string {
		if p != "" && !filepath.IsAbs(p) && cwd != "" {
			return filepath.Join(cwd, p)
		}
		return p
	}
	switch it.Tool {
	case transcript.ToolEdit:
		if in.FilePath == "" {
			return nil
		}
		a, r := diff.Count(diff.Strings(in.OldString, in.NewString))
		return []Edit{{abs(in.FilePath), a, r}}
	case transcript.ToolMultiEdit:
		if in.FilePath == "" {
			return nil
		}
		e := Edit{Path: abs(in.FilePath)}
		for _, m := range in.Edits {
			a, r := diff.Count(diff.Strings(m.OldString, m.NewString))
			e.Added += a
			e.Removed += r
		}
		return []Edit{e}
	case transcript.ToolWrite:
		if in.FilePath == "" {
			return nil
		}
		return []Edit{{abs(in.FilePath), len(diff.SplitLines(in.Content)), 0}}
	case transcript.ToolApplyPatch:
		var out []Edit
		for _, fp := range diff.ParsePatch(in.Patch) {
			p := fp.Path
			if fp.MoveTo != "" {
				p = fp.MoveTo
			}
			if p == "" {
				continue
			}
			out = append(out, Edit{abs(p), fp.Added, fp.Removed})
		}
		return out
	}
	return nil
}
