package stats

import (
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/transcript"
)

// Grouping keys for Compute.
const (
	ByNone     = ""
	ByDay      = "day"
	ByProvider = "provider"
	ByModel    = "model"
)

// Group is the analytics of a set of sessions. JSON keys are stable.
type Group struct {
	Key          string         `json:"key,omitempty"`
	Sessions     int            `json:"sessions"`
	Prompts      int            `json:"prompts"`
	ToolCalls    int            `json:"tool_calls"`
	Tools        map[string]int `json:"tools"`
	ToolErrors   int            `json:"tool_errors"`
	FilesEdited  int            `json:"files_edited"`
	LinesAdded   int            `json:"lines_added"`
	LinesRemoved int            `json:"lines_removed"`
	DurationMS   int64          `json:"duration_ms"`
	Tokens       TokenCounts    `json:"tokens"`
	// CostUSD is approximate: provider-recorded costs where a format has
	// them, else the built-in price table; unpriced usage is left out and
	// listed in UnpricedModels.
	CostUSD        float64  `json:"cost_usd"`
	UnpricedModels []string `json:"unpriced_models,omitempty"`
	UnpricedTokens int64    `json:"unpriced_tokens,omitempty"`

	files map[string]bool
}

// TokenCounts mirrors transcript.Usage with a total.
type TokenCounts struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Reasoning  int64 `json:"reasoning"`
	Total      int64 `json:"total"`
}

func (t *TokenCounts) add(u transcript.Usage) {
	t.Input += u.Input
	t.Output += u.Output
	t.CacheRead += u.CacheRead
	t.CacheWrite += u.CacheWrite
	t.Reasoning += u.Reasoning
	t.Total += u.Total()
}

// FileStat is one edited file in a report.
type FileStat struct {
	Path string `json:"path"`
	FileChange
}

// Report is the output of Compute.
type Report struct {
	By     string  `json:"by,omitempty"`
	Total  Group   `json:"total"`
	Groups []Group `json:"groups,omitempty"`
	// Files are the most edited files overall (by lines changed), at most
	// TopFiles of them.
	Files []FileStat `json:"files,omitempty"`
	// Unanalyzed counts sessions whose transcript could not be read in
	// full; they contribute summary counts only.
	Unanalyzed int `json:"unanalyzed,omitempty"`
}

// TopFiles bounds Report.Files.
const TopFiles = 20

// Compute aggregates sessions, grouped by by (ByNone, ByDay, ByProvider or
// ByModel). Days are calendar days in loc of each session's start.
func Compute(sessions []history.Analyzed, by string, loc *time.Location) (Report, error) {
	switch by {
	case ByNone, ByDay, ByProvider, ByModel:
	default:
		return Report{}, fmt.Errorf("group by %q: want day, provider or model", by)
	}
	if loc == nil {
		loc = time.Local
	}
	r := Report{By: by}
	total := newGroup("")
	groups := map[string]*Group{}
	group := func(k string) *Group {
		g := groups[k]
		if g == nil {
			g = newGroup(k)
			groups[k] = g
		}
		return g
	}
	allFiles := map[string]FileChange{}
	details, ok := decodeDetails(sessions)
	for i, a := range sessions {
		s := a.Session
		d, analyzed := details[i], ok[i]
		if !analyzed {
			r.Unanalyzed++
		}
		for _, fs := range d.files {
			f := allFiles[fs.Path]
			f.Edits += fs.Edits
			f.Added += fs.Added
			f.Removed += fs.Removed
			allFiles[fs.Path] = f
		}
		var key string
		switch by {
		case ByDay:
			key = "unknown"
			if !s.StartedAt.IsZero() {
				key = s.StartedAt.In(loc).Format(time.DateOnly)
			}
		case ByProvider:
			key = s.Provider
		case ByModel:
			key = modelKey(s.Model)
		}
		targets := []*Group{total}
		if by != ByNone {
			targets = append(targets, group(key))
		}
		for _, g := range targets {
			g.addActivity(s, d, analyzed)
		}
		// Tokens and cost: split by model when grouping by model.
		for _, mu := range usageByModel(s) {
			tg := []*Group{total}
			switch by {
			case ByModel:
				tg = append(tg, group(modelKey(mu.model)))
			case ByNone:
			default:
				tg = append(tg, group(key))
			}
			for _, g := range tg {
				g.addUsage(mu.model, mu.usage, s.CostUSD > 0)
			}
		}
		if s.CostUSD > 0 {
			// A provider-recorded cost replaces the table for the session.
			costKey := key
			if by == ByModel {
				costKey = modelKey(s.Model)
			}
			total.CostUSD += s.CostUSD
			if by != ByNone {
				group(costKey).CostUSD += s.CostUSD
			}
		}
	}
	r.Total = *total.finish()
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		r.Groups = append(r.Groups, *groups[k].finish())
	}
	for p, fc := range allFiles {
		r.Files = append(r.Files, FileStat{p, fc})
	}
	sort.Slice(r.Files, func(i, j int) bool {
		a, b := r.Files[i], r.Files[j]
		if a.Added+a.Removed != b.Added+b.Removed {
			return a.Added+a.Removed > b.Added+b.Removed
		}
		return a.Path < b.Path
	})
	if len(r.Files) > TopFiles {
		r.Files = r.Files[:TopFiles]
	}
	return r, nil
}

// detailView is a decoded Detail in slices: cheaper to build and to
// aggregate than the maps of Detail.
type detailView struct {
	tools  []toolCount
	errors int
	files  []FileStat
}

type toolCount struct {
	name string
	n    int
}

// decodeDetails decodes the stored analyses on every core: with thousands
// of sessions this is most of a warm `muster stats`.
func decodeDetails(sessions []history.Analyzed) ([]detailView, []bool) {
	details := make([]detailView, len(sessions))
	ok := make([]bool, len(sessions))
	workers := min(runtime.GOMAXPROCS(0), len(sessions)/256+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(sessions); i += workers {
				details[i], ok[i] = decodeDetail(sessions[i].Detail)
			}
		})
	}
	wg.Wait()
	return details, ok
}

// decodeDetail reads Detail JSON with gjson, several times faster than
// encoding/json into maps.
func decodeDetail(raw json.RawMessage) (detailView, bool) {
	var d detailView
	if raw == nil || !transcript.ValidJSON(raw) {
		return d, false
	}
	r := gjson.ParseBytes(raw)
	if !r.IsObject() {
		return d, false
	}
	r.Get("tools").ForEach(func(k, v gjson.Result) bool {
		d.tools = append(d.tools, toolCount{k.String(), int(v.Int())})
		return true
	})
	d.errors = int(r.Get("tool_errors").Int())
	r.Get("files").ForEach(func(k, v gjson.Result) bool {
		fs := FileStat{Path: k.String()}
		v.ForEach(func(fk, fv gjson.Result) bool {
			switch fk.Str {
			case "edits":
				fs.Edits = int(fv.Int())
			case "added":
				fs.Added = int(fv.Int())
			case "removed":
				fs.Removed = int(fv.Int())
			}
			return true
		})
		d.files = append(d.files, fs)
		return true
	})
	return d, true
}

func newGroup(k string) *Group {
	return &Group{Key: k, Tools: map[string]int{}, files: map[string]bool{}}
}

func modelKey(m string) string {
	if m == "" {
		return "unknown"
	}
	return m
}

// addActivity counts a session's activity. A sub-agent (ParentID set) is
// part of its parent's conversation: its tool calls, edits and tokens
// count, but it is not a session of its own, its prompts are the parent
// agent's instructions, not a person's, and its time is within the
// parent's.
func (g *Group) addActivity(s transcript.Session, d detailView, analyzed bool) {
	sub := s.ParentID != ""
	if !sub {
		g.Sessions++
		g.Prompts += s.PromptCount
	}
	if analyzed {
		for _, tc := range d.tools {
			g.Tools[tc.name] += tc.n
			g.ToolCalls += tc.n
		}
	} else {
		g.ToolCalls += s.ToolCallCount
	}
	g.ToolErrors += d.errors
	for _, fs := range d.files {
		g.files[fs.Path] = true
		g.LinesAdded += fs.Added
		g.LinesRemoved += fs.Removed
	}
	if !sub && !s.StartedAt.IsZero() && s.EndedAt.After(s.StartedAt) {
		g.DurationMS += s.EndedAt.Sub(s.StartedAt).Milliseconds()
	}
}

func (g *Group) addUsage(model string, u transcript.Usage, recordedCost bool) {
	g.Tokens.add(u)
	if recordedCost {
		return
	}
	if c, ok := Cost(model, u); ok {
		g.CostUSD += c
		return
	}
	if u.Total() > 0 {
		g.UnpricedTokens += u.Total()
		name := modelKey(model)
		if !slices.Contains(g.UnpricedModels, name) {
			g.UnpricedModels = append(g.UnpricedModels, name)
		}
	}
}

func (g *Group) finish() *Group {
	g.FilesEdited = len(g.files)
	slices.Sort(g.UnpricedModels)
	return g
}

type modelUsage struct {
	model string
	usage transcript.Usage
}

// usageByModel splits a session's usage per model; usage the split does not
// cover goes to the session's main model.
func usageByModel(s transcript.Session) []modelUsage {
	if s.Usage == nil && len(s.UsageByModel) == 0 {
		return nil
	}
	var out []modelUsage
	var covered transcript.Usage
	for _, m := range slices.Sorted(maps.Keys(s.UsageByModel)) {
		u := s.UsageByModel[m]
		out = append(out, modelUsage{m, u})
		covered.Add(u)
	}
	if s.Usage != nil {
		rest := transcript.Usage{
			Input:      max(s.Usage.Input-covered.Input, 0),
			Output:     max(s.Usage.Output-covered.Output, 0),
			CacheRead:  max(s.Usage.CacheRead-covered.CacheRead, 0),
			CacheWrite: max(s.Usage.CacheWrite-covered.CacheWrite, 0),
			Reasoning:  max(s.Usage.Reasoning-covered.Reasoning, 0),
		}
		if rest.Total() > 0 || rest.Reasoning > 0 {
			out = append(out, modelUsage{s.Model, rest})
		}
	}
	return out
}
