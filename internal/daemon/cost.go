package daemon

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/proccost"
	"github.com/musterhq/muster/internal/proto"
)

// costBoard keeps the last sample of each live pane's process tree and
// which trees are over their memory ceiling. It has a lock of its own:
// infoLocked reads it under d.mu, and the sampler writes it without.
type costBoard struct {
	mu   sync.Mutex
	by   map[string]proccost.Cost // by surface id
	at   time.Time                // when by was sampled
	over map[string]bool          // surfaces whose ceiling item was raised
}

// fill sets info's cost fields from the surface's last sample.
func (b *costBoard) fill(surfaceID string, info *proto.SessionInfo) {
	b.mu.Lock()
	c, ok := b.by[surfaceID]
	b.mu.Unlock()
	if !ok {
		return
	}
	rss := c.RSSBytes
	info.RSSBytes, info.Processes = &rss, c.Processes
	if c.PSSBytes > 0 {
		pss := c.PSSBytes
		info.PSSBytes = &pss
	}
	if c.CPUPercent >= 0 {
		cpu := math.Round(c.CPUPercent*10) / 10
		info.CPUPercent = &cpu
	}
}

// costInterval is how often panes are sampled; 0 is never.
func (d *Daemon) costInterval() time.Duration {
	switch {
	case d.opts.CostInterval < 0:
		return 0
	case d.opts.CostInterval == 0:
		return config.DefaultCostInterval
	}
	return d.opts.CostInterval
}

// memoryCeiling is the RSS past which a session's tree raises an
// attention item; 0 is none.
func (d *Daemon) memoryCeiling(name string) int64 {
	if v, ok := d.opts.SessionMemoryCeilings[name]; ok {
		return v
	}
	return d.opts.MemoryCeiling
}

// sampleCosts samples every live pane's process tree each interval until
// ctx ends. PSS, which makes the kernel walk page tables, is read on one
// sample in six.
func (d *Daemon) sampleCosts(ctx context.Context) {
	interval := d.costInterval()
	if interval <= 0 {
		return
	}
	s := &proccost.Sampler{PSSEvery: 6}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := d.sampleCostsOnce(s, time.Now()); err != nil {
			d.logger.Info("pane costs are not measured here", "err", err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

type costRoot struct {
	sessionID, name string
	pid             int
}

// sampleCostsOnce takes one sample of every live pane, records it, and
// raises or re-arms each memory ceiling.
func (d *Daemon) sampleCostsOnce(s *proccost.Sampler, now time.Time) error {
	roots := map[string]int{}
	bySurface := map[string]costRoot{}
	d.mu.Lock()
	for _, ss := range d.sessions {
		if ss.pane == nil {
			continue
		}
		if exited, _ := ss.pane.Exited(); exited {
			continue
		}
		roots[ss.surface.ID] = ss.pane.PID()
		bySurface[ss.surface.ID] = costRoot{ss.rec.ID, ss.rec.Name, ss.pane.PID()}
	}
	d.mu.Unlock()
	costs, err := s.Sample(roots, now)
	if err != nil {
		return err
	}
	type raise struct {
		surfaceID, msg string
	}
	var raises []raise
	d.costs.mu.Lock()
	d.costs.by, d.costs.at = costs, now
	if d.costs.over == nil {
		d.costs.over = map[string]bool{}
	}
	for surfaceID := range d.costs.over {
		if _, live := costs[surfaceID]; !live {
			delete(d.costs.over, surfaceID)
		}
	}
	for surfaceID, c := range costs {
		ceiling := d.memoryCeiling(bySurface[surfaceID].name)
		switch {
		case ceiling <= 0:
			delete(d.costs.over, surfaceID)
		case c.RSSBytes > ceiling && !d.costs.over[surfaceID]:
			d.costs.over[surfaceID] = true
			raises = append(raises, raise{surfaceID, fmt.Sprintf("memory %s is over its ceiling of %s (%d processes)",
				proccost.FormatBytes(c.RSSBytes), proccost.FormatBytes(ceiling), c.Processes)})
		case c.RSSBytes < ceiling*9/10:
			// Below the ceiling by a margin: a tree that hovers at it
			// raises one item, not one per sample.
			delete(d.costs.over, surfaceID)
		}
	}
	d.costs.mu.Unlock()
	for _, r := range raises {
		d.logger.Info("memory ceiling crossed", "session", bySurface[r.surfaceID].name, "msg", r.msg)
		if !d.events.Notify(r.surfaceID, r.msg, now) {
			d.logger.Warn("memory ceiling item dropped: the event queue is full", "surface_id", r.surfaceID)
		}
	}
	if len(roots) > 0 {
		d.stateChanged()
	}
	return nil
}

// PaneCost is what a session's live pane costs, for explain
// (events.PaneReporter).
func (d *Daemon) PaneCost(sessionID string) (proto.ProcessCost, bool) {
	d.mu.Lock()
	s, ok := d.sessions[sessionID]
	if !ok || s.pane == nil {
		d.mu.Unlock()
		return proto.ProcessCost{}, false
	}
	surfaceID, name := s.surface.ID, s.rec.Name
	d.mu.Unlock()
	d.costs.mu.Lock()
	c, ok := d.costs.by[surfaceID]
	at := d.costs.at
	d.costs.mu.Unlock()
	if !ok {
		return proto.ProcessCost{}, false
	}
	out := proto.ProcessCost{
		RSSBytes: c.RSSBytes, PSSBytes: c.PSSBytes, Processes: c.Processes,
		MemoryCeiling: d.memoryCeiling(name), SampledAt: at.UTC().Format(time.RFC3339Nano),
		Evidence: "each process's stat (RSS, CPU ticks) and smaps_rollup (PSS) under /proc, for every process descending from the pane's",
	}
	if c.CPUPercent >= 0 {
		cpu := math.Round(c.CPUPercent*10) / 10
		out.CPUPercent = &cpu
	}
	return out, true
}
