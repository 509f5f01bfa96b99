package daemon

import (
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
)

// TestUsageBoard: reports of the model alone and of the context alone
// merge; a repeat changes nothing (no watch push); the zero report
// forgets the surface.
func TestUsageBoard(t *testing.T) {
	var b usageBoard
	steps := []struct {
		report  provider.Usage
		changed bool
		want    proto.SessionInfo
	}{
		{provider.Usage{Model: "gpt-6.1-sol"}, true, proto.SessionInfo{Model: "gpt-6.1-sol"}},
		{provider.Usage{Context: 12, Window: 258400}, true, proto.SessionInfo{Model: "gpt-6.1-sol", ContextTokens: 12, ContextWindow: 258400}},
		{provider.Usage{Context: 12, Window: 258400}, false, proto.SessionInfo{Model: "gpt-6.1-sol", ContextTokens: 12, ContextWindow: 258400}},
		{provider.Usage{Model: "gpt-6.1-sol"}, false, proto.SessionInfo{Model: "gpt-6.1-sol", ContextTokens: 12, ContextWindow: 258400}},
		{provider.Usage{Model: "claude-opus-5-5", Context: 9000}, true, proto.SessionInfo{Model: "claude-opus-5-5", ContextTokens: 9000}},
		{provider.Usage{}, true, proto.SessionInfo{}},
		{provider.Usage{}, false, proto.SessionInfo{}},
	}
	for i, st := range steps {
		if got := b.update("s1", st.report); got != st.changed {
			t.Errorf("step %d: changed %v, want %v", i, got, st.changed)
		}
		var info proto.SessionInfo
		b.fill("s1", &info)
		if info != st.want {
			t.Errorf("step %d: %+v, want %+v", i, info, st.want)
		}
		var other proto.SessionInfo
		if b.fill("s2", &other); other != (proto.SessionInfo{}) {
			t.Errorf("step %d: another surface got %+v", i, other)
		}
	}
	if len(b.by) != 0 {
		t.Errorf("forgotten surfaces kept: %v", b.by)
	}
}

// TestHookModel: a hook event's model is shown unless it cannot be a
// model name.
func TestHookModel(t *testing.T) {
	for _, tt := range []struct{ model, want string }{
		{"gpt-5", "gpt-5"},
		{"", ""},
		{"gpt\x1b]0;pwned\x07", ""},
		{strings.Repeat("m", proto.MaxModelLen+1), ""},
	} {
		var d Daemon
		d.onHookModel("s1", tt.model)
		var info proto.SessionInfo
		if d.usage.fill("s1", &info); info.Model != tt.want {
			t.Errorf("hook model %q shows %q, want %q", tt.model, info.Model, tt.want)
		}
	}
}
