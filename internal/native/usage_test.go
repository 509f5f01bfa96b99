package native

import (
	"sync"
	"testing"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/termsignal"
)

// usageLog records what OnUsage reports.
type usageLog struct {
	mu  sync.Mutex
	got []provider.Usage
}

func (l *usageLog) add(_ string, u provider.Usage) {
	l.mu.Lock()
	l.got = append(l.got, u)
	l.mu.Unlock()
}

func (l *usageLog) last() (provider.Usage, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.got) == 0 {
		return provider.Usage{}, 0
	}
	return l.got[len(l.got)-1], len(l.got)
}

// TestUsageFromTranscript: the transcript the estimator follows reports
// the agent's model and context to OnUsage as it grows, and the agent
// leaving the foreground forgets them.
func TestUsageFromTranscript(t *testing.T) {
	h := newHarness(t)
	var log usageLog
	h.e.cfg.Listener = listenerFuncs{usage: log.add}
	p := startClaudeInShell(h, "s1")
	p.setNativeID("22222222-2222-4333-8444-555555555555")
	g := newGrowing(t, h.clk, "claude-22222222.jsonl", h.claudePath("22222222-2222-4333-8444-555555555555"), h.clk.Now(), nil)
	g.write(0, isLine(`"promptId":"98e2235e`))
	h.poll()
	if u, n := log.last(); n != 0 {
		t.Fatalf("usage %+v before any reply", u)
	}
	for g.write(1, nil) {
		h.poll()
	}
	want := provider.Usage{Model: "claude-opus-5-5", Context: 10, Window: 1_000_000}
	if u, _ := log.last(); u != want {
		t.Errorf("usage %+v, want %+v", u, want)
	}
	h.procs.kill(agentPGID)
	p.fg(shellPID)
	h.e.Signals("s1", []termsignal.Signal{promptD(0)})
	h.poll()
	if u, _ := log.last(); u != (provider.Usage{}) {
		t.Errorf("usage %+v after the agent left, want none", u)
	}
}
