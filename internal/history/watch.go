package history

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/musterhq/muster/internal/transcript"
)

// Watch tuning. Transcripts are appended to continuously while an agent
// works, so a refresh runs debounce after the last event but no later than
// maxDelay after the first one of a burst.
const (
	debounce = 200 * time.Millisecond
	maxDelay = time.Second
	// rescanEvery is a safety net for events the kernel dropped silently;
	// a warm refresh only stats files, so it is cheap.
	rescanEvery = 5 * time.Minute
	// pollEvery replaces events when watches cannot be added (inotify
	// limits) or too many directories would need them.
	pollEvery = 30 * time.Second
	// maxWatches bounds the directories one Watch adds (inotify watches are
	// a per-user kernel resource shared with every other program).
	maxWatches = 8192
	// freeAfterRead is how many transcript bytes a refresh reads before
	// the memory it used is returned to the system at once.
	freeAfterRead = 64 << 20
)

// Watch keeps idx fresh until ctx ends: it refreshes once, then watches
// every source's roots (recursively, adding new subdirectories as they
// appear, and the nearest existing parent of a root that does not exist
// yet), refreshing the sources whose files changed, debounced. An event
// queue overflow triggers a full rescan; vanished files drop out of the
// index with the refresh. It returns nil when ctx ends, or the error that
// stopped it before.
func Watch(ctx context.Context, idx *Index, sources []transcript.Source, env transcript.Env, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	w := &watcher{idx: idx, sources: sources, env: env, log: logger, watched: map[string]bool{}}
	if idx.follows == nil {
		idx.follows = newFollowCache()
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		logger.Warn("transcript watcher unavailable; polling instead", "err", err)
	} else {
		w.fw = fw
		defer fw.Close()
	}
	all := make([]bool, len(sources))
	for i := range all {
		all[i] = true
	}
	w.addAll()
	w.refresh(ctx, all)

	var events <-chan fsnotify.Event
	var errs <-chan error
	if w.fw != nil {
		events, errs = w.fw.Events, w.fw.Errors
	}
	dirty := make([]bool, len(sources))
	pending := false
	var first time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	every := rescanEvery
	if w.fw == nil || w.capped {
		every = pollEvery
	}
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	arm := func() {
		now := time.Now()
		if !pending {
			pending, first = true, now
		}
		wait := min(debounce, maxDelay-now.Sub(first))
		timer.Reset(max(wait, 0))
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				return errors.New("watch transcripts: watcher closed")
			}
			if w.handle(ev, dirty) {
				arm()
			}
		case err, ok := <-errs:
			if !ok {
				return errors.New("watch transcripts: watcher closed")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				logger.Info("transcript watch queue overflowed; rescanning")
				w.addAll()
				copy(dirty, all)
				arm()
				continue
			}
			logger.Warn("transcript watch error", "err", err)
		case <-timer.C:
			pending = false
			w.refresh(ctx, dirty)
			clear(dirty)
		case <-ticker.C:
			w.addAll()
			w.refresh(ctx, all)
		}
	}
}

type watcher struct {
	idx     *Index
	sources []transcript.Source
	env     transcript.Env
	log     *slog.Logger
	fw      *fsnotify.Watcher
	watched map[string]bool
	capped  bool
	roots   [][]string // per source, cleaned
}

func (w *watcher) refresh(ctx context.Context, which []bool) {
	var srcs []transcript.Source
	var names []string
	for i, on := range which {
		if on {
			srcs = append(srcs, w.sources[i])
			names = append(names, w.sources[i].Provider())
		}
	}
	if len(srcs) == 0 || ctx.Err() != nil {
		return
	}
	start := time.Now()
	// One core stays free for the panes and the events the daemon serves
	// while it indexes in the background.
	st, err := w.idx.Refresh(ctx, srcs, w.env, RefreshOptions{Workers: max(1, runtime.GOMAXPROCS(0)-1)})
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("refresh transcript index", "err", err)
		}
		return
	}
	for _, e := range st.Errors {
		w.log.Debug("refresh transcript index", "err", e)
	}
	if st.Parsed > 0 || st.Removed > 0 {
		w.log.Info("transcript index refreshed", "provider", strings.Join(names, ","), "parsed", st.Parsed, "read", st.Read, "removed", st.Removed, "dur_ms", time.Since(start).Milliseconds())
	}
	// After reading a large transcript, give its garbage back now: the
	// daemon runs for days, and the heap would otherwise stay at its peak
	// until the scavenger got to it.
	if st.Read >= freeAfterRead {
		debug.FreeOSMemory()
	}
}

// addAll (re)adds watches for every root: the whole tree of an existing
// root, or the nearest existing ancestor of a missing one.
func (w *watcher) addAll() {
	w.roots = w.roots[:0]
	for _, src := range w.sources {
		var rs []string
		for _, r := range src.Roots(w.env) {
			if r != "" {
				rs = append(rs, filepath.Clean(r))
			}
		}
		w.roots = append(w.roots, rs)
	}
	if w.fw == nil {
		return
	}
	for _, rs := range w.roots {
		for _, r := range rs {
			w.addRoot(r)
		}
	}
}

// addRoot watches root's tree when it exists, else the nearest existing
// directory on the way to it. A directory created before its parent's
// watch was in place reports nothing (`mkdir -p` makes the whole path at
// once), so after each watch it looks again for a deeper one: once the
// nearest existing directory is watched, whatever appears under it is
// reported. Before, only the first new directory was watched, and a file
// appended to under the new root went unseen until the next rescan.
func (w *watcher) addRoot(root string) {
	isDir := func() bool { fi, err := os.Stat(root); return err == nil && fi.IsDir() }
	for {
		if isDir() {
			w.addTree(root)
			return
		}
		a := existingAncestor(root)
		if a == "" || !w.add(a) {
			return
		}
		// existingAncestor never names root itself: made meanwhile, it is
		// the deeper directory to look at again.
		if !isDir() && existingAncestor(root) == a {
			return
		}
	}
}

func existingAncestor(p string) string {
	for {
		parent := filepath.Dir(p)
		if parent == p {
			return ""
		}
		p = parent
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
	}
}

func (w *watcher) add(dir string) bool {
	if w.watched[dir] {
		return true
	}
	if len(w.watched) >= maxWatches {
		if !w.capped {
			w.capped = true
			w.log.Warn("too many transcript directories to watch; polling the rest", "watches", len(w.watched))
		}
		return false
	}
	if err := w.fw.Add(dir); err != nil {
		if !w.capped {
			w.capped = true
			w.log.Warn("cannot watch transcript directory; polling instead", "path", dir, "err", err)
		}
		return false
	}
	w.watched[dir] = true
	return true
}

func (w *watcher) addTree(root string) {
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != root {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() && !w.add(p) {
			return fs.SkipAll
		}
		return nil
	})
}

// handle marks the sources an event concerns and adds watches for new
// directories; it reports whether a refresh is due.
func (w *watcher) handle(ev fsnotify.Event, dirty []bool) bool {
	p := filepath.Clean(ev.Name)
	if ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0 && w.watched[p] {
		delete(w.watched, p) // the kernel dropped the watch with the directory
	}
	due, readd := false, false
	for i, rs := range w.roots {
		for _, r := range rs {
			switch {
			case p == r || isUnder(p, r):
				dirty[i], due = true, true
				if p == r && ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0 {
					readd = true // watch its parent until it comes back
				}
				if ev.Op&fsnotify.Create != 0 {
					if fi, err := os.Stat(p); err == nil && fi.IsDir() {
						// Files may already be inside: the refresh lists them.
						w.addTree(p)
					}
				}
			case isUnder(r, p):
				// Something on the way to a missing root appeared or went.
				if ev.Op&fsnotify.Create != 0 {
					w.addRoot(r)
				}
				if ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0 {
					readd = true
				}
				dirty[i], due = true, true
			}
		}
	}
	if readd {
		w.addAll()
	}
	return due
}

func isUnder(p, dir string) bool {
	return len(p) > len(dir) && strings.HasPrefix(p, dir) && (p[len(dir)] == filepath.Separator || dir == string(filepath.Separator))
}
