package daemon

import (
	"sync"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
)

// usageBoard keeps the latest model and context figures of each surface's
// agent, as its hooks and its transcript report them. It has a lock of
// its own because the estimator reports while d.mu may be held by a
// caller that waits on the estimator.
type usageBoard struct {
	mu sync.Mutex
	by map[string]provider.Usage // by surface id
}

// update merges what one report says into the surface's figures and
// reports whether they changed. A report names the model, or the context
// and its window, or both; the zero Usage forgets the surface (its agent
// left).
func (b *usageBoard) update(surfaceID string, u provider.Usage) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := b.by[surfaceID]
	next := old
	if u == (provider.Usage{}) {
		next = provider.Usage{}
	}
	if u.Model != "" {
		next.Model = u.Model
	}
	if u.Context > 0 {
		next.Context, next.Window = u.Context, u.Window
	}
	if next == old {
		return false
	}
	if next == (provider.Usage{}) {
		delete(b.by, surfaceID)
		return true
	}
	if b.by == nil {
		b.by = map[string]provider.Usage{}
	}
	b.by[surfaceID] = next
	return true
}

// fill sets info's model and context fields from the surface's figures.
func (b *usageBoard) fill(surfaceID string, info *proto.SessionInfo) {
	b.mu.Lock()
	u := b.by[surfaceID]
	b.mu.Unlock()
	info.Model, info.ContextTokens, info.ContextWindow = u.Model, u.Context, u.Window
}

// onHookModel records the model a hook event named. The decoder refused
// an event whose model is no model name (proto.ValidModel); the check here
// keeps a caller that bypasses it from reaching the dashboard.
func (d *Daemon) onHookModel(surfaceID, model string) {
	if !proto.ValidModel(model) {
		return
	}
	d.UsageReported(surfaceID, provider.Usage{Model: model})
}

// UsageReported records what a surface's agent reports of its model and
// context (native.Listener).
func (d *Daemon) UsageReported(surfaceID string, u provider.Usage) {
	if d.usage.update(surfaceID, u) {
		d.stateChanged()
	}
}
