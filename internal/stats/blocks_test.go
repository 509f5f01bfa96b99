package stats

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/transcript"
)

// logged is a Claude-like session with a usage log of (minutes after t0,
// input tokens, model) responses, each with its own key.
func logged(id string, t0 time.Time, resp ...any) history.Analyzed {
	var log []transcript.UsageEntry
	for i := 0; i < len(resp); i += 3 {
		log = append(log, transcript.UsageEntry{Key: id + ":" + string(rune('a'+i)), Time: t0.Add(time.Duration(resp[i].(int)) * time.Minute),
			Model: resp[i+2].(string), Usage: transcript.Usage{Input: int64(resp[i+1].(int))}})
	}
	s := transcript.Session{Provider: "claude", ID: id, CWD: "/p/" + id, PromptCount: 1, StartedAt: t0, EndedAt: log[len(log)-1].Time}
	return analyzedLog(s, Detail{}, log)
}

// TestBlocks: blocks start at the UTC hour of their first response and
// end 5 hours later or at a 5-hour pause; the active block's burn rate and
// projection are from its first to its last response, hand-computed here.
func TestBlocks(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 8, 20, 0, 0, time.UTC)
	sessions := []history.Analyzed{
		// Block 1: 08:00–13:00, responses at 08:20 and 12:50 (inside).
		logged("a", t0, 0, 1_000_000, "claude-sonnet-4-5", 270, 1_000_000, "claude-sonnet-4-5"),
		// 13:30 is past 13:00: block 2 from 13:00; then a pause of more
		// than 5 hours starts block 3 at 19:00.
		logged("b", t0.Add(310*time.Minute), 0, 500, "claude-sonnet-4-5", 60, 500, "claude-sonnet-4-5"),
		// Block 3 (active at 20:30): 19:10 and 19:40, 1M input tokens each
		// of a model the table prices at $3/M, and 60 unpriced tokens.
		logged("c", time.Date(2026, 3, 2, 19, 10, 0, 0, time.UTC), 0, 1_000_000, "claude-sonnet-4-5", 30, 1_000_000, "claude-sonnet-4-5", 30, 60, "mystery-9"),
	}
	now := time.Date(2026, 3, 2, 20, 30, 0, 0, time.UTC)
	r, err := ComputeWith(t.Context(), sessions, Options{By: ByBlock, Loc: time.UTC, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	var starts []string
	for _, b := range r.Blocks {
		starts = append(starts, b.Start.Format("15:04")+"-"+b.LastActivity.Format("15:04"))
	}
	if diff := cmp.Diff([]string{"08:00-12:50", "13:00-14:30", "19:00-19:40"}, starts); diff != "" {
		t.Fatalf("blocks (-want +got):\n%s", diff)
	}
	for i, b := range r.Blocks[:2] {
		if b.Active || b.BurnRate != nil {
			t.Errorf("block %d is active: %+v", i, b)
		}
	}
	act := r.Blocks[2]
	if !act.Active || act.Responses != 3 || act.Tokens.Total != 2_000_060 || act.CostUSD != 6 || act.UnpricedTokens != 60 {
		t.Fatalf("active block %+v", act)
	}
	// 30 minutes from first to last response: 2,000,060/30 tokens a
	// minute, $6 per half hour = $12/hour; 210 minutes left to 00:00.
	if act.BurnRate == nil || math.Abs(act.BurnRate.TokensPerMinute-2_000_060.0/30) > 1e-6 || act.BurnRate.CostPerHour != 12 {
		t.Errorf("burn rate %+v", act.BurnRate)
	}
	if p := act.Projection; p == nil || p.RemainingMinutes != 210 || p.CostUSD != 6+12*3.5 || p.Tokens != 2_000_060+int64(2_000_060.0/30*210) {
		t.Errorf("projection %+v", act.Projection)
	}
	// An hour after the last response the block is over.
	later, _ := ComputeWith(t.Context(), sessions, Options{By: ByBlock, Now: time.Date(2026, 3, 3, 1, 0, 0, 0, time.UTC)})
	if later.Blocks[2].Active {
		t.Error("a block past its end is active")
	}
}

// TestPeriodsAndBounds: weeks start on Sunday, months are calendar months,
// and --since/--until keep the responses inside [since, until) whatever
// session holds them; a group of unpriced usage only has no cost.
func TestPeriodsAndBounds(t *testing.T) {
	sat := time.Date(2026, 2, 28, 23, 0, 0, 0, time.UTC) // a Saturday
	sessions := []history.Analyzed{
		logged("a", sat, 0, 10, "claude-sonnet-4-5", 120, 20, "claude-sonnet-4-5"), // Sat 23:00, Sun 01:00
		logged("b", sat.Add(96*time.Hour), 0, 40, "mystery-9"),                     // Wed
	}
	keys := func(r Report) map[string]int64 {
		m := map[string]int64{}
		for _, g := range r.Groups {
			m[g.Key] = g.Tokens.Total
		}
		return m
	}
	w, _ := ComputeWith(t.Context(), sessions, Options{By: ByWeek, Loc: time.UTC})
	if diff := cmp.Diff(map[string]int64{"2026-02-22": 10, "2026-03-01": 60}, keys(w)); diff != "" {
		t.Errorf("weeks (-want +got):\n%s", diff)
	}
	m, _ := ComputeWith(t.Context(), sessions, Options{By: ByMonth, Loc: time.UTC})
	if diff := cmp.Diff(map[string]int64{"2026-02": 10, "2026-03": 60}, keys(m)); diff != "" {
		t.Errorf("months (-want +got):\n%s", diff)
	}
	b, _ := ComputeWith(t.Context(), sessions, Options{By: ByDay, Loc: time.UTC, Since: sat.Add(time.Hour), Until: sat.Add(96 * time.Hour)})
	if b.Total.Tokens.Total != 20 {
		t.Errorf("since/until kept %d tokens, want the Sunday response's 20", b.Total.Tokens.Total)
	}
	p, _ := ComputeWith(t.Context(), sessions, Options{By: ByProject, Loc: time.UTC})
	for _, g := range p.Groups {
		if g.Key == "/p/b" && (g.CostUSD != 0 || g.UnpricedTokens != 40 || g.UnpricedModels[0] != "mystery-9") {
			t.Errorf("unpriced project %+v", g)
		}
	}
}
