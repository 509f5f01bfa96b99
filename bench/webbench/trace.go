package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
)

// traceEvent is one event of a Chromium trace (the JSON trace format); ts
// is in microseconds on the trace clock, shared by every process.
type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args"`
}

// trace records a Chromium trace of the page through CDP.
type trace struct {
	mu     sync.Mutex
	events []traceEvent
	done   chan struct{}
}

var traceCategories = []string{
	"devtools.timeline", "disabled-by-default-devtools.timeline", "disabled-by-default-devtools.timeline.frame",
	"blink.user_timing", "viz", "cc", "benchmark",
}

func startTrace(ctx context.Context) *trace {
	tr := &trace{done: make(chan struct{})}
	must(chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			tr.mu.Lock()
			for _, v := range e.Value {
				var te traceEvent
				if json.Unmarshal([]byte(v), &te) == nil {
					tr.events = append(tr.events, te)
				}
			}
			tr.mu.Unlock()
		case *tracing.EventTracingComplete:
			close(tr.done)
		}
	}))
	do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, tracing.Start, tracing.StartParams{
			TransferMode: tracing.StartTransferModeReportEvents,
			TraceConfig:  &tracing.TraceConfig{IncludedCategories: traceCategories},
		})
		return err
	}))
	return tr
}

func (tr *trace) stop(ctx context.Context) []traceEvent {
	do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, tracing.End, cdp.Empty{})
		return err
	}))
	select {
	case <-tr.done:
	case <-time.After(60 * time.Second):
		must(fmt.Errorf("the trace did not complete"))
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	sort.SliceStable(tr.events, func(i, j int) bool { return tr.events[i].Ts < tr.events[j].Ts })
	return tr.events
}
