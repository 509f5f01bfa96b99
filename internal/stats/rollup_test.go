package stats

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/transcript"
)

// TestRollupMatchesLog: whatever the time zone (whole, half and
// three-quarter hours from UTC, with daylight saving), grouping and bounds
// (cutting quarter hours or not), the report from the rolled-up usage
// equals the sums computed here from each response of the logs, repeats
// of a response in a later session counted once.
func TestRollupMatchesLog(t *testing.T) {
	zones := []string{"UTC", "Asia/Kolkata", "Asia/Kathmandu", "America/St_Johns", "America/New_York", "Australia/Lord_Howe"}
	models := []string{"claude-sonnet-4-5", "claude-opus-4-1", "mystery-9"}
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 13))
		loc, err := time.LoadLocation(zones[int(seed)%len(zones)])
		if err != nil {
			t.Skipf("time zone data: %v", err)
		}
		// Around a daylight saving change in March.
		base := time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(48*60)) * time.Minute)
		var sessions []history.Analyzed
		type resp struct {
			key string
			at  time.Time
			u   transcript.Usage
		}
		var all []resp
		firstOf := map[string]bool{}
		for s := range 1 + rng.IntN(6) {
			start := base.Add(time.Duration(rng.IntN(30*24*60)) * time.Minute / 10)
			var log []transcript.UsageEntry
			at := start
			for i := range 1 + rng.IntN(40) {
				at = at.Add(time.Duration(rng.IntN(3*3600)) * time.Second)
				key := fmt.Sprintf("m%d-%d:r", s, i)
				if len(all) > 0 && rng.IntN(6) == 0 {
					// A repeat of an earlier session's response.
					r := all[rng.IntN(len(all))]
					log = append(log, transcript.UsageEntry{Key: r.key, Time: r.at, Model: models[0], Usage: r.u})
					continue
				}
				u := transcript.Usage{Input: int64(1 + rng.IntN(1000)), Output: int64(rng.IntN(500)), CacheRead: int64(rng.IntN(9000))}
				log = append(log, transcript.UsageEntry{Key: key, Time: at, Model: models[rng.IntN(len(models))], Usage: u})
			}
			for _, e := range log {
				if !firstOf[e.Key] {
					firstOf[e.Key] = true
					all = append(all, resp{e.Key, e.Time, e.Usage})
				}
			}
			sess := transcript.Session{Provider: "claude", ID: fmt.Sprint("s", s), PromptCount: 1, StartedAt: start, EndedAt: at}
			sessions = append(sessions, analyzedLog(sess, Detail{}, log))
		}
		var since, until time.Time
		switch rng.IntN(3) {
		case 1: // a bound at a whole local day
			d := base.In(loc).AddDate(0, 0, 1)
			since = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc)
		case 2: // bounds that cut quarter hours
			since = base.Add(time.Duration(rng.IntN(5*24*3600)) * time.Second)
			until = since.Add(time.Duration(1+rng.IntN(5*24*3600)) * time.Second)
		}
		for _, by := range []string{ByNone, ByDay, ByWeek, ByMonth, ByModel} {
			r, err := ComputeWith(t.Context(), sessions, Options{By: by, Loc: loc, Since: since, Until: until})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, g := range r.Groups {
				got[g.Key] = g.Tokens.Total
			}
			want := map[string]int64{}
			var total int64
			for _, x := range all {
				if (!since.IsZero() && x.at.Before(since)) || (!until.IsZero() && !x.at.Before(until)) {
					continue
				}
				total += x.u.Total()
				lt := x.at.In(loc)
				switch by {
				case ByDay:
					want[lt.Format(time.DateOnly)] += x.u.Total()
				case ByWeek:
					want[lt.AddDate(0, 0, -int(lt.Weekday())).Format(time.DateOnly)] += x.u.Total()
				case ByMonth:
					want[lt.Format("2006-01")] += x.u.Total()
				}
			}
			if r.Total.Tokens.Total != total {
				t.Fatalf("seed %d %s by %q: total %d, want %d", seed, loc, by, r.Total.Tokens.Total, total)
			}
			if by == ByModel || by == ByNone {
				continue
			}
			for k, v := range got {
				if v == 0 {
					delete(got, k)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("seed %d %s by %q since %v until %v (-want +got):\n%s", seed, loc, by, since, until, diff)
			}
		}
	}
}
