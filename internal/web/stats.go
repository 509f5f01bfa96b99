package web

import (
	"cmp"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/stats"
)

// The Stats page: package stats' reports over a period, drawn as inline
// SVG bar charts computed here (no script, no fetch): tokens and cost per
// day and per model, the tools used, the files edited.

const (
	defaultStatsDays = 30
	maxStatsDays     = 3660
	// topBars bounds the bars of a ranking chart (models, tools).
	topBars = 15
)

// chart is one SVG bar chart, laid out here so the template only places
// numbers and escaped labels.
type chart struct {
	Title         string
	Width, Height int
	Bars          []chartBar
	// Vertical charts have a bar per column (days); the others a bar per
	// row (rankings).
	Vertical bool
	Empty    bool
	// Axis is the label of the largest value, drawn at the top.
	Axis string
}

type chartBar struct {
	Label   string
	Value   string // the value, formatted
	X, Y    float64
	W, H    float64
	LabelX  float64
	LabelY  float64
	ValueX  float64
	ShowTop bool // a column's label is drawn under it
}

const (
	colChartHeight = 180
	colChartWidth  = 960
	rowHeight      = 22
	rowLabelWidth  = 260
	rowChartWidth  = 960
)

// columns lays out one column per value, labelled every few columns.
func columns(title string, labels []string, values []float64, format func(float64) string) chart {
	c := chart{Title: title, Width: colChartWidth, Height: colChartHeight + 30, Vertical: true}
	top := slices.Max(append([]float64{0}, values...))
	if top <= 0 {
		c.Empty = true
		return c
	}
	c.Axis = format(top)
	n := len(values)
	slot := float64(colChartWidth-40) / float64(n)
	every := max(1, int(math.Ceil(float64(n)/15)))
	for i, v := range values {
		h := v / top * colChartHeight
		x := 40 + float64(i)*slot
		c.Bars = append(c.Bars, chartBar{Label: labels[i], Value: format(v),
			X: round1(x + slot*0.1), Y: round1(colChartHeight - h + 10), W: round1(slot * 0.8), H: round1(h),
			LabelX: round1(x + slot/2), LabelY: colChartHeight + 26, ShowTop: i%every == 0})
	}
	return c
}

// rows lays out a ranking, largest first, at most topBars rows.
func rows(title string, labels []string, values []float64, format func(float64) string) chart {
	type kv struct {
		k string
		v float64
	}
	var items []kv
	for i, v := range values {
		if v > 0 {
			items = append(items, kv{labels[i], v})
		}
	}
	slices.SortStableFunc(items, func(a, b kv) int {
		if c := cmp.Compare(b.v, a.v); c != 0 {
			return c
		}
		return cmp.Compare(a.k, b.k)
	})
	if len(items) > topBars {
		items = items[:topBars]
	}
	c := chart{Title: title, Width: rowChartWidth, Height: max(1, len(items))*rowHeight + 10}
	if len(items) == 0 {
		c.Empty = true
		return c
	}
	top := items[0].v
	span := float64(rowChartWidth - rowLabelWidth - 120)
	for i, it := range items {
		w := it.v / top * span
		y := float64(i*rowHeight + 5)
		c.Bars = append(c.Bars, chartBar{Label: it.k, Value: format(it.v),
			X: rowLabelWidth, Y: y, W: round1(max(w, 1)), H: rowHeight - 6,
			LabelX: rowLabelWidth - 8, LabelY: y + rowHeight - 10, ValueX: round1(rowLabelWidth + w + 6)})
	}
	return c
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

// tokens formats a token count the way people read them (1.2M, 35k).
func tokens(v float64) string {
	switch {
	case v >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 1, 64) + "B"
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func dollars(v float64) string { return fmt.Sprintf("$%.2f", v) }

func count(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

func (s *Server) now() time.Time {
	if s.o.Now != nil {
		return s.o.Now()
	}
	return time.Now()
}

func (s *Server) location() *time.Location {
	if s.o.Location != nil {
		return s.o.Location
	}
	return time.Local
}

func (s *Server) handleStats(r *http.Request) reply {
	v := r.URL.Query()
	days := defaultStatsDays
	if d := v.Get("days"); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n < 1 || n > maxStatsDays {
			return errorPage(http.StatusBadRequest, fmt.Sprintf("days %q: want a number from 1 to %d", d, maxStatsDays))
		}
		days = n
	}
	provider := v.Get("provider")
	if provider != "" && !s.knownProvider(provider) {
		return errorPage(http.StatusBadRequest, fmt.Sprintf("unknown provider %q", provider))
	}
	loc := s.location()
	now := s.now().In(loc)
	first := time.Date(now.Year(), now.Month(), now.Day()-days+1, 0, 0, 0, 0, loc)
	ctx := r.Context()
	// Analyses are computed once per file version and stored; this brings
	// the ones of changed files up to date.
	if _, err := s.o.Index.Refresh(ctx, s.o.Sources, s.o.Env, history.RefreshOptions{Analyzer: stats.Analyzer()}); err != nil {
		s.o.Logger.Warn("refresh history for stats", "err", err)
	}
	// As for `muster stats`: sub-agents count in their parent's
	// conversation, and responses without a prompt still used tokens.
	sessions, err := s.o.Index.ListAnalyzed(ctx, history.Query{Provider: provider, Since: first, IncludeSubagents: true, IncludeEmpty: true}, stats.AnalyzerVersion)
	if err != nil {
		s.o.Logger.Error("list analyzed sessions", "err", err)
		return errorPage(http.StatusInternalServerError, "the history index could not be read")
	}
	// Since keeps sessions active in the period; the charts count by start.
	end := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, loc)
	sessions = slices.DeleteFunc(sessions, func(a history.Analyzed) bool {
		return a.Session.StartedAt.Before(first) || !a.Session.StartedAt.Before(end)
	})
	total, err1 := stats.Compute(ctx, sessions, stats.ByNone, loc)
	byDay, err2 := stats.Compute(ctx, sessions, stats.ByDay, loc)
	byModel, err3 := stats.Compute(ctx, sessions, stats.ByModel, loc)
	if err := cmp.Or(err1, err2, err3); err != nil {
		s.o.Logger.Error("compute stats", "err", err)
		return errorPage(http.StatusInternalServerError, "the statistics could not be computed")
	}

	// A long period is drawn by month: a column a day would be too thin.
	monthly := days > 92
	bucket := func(d time.Time) string {
		if monthly {
			return d.Format("2006-01")
		}
		return d.Format(time.DateOnly)
	}
	index := map[string]int{}
	var dayLabels []string
	for d := first; !d.After(now); d = d.AddDate(0, 0, 1) {
		k := bucket(d)
		if _, ok := index[k]; ok {
			continue
		}
		index[k] = len(dayLabels)
		if monthly {
			dayLabels = append(dayLabels, d.Format("Jan 2006"))
		} else {
			dayLabels = append(dayLabels, d.Format("Jan 2"))
		}
	}
	dayTokens := make([]float64, len(dayLabels))
	dayCost := make([]float64, len(dayLabels))
	daySessions := make([]float64, len(dayLabels))
	for _, g := range byDay.Groups {
		d, err := time.ParseInLocation(time.DateOnly, g.Key, loc)
		if err != nil {
			continue
		}
		if i, ok := index[bucket(d)]; ok {
			dayTokens[i] += float64(g.Tokens.Total)
			dayCost[i] += g.CostUSD
			daySessions[i] += float64(g.Sessions)
		}
	}
	per := "day"
	if monthly {
		per = "month"
	}
	var modelLabels []string
	var modelTokens, modelCost []float64
	for _, g := range byModel.Groups {
		modelLabels = append(modelLabels, g.Key)
		modelTokens = append(modelTokens, float64(g.Tokens.Total))
		modelCost = append(modelCost, g.CostUSD)
	}
	var toolLabels []string
	var toolCounts []float64
	for name, n := range total.Total.Tools {
		toolLabels = append(toolLabels, name)
		toolCounts = append(toolCounts, float64(n))
	}
	var fileLabels []string
	var fileLines []float64
	for _, f := range total.Files {
		fileLabels = append(fileLabels, f.Path)
		fileLines = append(fileLines, float64(f.Added+f.Removed))
	}
	var providers []string
	for _, src := range s.o.Sources {
		providers = append(providers, src.Provider())
	}
	charts := []chart{
		columns("Tokens per "+per, dayLabels, dayTokens, tokens),
		columns("Cost per "+per+" (approximate)", dayLabels, dayCost, dollars),
		columns("Sessions per "+per, dayLabels, daySessions, count),
		rows("Tokens per model", modelLabels, modelTokens, tokens),
		rows("Cost per model (approximate)", modelLabels, modelCost, dollars),
		rows("Tools used", toolLabels, toolCounts, count),
		rows("Files edited (lines changed)", fileLabels, fileLines, count),
	}
	return pageReply{status: http.StatusOK, name: "stats", data: map[string]any{
		"Days": days, "Periods": periods(days), "From": first.Format(time.DateOnly), "To": now.Format(time.DateOnly),
		"Provider": provider, "Providers": providers, "Total": total.Total, "Files": total.Files,
		"Charts": charts, "Unanalyzed": total.Unanalyzed,
		"Cost": stats.FormatUSD(total.Total.CostUSD, total.Total.UnpricedTokens), "Tokens": tokens(float64(total.Total.Tokens.Total)),
	}}
}

// periods are the choices of the period menu, with the current one.
func periods(days int) []int {
	p := []int{7, 30, 90, 365}
	if !slices.Contains(p, days) {
		p = append(p, days)
		slices.Sort(p)
	}
	return p
}
