package realcli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/e2e/realcli"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/testing/fakemodel"
)

// Issue 25, Required 1 with the real CLIs: the fake model answers a
// prompt the way each provider's API tells an account it reached its
// usage limit (fakemodel.Limit: HTTP 429 with the provider's body and
// headers), and Muster must show the run limited, with the reset when the
// CLI names it, say where it read it (explain), raise an item that says
// when it resets, and, with autocontinue on, send the provider's continue
// once after the reset.

// limitRetries is how often a CLI sends a request the fake refused with
// its limit again before the turn fails: Claude Code's default (10, over
// about 3 minutes of backoff) would make its scenario last minutes, and 4
// (about 8 s) still shows its retry line long enough to be read.
const limitRetries = 4

// limitRun launches cli in a Muster pane for a limit scenario, with the
// continue's skew cut to 1 s so that the scenario lasts about a minute.
func limitRun(t *testing.T, cli realcli.CLI) *mscenario {
	s := realcli.New(t, cli, realcli.Options{APIRetries: limitRetries})
	sc := &mscenario{t: t, cli: cli, prof: profiles[cli], s: s, m: newMuster(t, s), name: "lim-" + string(cli)}
	t.Cleanup(func() {
		t.Logf("%s: %s", cli, strings.Join(sc.times, "; "))
		if t.Failed() {
			t.Logf("screen at the end:\n%s", sc.m.capture(sc.name))
			if b, err := os.ReadFile(filepath.Join(s.MusterHome, "state", "daemon.log")); err == nil {
				t.Logf("daemon.log:\n%s", b)
			}
		}
	})
	dir := filepath.Join(s.MusterHome, "config")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[usage_limit]\nskew = \"1s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sc.m.must("hooks", "setup", string(cli))
	if cli == realcli.Codex {
		if err := realcli.TrustCodexHooks(filepath.Join(s.Home, ".codex")); err != nil {
			t.Fatal(err)
		}
	}
	sc.launch()
	return sc
}

// limited waits until ls shows the session limited and returns it.
func (sc *mscenario) limited(timeout time.Duration) proto.SessionInfo {
	sc.t.Helper()
	var info proto.SessionInfo
	sc.m.waitFor(sc.name, "run state limited", timeout, func() bool {
		info = sc.info()
		return runState(info) == string(proto.StateLimited)
	})
	return info
}

// limitItem returns the item of the session (open, or any with all)
// whose message holds want.
func (sc *mscenario) limitItem(want string, all bool) proto.AttentionItem {
	sc.t.Helper()
	var found proto.AttentionItem
	sc.m.waitFor(sc.name, "an item saying "+want, turnTimeout, func() bool {
		for _, it := range sc.m.attention(sc.name, all) {
			if strings.Contains(it.Message, want) {
				found = it
				return true
			}
		}
		return false
	})
	return found
}

// onlyItem checks that the limited run raised one item, it, and no other:
// a failure item beside a limit notice would be the same stop told twice.
// It waits a few watcher ticks first, since the second item, if any, is
// raised by another reader of the same stop.
func (sc *mscenario) onlyItem(it proto.AttentionItem) {
	sc.t.Helper()
	time.Sleep(3 * time.Second)
	open := sc.m.attention(sc.name, false)
	if len(open) != 1 || open[0].ID != it.ID {
		sc.t.Errorf("open items of the limited session: %+v; want only item %d (%s: %q)", open, it.ID, it.Reason, it.Message)
	}
}

func (sc *mscenario) explainLimit() proto.Limit {
	sc.t.Helper()
	var x proto.Explanation
	sc.m.mustJSON(&x, "explain", sc.name, "--json")
	if x.Limit == nil {
		sc.t.Fatalf("explain has no limit: %+v", x)
	}
	return *x.Limit
}

// TestMusterCodexLimit: Codex 0.171.0 fires no hook at its usage limit;
// its rollout records the limit (task_complete codex_error_info
// usage_limit_exceeded) and the exact reset (rate_limits resets_at), and
// its screen then shows a rate limit dialog whose Enter would switch the
// model. Muster shows the run limited until that reset, and its continue
// closes the dialog (Esc) and types continue: the model gets the prompt,
// still as the same model.
func TestMusterCodexLimit(t *testing.T) {
	t.Parallel()
	sc := limitRun(t, realcli.Codex)
	run1 := sc.textTurn()
	resets := time.Now().Add(40 * time.Second).Truncate(time.Second)
	sc.enqueue(fakemodel.Limit(resets))
	start := time.Now()
	run := sc.submit("hit the limit", run1)
	info := sc.limited(turnTimeout)
	sc.took("limited", start)
	if runID(info) != run || info.LimitResetsAt == nil || *info.LimitResetsAt != resets.UTC().Format(time.RFC3339) {
		t.Errorf("limited: run %q resets %v; want run %s resetting %s", runID(info), info.LimitResetsAt, run, resets.UTC().Format(time.RFC3339))
	}
	if l := sc.explainLimit(); !strings.Contains(l.Evidence, "rollout task_complete (codex_error_info usage_limit_exceeded)") || !strings.Contains(l.Message, "hit your usage limit") {
		t.Errorf("explain's limit: %+v; want the rollout's record named", l)
	}
	it := sc.limitItem("usage limit reached: resets at "+resets.UTC().Format(time.RFC3339), false)
	t.Logf("codex: limit item %q", it.Message)
	if it.Reason != string(proto.KindFailed) || it.RunID != run {
		t.Errorf("limit item %+v; want run %s's failure item to say the limit", it, run)
	}
	sc.onlyItem(it)
	sc.m.waitScreen(sc.name, "Approaching rate limits", turnTimeout)

	sc.enqueue(fakemodel.Text("back after the limit"))
	sc.m.must("autocontinue", sc.name, "on")
	n := len(sc.s.Server.Turns())
	sc.m.waitFor(sc.name, "the continue to reach the model", time.Until(resets)+2*turnTimeout, func() bool {
		ts := sc.s.Server.Turns()
		return len(ts) > n && ts[len(ts)-1].Prompt() == "continue"
	})
	sc.took("continued after the reset", start)
	if time.Now().Before(resets) {
		t.Errorf("continued before the reset %s", resets)
	}
	w := sc.m.wait(sc.name, "done", turnTimeout)
	if w.State != "succeeded" && w.Terminal != "succeeded" {
		t.Errorf("the continued run: %+v; want succeeded", w)
	}
	ts := sc.s.Server.Turns()
	if m := ts[len(ts)-1].Model(); m != "gpt-fake" {
		t.Errorf("the continue went to model %q: the rate limit dialog switched it", m)
	}
	// Once: no second continue however long the session sits.
	time.Sleep(3 * time.Second)
	if got := len(sc.s.Server.Turns()); got != len(ts) {
		t.Errorf("%d more model turns after the continue", got-len(ts))
	}
	sc.limitItem("its usage limit reset: muster sent \"continue\"", true)
}

// TestMusterGeminiLimit: Gemini CLI 0.61.0 at its daily quota holds the
// turn at a dialog ("Usage limit reached for all Pro models.", Keep
// trying / Stop) with no hook and nothing in its chat file, and names no
// reset for a daily quota: the run is limited from the screen, without a
// reset, with an item that says so; Keep trying retries and stays so.
func TestMusterGeminiLimit(t *testing.T) {
	t.Parallel()
	sc := limitRun(t, realcli.Gemini)
	run1 := sc.textTurn()
	sc.enqueue(fakemodel.Limit(time.Now().Add(time.Hour)))
	start := time.Now()
	run := sc.submit("hit the limit", run1)
	info := sc.limited(turnTimeout)
	sc.took("limited", start)
	if runID(info) != run || info.LimitResetsAt != nil {
		t.Errorf("limited: run %q resets %v; want run %s with no reset", runID(info), info.LimitResetsAt, run)
	}
	if l := sc.explainLimit(); !strings.HasPrefix(l.Evidence, "screen: limit dialog") || l.Message != "Usage limit reached for all Pro models." {
		t.Errorf("explain's limit: %+v; want the screen named", l)
	}
	sc.onlyItem(sc.limitItem("usage limit reached (no reset time given), from screen", false))

	// Keep trying (Enter) is Gemini CLI's own retry of the same request:
	// the fake answers it with the limit again (a Fail answers every
	// retry), and the run stays limited.
	n := len(sc.s.Server.Turns())
	sc.m.must("send", sc.name, "", "--enter")
	sc.m.waitFor(sc.name, "Keep trying to send the request again", turnTimeout, func() bool {
		return len(sc.s.Server.Turns()) > n
	})
	if info := sc.limited(turnTimeout); runID(info) != run {
		t.Errorf("after Keep trying: run %q, want %s still limited", runID(info), run)
	}
}

// TestMusterClaudeLimit: Claude Code 2.1.332 with an API key sends a 429
// that carries the five-hour limit headers again CLAUDE_CODE_MAX_RETRIES
// times, its spinner line saying when the limit resets ("5-hour limit
// reached · retrying in 1s (5:25am) · attempt 1/4"), then fires
// StopFailure rate_limit, whose words name no reset. The run is limited
// from that hook with the reset read from the retry line while it was on
// the screen, and its failure item says when it resets.
func TestMusterClaudeLimit(t *testing.T) {
	t.Parallel()
	sc := limitRun(t, realcli.Claude)
	run1 := sc.textTurn()
	resets := time.Now().Add(time.Hour).Truncate(time.Minute)
	want := resets.UTC().Format(time.RFC3339)
	sc.enqueue(fakemodel.Limit(resets))
	start := time.Now()
	n := len(sc.s.Server.Turns())
	run := sc.submit("hit the limit", run1)
	sc.m.waitScreen(sc.name, "limit reached", turnTimeout)
	var l proto.Limit
	sc.m.waitFor(sc.name, "StopFailure to end the retries", turnTimeout, func() bool {
		var x proto.Explanation
		sc.m.mustJSON(&x, "explain", sc.name, "--json")
		if x.Limit != nil {
			l = *x.Limit
		}
		return strings.Contains(l.Evidence, "StopFailure")
	})
	info := sc.limited(turnTimeout)
	sc.took("limited", start)
	t.Logf("claude: limit %+v", l)
	if got := len(sc.s.Server.Turns()) - n; got != 1+limitRetries {
		t.Errorf("the limited prompt reached the model %d times; want 1 + %d retries (CLAUDE_CODE_MAX_RETRIES)", got, limitRetries)
	}
	if runID(info) != run || info.LimitResetsAt == nil || *info.LimitResetsAt != want {
		t.Errorf("limited: run %q resets %v; want run %s resetting %s", runID(info), info.LimitResetsAt, run, want)
	}
	if !strings.Contains(l.Message, "429") || !strings.Contains(l.Evidence, "reset from screen: retry line (5-hour limit reached)") {
		t.Errorf("explain's limit: %+v; want the hook's 429 and the retry line named", l)
	}
	it := sc.limitItem("usage limit reached: resets at "+want+", from screen: retry line", false)
	if it.Reason != string(proto.KindFailed) || it.RunID != run {
		t.Errorf("limit item %+v; want run %s's failure item to say the limit", it, run)
	}
	sc.onlyItem(it)
}
