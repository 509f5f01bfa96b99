package stats

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/transcript"
)

// Grouping keys for Compute.
const (
	ByNone     = ""
	ByDay      = "day"
	ByWeek     = "week"
	ByMonth    = "month"
	BySession  = "session"
	ByBlock    = "block"
	ByProject  = "project"
	ByProvider = "provider"
	ByModel    = "model"
)

// Groupings lists the accepted grouping keys, for help and errors.
var Groupings = []string{ByDay, ByWeek, ByMonth, BySession, ByBlock, ByProject, ByProvider, ByModel}

// BlockLength is the length of a billing block: Claude's usage limits reset
// five hours after the first message of a window (ccusage's blocks report).
const BlockLength = 5 * time.Hour

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
	// Models are the models whose usage the group counts.
	Models []string `json:"models,omitempty"`
	// Project and LastActivity describe a conversation (--by session).
	Project      string    `json:"project,omitempty"`
	LastActivity time.Time `json:"last_activity,omitzero"`

	files   idSet // numbered by ComputeWith
	convs   idSet
	models  map[string]bool
	byModel map[int32]*transcript.Usage // table-priced usage, priced by finish
	mt      *modelTable
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

// Block is a 5-hour billing block (ccusage's blocks report): it starts at
// the hour of its first response (UTC hours) and holds the responses until
// BlockLength after that, or until a pause of BlockLength.
type Block struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// LastActivity is the time of the block's last response.
	LastActivity time.Time `json:"last_activity"`
	// Active is set for the block now falls in, with activity less than
	// BlockLength ago.
	Active         bool        `json:"active"`
	Responses      int         `json:"responses"`
	Tokens         TokenCounts `json:"tokens"`
	CostUSD        float64     `json:"cost_usd"`
	UnpricedModels []string    `json:"unpriced_models,omitempty"`
	UnpricedTokens int64       `json:"unpriced_tokens,omitempty"`
	Models         []string    `json:"models,omitempty"`
	// BurnRate and Projection are set for the active block.
	BurnRate   *BurnRate   `json:"burn_rate,omitempty"`
	Projection *Projection `json:"projection,omitempty"`
}

// BurnRate is the active block's pace, from its first to its last response.
type BurnRate struct {
	TokensPerMinute float64 `json:"tokens_per_minute"`
	CostPerHour     float64 `json:"cost_per_hour_usd"`
}

// Projection is where the active block ends at its current burn rate.
type Projection struct {
	Tokens           int64   `json:"tokens"`
	CostUSD          float64 `json:"cost_usd"`
	RemainingMinutes int     `json:"remaining_minutes"`
}

// Report is the output of Compute.
type Report struct {
	By     string  `json:"by,omitempty"`
	Total  Group   `json:"total"`
	Groups []Group `json:"groups,omitempty"`
	// Blocks are the 5-hour blocks, oldest first (--by block).
	Blocks []Block `json:"blocks,omitempty"`
	// Files are the most edited files overall (by lines changed), at most
	// TopFiles of them.
	Files []FileStat `json:"files,omitempty"`
	// Unanalyzed counts sessions whose transcript could not be read in
	// full; they contribute summary counts only.
	Unanalyzed int `json:"unanalyzed,omitempty"`
	// Duplicates counts responses left out because an earlier session
	// (a resumed or forked conversation's original) already counted them.
	Duplicates int `json:"duplicate_responses,omitempty"`
	// PriceTable names the price table the costs come from.
	PriceTable PriceTableInfo `json:"price_table"`
}

// TopFiles bounds Report.Files.
const TopFiles = 20

// Options tune ComputeWith.
type Options struct {
	By string
	// Loc is the time zone of days, weeks and months; nil is time.Local.
	Loc *time.Location
	// Since and Until, when set, keep the usage of responses in
	// [Since, Until) (a response of unknown time is dated at its session's
	// start); activity counts are by session and the caller selects those.
	Since, Until time.Time
	// Now places the active block; zero is time.Now.
	Now time.Time
}

// Compute aggregates sessions, grouped by by (ByNone or one of Groupings).
// Days are calendar days in loc.
func Compute(ctx context.Context, sessions []history.Analyzed, by string, loc *time.Location) (Report, error) {
	return ComputeWith(ctx, sessions, Options{By: by, Loc: loc})
}

// ComputeWith aggregates sessions as o says. Activity (sessions, prompts,
// tools, files, durations) is grouped by each session's start; tokens and
// cost by each response's own time, after dropping responses an
// earlier-starting session already counted. It reads the full analyses of
// the sessions whose rolled-up usage does not answer (history.LoadFull,
// which keeps them in sessions).
func ComputeWith(ctx context.Context, sessions []history.Analyzed, o Options) (Report, error) {
	by := o.By
	if by != ByNone && !slices.Contains(Groupings, by) {
		return Report{}, fmt.Errorf("group by %q: want one of %v", by, Groupings)
	}
	loc := o.Loc
	if loc == nil {
		loc = time.Local
	}
	r := Report{By: by, PriceTable: PriceTableInfo{AsOf: PricesAsOf, Source: PricesSource}}
	mt := newModelTable()
	total := newGroup("", mt)
	groups := map[string]*Group{}
	group := func(k string) *Group {
		g := groups[k]
		if g == nil {
			g = newGroup(k, mt)
			groups[k] = g
		}
		return g
	}
	details, ok := decodeDetails(sessions)
	since, until := unixMS(o.Since), unixMS(o.Until)
	timeKey := func(ms int64) string {
		if ms == 0 {
			return "unknown"
		}
		t := time.UnixMilli(ms).In(loc)
		switch by {
		case ByWeek:
			// Weeks start on Sunday, as ccusage's weekly report's do.
			d := t.AddDate(0, 0, -int(t.Weekday()))
			return d.Format(time.DateOnly)
		case ByMonth:
			return t.Format("2006-01")
		}
		return t.Format(time.DateOnly)
	}
	// A rollup row answers when its quarter falls on one side of each
	// bound and in one period; else the session's log is read.
	cuts := func(a, b int64) bool { return a < b && b < a+quarter }
	split := map[int64]bool{}
	needLog := func(d *detailView) bool {
		if by == ByBlock {
			return true
		}
		for _, e := range d.entries {
			if !e.rolled {
				continue
			}
			if (since != 0 && cuts(e.ms, since)) || (until != 0 && cuts(e.ms, until)) {
				return true
			}
			if by == ByDay || by == ByWeek || by == ByMonth {
				cut, seen := split[e.ms]
				if !seen {
					cut = timeKey(e.ms) != timeKey(e.ms+quarter-1)
					split[e.ms] = cut
				}
				if cut {
					return true
				}
			}
		}
		return false
	}
	dups, err := dedupe(ctx, sessions, details, ok, mt, needLog)
	if err != nil {
		return Report{}, err
	}
	r.Duplicates = dups

	// Conversations and edited files are numbered once, so that a group
	// counts its distinct ones in bitsets: a map of names in every group
	// (growing as it filled) was a seventh of a warm `muster stats`.
	convs := make(map[conversation]int32, len(sessions))
	convOf := make([]int32, len(sessions))
	// Sub-agents take their parent's directory in project groupings: the
	// conversation is the parent's.
	var cwdOf []string
	for i, a := range sessions {
		c := conversationOf(a.Session)
		id, seen := convs[c]
		if !seen {
			id = int32(len(convs))
			convs[c] = id
			cwdOf = append(cwdOf, "")
		}
		convOf[i] = id
		if a.Session.ParentID == "" {
			cwdOf[id] = a.Session.CWD
		}
	}
	project := func(i int) string {
		p := sessions[i].Session.CWD
		if c := cwdOf[convOf[i]]; c != "" {
			p = c
		}
		if p == "" {
			return "unknown"
		}
		return p
	}
	activityKey := func(i int) string {
		s := sessions[i].Session
		switch by {
		case ByDay, ByWeek, ByMonth:
			return timeKey(unixMS(s.StartedAt))
		case BySession:
			return conversationOf(s).String()
		case ByProject:
			return project(i)
		case ByProvider:
			return s.Provider
		case ByModel:
			return modelKey(s.Model)
		}
		return ""
	}
	var all []entry // for blocks
	fileIDs := map[string]int32{}
	var files []FileStat
	var edited []fileEdit
	var path []byte
	for i, a := range sessions {
		s := a.Session
		d, analyzed := &details[i], ok[i]
		if !analyzed {
			r.Unanalyzed++
		}
		edited = edited[:0]
		it := d.fileIter(path)
		for it.next() {
			// The lookup by string(it.path) copies nothing; only a new path
			// becomes a string.
			id, seen := fileIDs[string(it.path)]
			if !seen {
				id = int32(len(files))
				p := string(it.path)
				fileIDs[p] = id
				files = append(files, FileStat{Path: p})
			}
			f := &files[id]
			f.Edits += it.Edits
			f.Added += it.Added
			f.Removed += it.Removed
			edited = append(edited, fileEdit{id, it.Added, it.Removed})
		}
		path = it.path
		key := activityKey(i)
		total.addActivity(s, convOf[i], d, edited, analyzed)
		if by != ByNone && by != ByBlock {
			g := group(key)
			g.addActivity(s, convOf[i], d, edited, analyzed)
			if by == BySession {
				g.Project = project(i)
				g.LastActivity = later(g.LastActivity, s.EndedAt, s.StartedAt)
			}
		}
		for _, e := range d.entries {
			if e.ms == 0 {
				e.ms = unixMS(s.StartedAt)
				e.last = e.ms
			}
			if (since != 0 && e.ms < since) || (until != 0 && e.ms >= until) {
				continue
			}
			total.addUsage(e)
			switch by {
			case ByNone:
			case ByBlock:
				all = append(all, e)
			case ByDay, ByWeek, ByMonth:
				group(timeKey(e.ms)).addUsage(e)
			case ByModel:
				group(modelKey(mt.names[e.model])).addUsage(e)
			default:
				g := group(key)
				g.addUsage(e)
				if by == BySession && e.last != 0 {
					g.LastActivity = later(g.LastActivity, time.UnixMilli(e.last))
				}
			}
		}
	}
	r.Total = *total.finish()
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		r.Groups = append(r.Groups, *groups[k].finish())
	}
	if by == ByBlock {
		now := o.Now
		if now.IsZero() {
			now = time.Now()
		}
		r.Blocks = blocks(all, now, mt)
	}
	r.Files = files
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

// roundUSD drops the float noise of summing thousands of small costs
// (0.0059099999999999995 for 0.00591); a nano-dollar is far below what the
// price table can promise.
func roundUSD(x float64) float64 { return math.Round(x*1e9) / 1e9 }

func later(t time.Time, ts ...time.Time) time.Time {
	for _, x := range ts {
		if x.After(t) {
			t = x
		}
	}
	return t
}

// dedupe gives every session its usage entries and drops the responses
// an earlier-starting session already holds, in place. Sessions are
// visited in order of start (then path), so a resumed conversation's
// repeats count in the original, as ccusage's first-file-wins rule counts
// them. The brief's keys find the repeats; a session with some, or whose
// rollup does not answer (needLog), gets its full log instead of its
// rollup. A session without analysis counts its summary's totals. It
// returns how many responses were dropped.
func dedupe(ctx context.Context, sessions []history.Analyzed, details []detailView, ok []bool, mt *modelTable, needLog func(*detailView) bool) (int, error) {
	order := make([]int, len(sessions))
	n := 0
	for i := range order {
		order[i] = i
		n += len(details[i].keys) / 8
	}
	slices.SortStableFunc(order, func(a, b int) int {
		sa, sb := sessions[a].Session, sessions[b].Session
		return cmp.Or(sa.StartedAt.Compare(sb.StartedAt), cmp.Compare(sa.Path, sb.Path))
	})
	// A key can repeat only if its bit in a filter of a bit or so a byte
	// of keys was set by the time it came; only those keys go in the exact
	// sets that tell, in order of start, an original from its repeats. An
	// exact set of every key (a megabyte for a thousand sessions, read and
	// written at random) was most of this function in a fresh process.
	filter := newBitFilter(n)
	var maybe []uint64
	for i := range sessions {
		if !ok[i] {
			continue
		}
		for k := details[i].keys; len(k) >= 8; k = k[8:] {
			if key := binary.LittleEndian.Uint64(k); filter.testAndSet(key) {
				maybe = append(maybe, key)
			}
		}
	}
	repeated := newKeySet(len(maybe))
	for _, key := range maybe {
		repeated.add(key)
	}
	seen := newKeySet(len(maybe))
	dups := 0
	var logs []*history.Analyzed
	useLog := make([]bool, len(sessions))
	drop := map[int]map[uint64]bool{}
	for _, i := range order {
		d := &details[i]
		if !ok[i] {
			d.entries = summaryEntries(sessions[i].Session, mt)
			continue
		}
		for k := d.keys; len(k) >= 8; k = k[8:] {
			if key := binary.LittleEndian.Uint64(k); repeated.has(key) && !seen.add(key) {
				dups++
				if drop[i] == nil {
					drop[i] = map[uint64]bool{}
				}
				drop[i][key] = true
			}
		}
		if drop[i] != nil || needLog(d) {
			useLog[i] = true
			logs = append(logs, &sessions[i])
		}
	}
	if err := history.LoadFull(ctx, logs); err != nil {
		return 0, err
	}
	for i := range sessions {
		d := &details[i]
		if !ok[i] {
			continue
		}
		if useLog[i] {
			if !decodeFull(d, sessions[i].Full) {
				return 0, fmt.Errorf("the usage log of %s is unreadable; run muster stats again to re-index it", sessions[i].Session.Path)
			}
			if dr := drop[i]; dr != nil {
				d.entries = slices.DeleteFunc(d.entries, func(e entry) bool { return e.key != 0 && dr[e.key] })
			}
			if d.cost > 0 {
				shareCost(d.entries, d.cost)
			}
		}
		global := make([]int32, len(d.models))
		for j, m := range d.models {
			global[j] = mt.intern(m)
		}
		for j := range d.entries {
			d.entries[j].model = global[d.entries[j].model]
		}
	}
	return dups, nil
}

// keySet is a set of non-zero 64-bit keys, open addressing in one slice:
// with a response per entry, a Go map's buckets were a tenth of a warm
// `muster stats`.
type keySet struct {
	slots []uint64
	mask  uint64
}

func newKeySet(n int) *keySet {
	// At most two thirds full: a few probes a key, and a table of
	// thousands of sessions' responses is megabytes that a fresh process
	// pays for page by page.
	size := uint64(16)
	for size < uint64(n)+uint64(n)/2 {
		size <<= 1
	}
	return &keySet{slots: make([]uint64, size), mask: size - 1}
}

// has reports whether k (not 0) is in s.
func (s *keySet) has(k uint64) bool {
	for i := (k * 0x9e3779b97f4a7c15) >> 32 & s.mask; ; i = (i + 1) & s.mask {
		switch s.slots[i] {
		case 0:
			return false
		case k:
			return true
		}
	}
}

// bitFilter is a bit for each of a power of two of hash buckets.
type bitFilter struct {
	words []uint64
	shift uint
}

// newBitFilter holds n keys in at least 8n bits: at most one key in eight
// finds its bit set by another.
func newBitFilter(n int) *bitFilter {
	bits := uint(6)
	for uint64(1)<<bits < uint64(n)*8 {
		bits++
	}
	return &bitFilter{words: make([]uint64, 1<<(bits-6)), shift: 64 - bits}
}

// testAndSet sets k's bit and reports whether it was set already.
func (f *bitFilter) testAndSet(k uint64) bool {
	b := (k * 0x9e3779b97f4a7c15) >> f.shift
	w, bit := &f.words[b>>6], uint64(1)<<(b&63)
	was := *w&bit != 0
	*w |= bit
	return was
}

// add inserts k (not 0) and reports whether it was new. The keys are
// already hashes; the multiply spreads them anyway.
func (s *keySet) add(k uint64) bool {
	for i := (k * 0x9e3779b97f4a7c15) >> 32 & s.mask; ; i = (i + 1) & s.mask {
		switch s.slots[i] {
		case 0:
			s.slots[i] = k
			return true
		case k:
			return false
		}
	}
}

// summaryEntries stands in for a missing usage log: the session's usage
// per model, dated at its start. A provider-recorded cost is shared out by
// tokens.
func summaryEntries(s transcript.Session, mt *modelTable) []entry {
	var out []entry
	for _, mu := range usageByModel(s) {
		out = append(out, entry{ms: unixMS(s.StartedAt), model: mt.intern(mu.model), u: mu.usage})
	}
	if s.CostUSD > 0 {
		if len(out) == 0 {
			out = append(out, entry{ms: unixMS(s.StartedAt), model: mt.intern(s.Model)})
		}
		shareCost(out, s.CostUSD)
	}
	return out
}

func shareCost(es []entry, cost float64) {
	var tot int64
	for _, e := range es {
		tot += e.u.Total()
	}
	for i := range es {
		es[i].recorded = true
		switch {
		case tot > 0:
			es[i].cost = cost * float64(es[i].u.Total()) / float64(tot)
		case i == 0:
			es[i].cost = cost
		}
	}
}

// blocks splits the entries into 5-hour blocks as ccusage does: a block
// starts at the UTC hour of its first response and takes every later
// response until one comes more than BlockLength after the block's start
// or after the previous response.
func blocks(es []entry, now time.Time, mt *modelTable) []Block {
	slices.SortStableFunc(es, func(a, b entry) int { return cmp.Compare(a.ms, b.ms) })
	var out []Block
	var g *Group
	var b *Block
	var first int64
	flush := func() {
		if b == nil {
			return
		}
		g.finish()
		b.Tokens, b.CostUSD, b.UnpricedModels, b.UnpricedTokens, b.Models = g.Tokens, g.CostUSD, g.UnpricedModels, g.UnpricedTokens, g.Models
		if now.Before(b.End) && now.Sub(b.LastActivity) < BlockLength {
			b.Active = true
			if mins := b.LastActivity.Sub(time.UnixMilli(first)).Minutes(); mins > 0 {
				br := &BurnRate{TokensPerMinute: float64(b.Tokens.Total) / mins, CostPerHour: roundUSD(b.CostUSD / mins * 60)}
				b.BurnRate = br
				left := max(b.End.Sub(now).Minutes(), 0)
				b.Projection = &Projection{
					Tokens:           b.Tokens.Total + int64(br.TokensPerMinute*left),
					CostUSD:          roundUSD(b.CostUSD + br.CostPerHour*left/60),
					RemainingMinutes: int(left),
				}
			}
		}
		out = append(out, *b)
	}
	for _, e := range es {
		if e.ms == 0 {
			continue
		}
		t := time.UnixMilli(e.ms)
		if b == nil || t.Sub(b.Start) > BlockLength || t.Sub(b.LastActivity) > BlockLength {
			flush()
			start := t.UTC().Truncate(time.Hour)
			b = &Block{Start: start, End: start.Add(BlockLength)}
			g = newGroup("", mt)
			first = e.ms
		}
		b.LastActivity = t
		b.Responses++
		g.addUsage(e)
	}
	flush()
	return out
}

// decodeDetails decodes the stored briefs on every core.
func decodeDetails(sessions []history.Analyzed) ([]detailView, []bool) {
	details := make([]detailView, len(sessions))
	ok := make([]bool, len(sessions))
	workers := min(runtime.GOMAXPROCS(0), len(sessions)/256+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(sessions); i += workers {
				details[i], ok[i] = decodeBrief(sessions[i].Brief)
			}
		})
	}
	wg.Wait()
	return details, ok
}

func newGroup(k string, mt *modelTable) *Group {
	return &Group{Key: k, Tools: map[string]int{}, models: map[string]bool{}, byModel: map[int32]*transcript.Usage{}, mt: mt}
}

// conversation names the conversation a session belongs to: its own, or
// its parent's for a sub-agent.
type conversation struct{ provider, id string }

func conversationOf(s transcript.Session) conversation {
	if s.ParentID != "" {
		return conversation{s.Provider, s.ParentID}
	}
	return conversation{s.Provider, s.ID}
}

func (c conversation) String() string { return c.provider + ":" + c.id }

// idSet is a set of small non-negative numbers, a bit each, with its size.
type idSet struct {
	words []uint64
	n     int
}

func (s *idSet) add(id int32) {
	w := int(id >> 6)
	if w >= len(s.words) {
		s.words = append(s.words, make([]uint64, w+1-len(s.words))...)
	}
	if bit := uint64(1) << (id & 63); s.words[w]&bit == 0 {
		s.words[w] |= bit
		s.n++
	}
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
// parent's. Files of one conversation (a resumed one's several files)
// make one session; a file of responses only counts its tokens.
// fileEdit is one session's lines added and removed in a file, numbered
// by ComputeWith.
type fileEdit struct {
	id             int32
	added, removed int
}

// files are the session's edited files.
func (g *Group) addActivity(s transcript.Session, conv int32, d *detailView, files []fileEdit, analyzed bool) {
	sub := s.ParentID != ""
	if !sub {
		// A file without prompts or tool calls (responses only) is no
		// conversation of its own, as history does not list it.
		if s.PromptCount > 0 || s.ToolCallCount > 0 {
			g.convs.add(conv)
		}
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
	for _, f := range files {
		g.files.add(f.id)
		g.LinesAdded += f.added
		g.LinesRemoved += f.removed
	}
	if !sub && !s.StartedAt.IsZero() && s.EndedAt.After(s.StartedAt) {
		g.DurationMS += s.EndedAt.Sub(s.StartedAt).Milliseconds()
	}
}

// addUsage counts a response's tokens. Table prices are applied once per
// model when the group is finished: pricing each response (normalising its
// model name) was a fifth of a warm `muster stats`.
func (g *Group) addUsage(e entry) {
	g.Tokens.add(e.u)
	if e.recorded {
		g.CostUSD += e.cost
		if e.u.Total() > 0 || e.cost > 0 {
			g.models[modelKey(g.mt.names[e.model])] = true
		}
		return
	}
	u := g.byModel[e.model]
	if u == nil {
		u = new(transcript.Usage)
		g.byModel[e.model] = u
	}
	u.Add(e.u)
}

func (g *Group) finish() *Group {
	for _, mi := range slices.Sorted(maps.Keys(g.byModel)) {
		u, m := *g.byModel[mi], g.mt.names[mi]
		if u.Total() == 0 {
			continue
		}
		g.models[modelKey(m)] = true
		if c, ok := Cost(m, u); ok {
			g.CostUSD += c
			continue
		}
		g.UnpricedTokens += u.Total()
		if name := modelKey(m); !slices.Contains(g.UnpricedModels, name) {
			g.UnpricedModels = append(g.UnpricedModels, name)
		}
	}
	clear(g.byModel)
	g.CostUSD = roundUSD(g.CostUSD)
	g.Sessions = g.convs.n
	g.FilesEdited = g.files.n
	g.Models = slices.Sorted(maps.Keys(g.models))
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
