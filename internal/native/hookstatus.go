package native

import (
	"sync"
	"time"

	"github.com/musterhq/muster/internal/hookinstall"
)

// HookStatus returns a Config.HooksInstalled backed by hookinstall.Status:
// a provider's hooks count as installed when its configuration holds our
// entries (installed or outdated: they still run `muster hook event`). Each
// provider's file is read again at most once per ttl. Providers without a
// hook installer are never installed.
func HookStatus(env hookinstall.Env, musterPath string, ttl time.Duration, now func() time.Time) func(provider string) bool {
	if now == nil {
		now = time.Now
	}
	type entry struct {
		installed bool
		at        time.Time
	}
	var mu sync.Mutex
	cache := map[string]entry{}
	known := map[string]bool{}
	for _, p := range hookinstall.Providers() {
		known[p] = true
	}
	return func(provider string) bool {
		if !known[provider] {
			return false
		}
		t := now()
		mu.Lock()
		defer mu.Unlock()
		if c, ok := cache[provider]; ok && t.Sub(c.at) < ttl && !t.Before(c.at) {
			return c.installed
		}
		st := hookinstall.Status(env, provider, musterPath).State
		installed := st == hookinstall.Installed || st == hookinstall.Outdated
		cache[provider] = entry{installed: installed, at: t}
		return installed
	}
}
