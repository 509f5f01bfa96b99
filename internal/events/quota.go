package events

import (
	"fmt"
	"sync"
	"time"
)

// Quota bounds what one surface may record through events.sock: two token
// buckets, one of events and one of request bytes (newline included). A
// request that would overdraw either is answered rate_limited and neither
// is charged. Events the daemon synthesizes are not counted.
type Quota struct {
	Events     float64 // events per second, sustained
	EventBurst float64 // events at once
	Bytes      float64 // request bytes per second, sustained
	ByteBurst  float64 // request bytes at once
	Off        bool    // no quota
}

// DefaultQuota is far above what an agent's hooks send (a few events a
// second of well under 1 KiB each) and far below what fills a disk: one
// surface can store at most about 700 MB a day instead of the ~11 MB a
// second that 64 KiB messages would allow.
var DefaultQuota = Quota{Events: 10, EventBurst: 300, Bytes: 8 << 10, ByteBurst: 512 << 10}

// ParseQuota reads MUSTER_EVENT_QUOTA: empty for DefaultQuota, or "off"
// (benchmarks that send far more than an agent would).
func ParseQuota(s string) (Quota, error) {
	switch s {
	case "":
		return DefaultQuota, nil
	case "off":
		return Quota{Off: true}, nil
	}
	return DefaultQuota, fmt.Errorf("event quota %q: want off or nothing", s)
}

// quotas holds the buckets of the surfaces that sent events.
type quotas struct {
	q  Quota
	mu sync.Mutex
	by map[string]*bucket
}

type bucket struct {
	events, bytes float64
	at            time.Time
}

func newQuotas(q Quota) *quotas {
	return &quotas{q: q, by: map[string]*bucket{}}
}

// take charges one event of n bytes to surface at now, or reports false
// and charges nothing.
func (qs *quotas) take(surface string, n int, now time.Time) bool {
	if qs.q.Off {
		return true
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	b := qs.by[surface]
	if b == nil {
		b = &bucket{events: qs.q.EventBurst, bytes: qs.q.ByteBurst, at: now}
		qs.by[surface] = b
	}
	if dt := now.Sub(b.at).Seconds(); dt > 0 {
		b.events = min(qs.q.EventBurst, b.events+dt*qs.q.Events)
		b.bytes = min(qs.q.ByteBurst, b.bytes+dt*qs.q.Bytes)
		b.at = now
	}
	if b.events < 1 || b.bytes < float64(n) {
		return false
	}
	b.events--
	b.bytes -= float64(n)
	return true
}

// forget drops a closed surface's buckets.
func (qs *quotas) forget(surface string) {
	qs.mu.Lock()
	delete(qs.by, surface)
	qs.mu.Unlock()
}
