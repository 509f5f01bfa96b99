package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
)

// Status is one host as `muster host ls` shows it.
type Status struct {
	Name     string `json:"name"`
	Dest     string `json:"dest"`
	State    string `json:"state"`
	Version  string `json:"version"`
	Sessions int    `json:"sessions"`
	// LastSeen is when the host last answered (RFC 3339), empty if never.
	LastSeen string `json:"last_seen"`
	Reason   string `json:"reason,omitempty"`
	// Command, for needs-attention, is what to run once by hand.
	Command string `json:"command,omitempty"`
}

// seen is what the state file remembers of a host between commands.
type seen struct {
	LastSeen time.Time `json:"last_seen"`
	Version  string    `json:"version"`
	Sessions int       `json:"sessions"`
	// List is the sessions as the host last listed them: what is shown,
	// marked stale, while it does not answer.
	List []proto.SessionInfo `json:"list,omitempty"`
}

var seenMu sync.Mutex

func seenFile(dirs paths.Dirs) string { return filepath.Join(dirs.State, "hosts.json") }

func loadSeen(dirs paths.Dirs) map[string]seen {
	m := map[string]seen{}
	b, err := os.ReadFile(seenFile(dirs))
	if err == nil {
		json.Unmarshal(b, &m)
	}
	return m
}

// updateSeen changes the state file's entry for name (deleting it when
// fn returns false). Two commands writing at once lose one update at
// worst: the file is a cache of the last answer, never the only copy.
func updateSeen(dirs paths.Dirs, name string, fn func(*seen) bool) {
	seenMu.Lock()
	defer seenMu.Unlock()
	if dirs.EnsureState() != nil {
		return
	}
	m := loadSeen(dirs)
	s := m[name]
	if fn(&s) {
		m[name] = s
	} else {
		delete(m, name)
	}
	b, _ := json.Marshal(m)
	tmp, err := os.CreateTemp(dirs.State, ".hosts.json.*")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(b)
	if tmp.Close() == nil && werr == nil {
		os.Rename(tmp.Name(), seenFile(dirs))
	}
}

// Forget drops what the state file remembers of name.
func Forget(dirs paths.Dirs, name string) {
	updateSeen(dirs, name, func(*seen) bool { return false })
}

// MarkSeen records that h answered now, running version, with sessions.
func MarkSeen(dirs paths.Dirs, name, version string, sessions int) {
	markSeen(dirs, name, version, sessions, nil)
}

func markSeen(dirs paths.Dirs, name, version string, sessions int, list []proto.SessionInfo) {
	updateSeen(dirs, name, func(s *seen) bool {
		s.LastSeen, s.Sessions = time.Now().UTC(), sessions
		if list != nil {
			s.List = list
		}
		if version != "" {
			s.Version = version
		}
		return true
	})
}

// ErrNotInstalled is a host recorded before muster could be installed there.
var ErrNotInstalled = errors.New("muster is not installed there yet")

// Sessions lists the host's sessions by running its muster, which starts
// the host's daemon on demand.
func Sessions(ctx context.Context, dirs paths.Dirs, l Link) ([]proto.SessionInfo, error) {
	if l.Host.Muster == "" {
		return nil, &Error{Host: l.Host.Name, State: NeedsAttention, Reason: ErrNotInstalled.Error(),
			Command: ShellQuote("muster", "host", "add", l.Host.Name, l.Host.Dest)}
	}
	out, err := l.Run(ctx, nil, l.Host.Muster, "ls", "--json")
	if err != nil {
		return nil, err
	}
	var list []proto.SessionInfo
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("host %s: bad answer to ls: %w", l.Host.Name, err)
	}
	if list == nil {
		list = []proto.SessionInfo{}
	}
	markSeen(dirs, l.Host.Name, "", len(list), list)
	return list, nil
}

// Listing is one host's answer to ListAll.
type Listing struct {
	Status   Status
	Sessions []proto.SessionInfo
	// Stale: the host did not answer, and Sessions are those it listed
	// when it last did.
	Stale bool
}

// ListAll asks every host for its sessions at once, each bounded by
// timeout: a host that does not answer in time is listed with its state
// and reason, never holding up the others. Each goes through the local
// daemon's relay to the host when it can (version is this muster's),
// else runs the host's muster over ssh.
func ListAll(ctx context.Context, dirs paths.Dirs, cfg config.Config, version string, timeout time.Duration) []Listing {
	res := make([]Listing, len(cfg.Hosts))
	var wg sync.WaitGroup
	for i, h := range cfg.Hosts {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			l := NewLink(dirs, cfg.SSH, h)
			list, err := relayedSessions(ctx, dirs, version, h)
			if errors.Is(err, errUseSSH) {
				list, err = Sessions(ctx, dirs, l)
			}
			st := Status{Name: h.Name, Dest: h.Dest, State: Connected, Sessions: len(list)}
			if err != nil {
				st.State, st.Reason, st.Command = stateOf(err)
			}
			if _, ok := errors.AsType[*SkewError](err); ok {
				// What both versions speak: the daemon's status, so the
				// host still shows its version and how many sessions it
				// holds.
				if ds, err := frozenStatus(ctx, l); err == nil {
					markSeen(dirs, h.Name, ds.Version, ds.Sessions, nil)
				}
			}
			res[i] = Listing{Status: st, Sessions: list}
		})
	}
	wg.Wait()
	m := loadSeen(dirs)
	for i := range res {
		s := m[res[i].Status.Name]
		res[i].Status.Version = s.Version
		if !s.LastSeen.IsZero() {
			res[i].Status.LastSeen = s.LastSeen.Format(time.RFC3339)
		}
		if res[i].Status.State != Connected {
			res[i].Status.Sessions = s.Sessions
			res[i].Sessions, res[i].Stale = s.List, len(s.List) > 0
		}
	}
	return res
}

// relayedSessions is Sessions through the local daemon's relay.
func relayedSessions(ctx context.Context, dirs paths.Dirs, version string, h config.Host) ([]proto.SessionInfo, error) {
	if h.Muster == "" {
		return nil, errUseSSH
	}
	var list []proto.SessionInfo
	if err := viaDaemon(ctx, dirs, version, h, proto.OpList, nil, &list); err != nil {
		return nil, err
	}
	// The host's own muster also lists the agents a CLI's supervisor
	// runs there (claude --bg), by running that CLI: the daemon cannot.
	var st proto.DaemonStatus
	if err := viaDaemon(ctx, dirs, version, h, proto.OpStatus, nil, &st); err != nil {
		return nil, err
	}
	if st.BackgroundAgents {
		return nil, errUseSSH
	}
	if list == nil {
		list = []proto.SessionInfo{}
	}
	markSeen(dirs, h.Name, "", len(list), list)
	return list, nil
}

// AttentionAll asks every host for its attention drawer at once, each
// bounded by timeout as ListAll is (and the same way); each item carries
// its host. A host that does not answer is returned in down with its
// state and reason.
func AttentionAll(ctx context.Context, dirs paths.Dirs, cfg config.Config, version string, all bool, timeout time.Duration) (items []proto.AttentionItem, down []Status) {
	type answer struct {
		items []proto.AttentionItem
		st    *Status
	}
	res := make([]answer, len(cfg.Hosts))
	var wg sync.WaitGroup
	for i, h := range cfg.Hosts {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			l := NewLink(dirs, cfg.SSH, h)
			fail := func(err error) {
				st := Status{Name: h.Name, Dest: h.Dest}
				st.State, st.Reason, st.Command = stateOf(err)
				res[i].st = &st
			}
			if h.Muster == "" {
				fail(&Error{Host: h.Name, State: NeedsAttention, Reason: ErrNotInstalled.Error(),
					Command: ShellQuote("muster", "host", "add", h.Name, h.Dest)})
				return
			}
			var got []proto.AttentionItem
			err := viaDaemon(ctx, dirs, version, h, proto.OpAttention, proto.AttentionArgs{All: all}, &got)
			if errors.Is(err, errUseSSH) {
				argv := []string{h.Muster, "attention", "--json"}
				if all {
					argv = append(argv, "--all")
				}
				var out []byte
				if out, err = l.Run(ctx, nil, argv...); err == nil {
					if err := json.Unmarshal(out, &got); err != nil {
						fail(fmt.Errorf("host %s: bad answer to attention: %w", h.Name, err))
						return
					}
				}
			}
			if err != nil {
				fail(err)
				return
			}
			for j := range got {
				got[j].Host = h.Name
			}
			res[i].items = got
		})
	}
	wg.Wait()
	for _, r := range res {
		items = append(items, r.items...)
		if r.st != nil {
			down = append(down, *r.st)
		}
	}
	return items, down
}

// MarkListed records that the host answered now with sessions (what is
// shown, marked stale, while it does not answer).
func MarkListed(dirs paths.Dirs, name string, sessions []proto.SessionInfo) {
	if sessions == nil {
		sessions = []proto.SessionInfo{}
	}
	markSeen(dirs, name, "", len(sessions), sessions)
}

// Remembered is what the host listed when it last answered, and when
// that was (zero: never).
func Remembered(dirs paths.Dirs, name string) ([]proto.SessionInfo, time.Time) {
	seenMu.Lock()
	defer seenMu.Unlock()
	s := loadSeen(dirs)[name]
	return s.List, s.LastSeen
}
