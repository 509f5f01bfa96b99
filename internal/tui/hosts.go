package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

// HostState is one host (muster host add) as the dashboard shows it.
type HostState struct {
	Name string
	// State is connected, connecting, unreachable or needs-attention.
	State  string
	Reason string
	// LastSeen is when the host last answered; zero if never.
	LastSeen time.Time
}

// HostSource is a Backend that also shows the sessions of hosts: its
// watch stream carries them named HOST:NAME (and their attention items),
// and every call taking a name takes that form too. Hosts says how each
// host is reached now; the sessions of one that is not connected are its
// last known ones.
type HostSource interface {
	Hosts() []HostState
}

// HostCreator is a HostSource that also starts sessions on its hosts
// (the new-session dialog's host field): Dir is the host's, relative to
// its home when not absolute, and the session comes back named
// HOST:NAME.
type HostCreator interface {
	HostSource
	NewOn(ctx context.Context, host string, a proto.NewArgs) (proto.SessionInfo, error)
}

// hostsNow asks the backend for its hosts, if it has any.
func (m Model) hostsNow() []HostState {
	if hs, ok := m.backend.(HostSource); ok {
		return hs.Hosts()
	}
	return nil
}

// hostIndex is the hosts by name, nil when there are none: the session
// table then looks as it always did.
func hostIndex(hosts []HostState) map[string]HostState {
	if len(hosts) == 0 {
		return nil
	}
	m := make(map[string]HostState, len(hosts))
	for _, h := range hosts {
		m[h.Name] = h
	}
	return m
}

// splitHost cuts HOST:NAME; a session of this machine has no host.
func splitHost(name string) (host, bare string) {
	if h, n, ok := strings.Cut(name, ":"); ok {
		return h, n
	}
	return "", name
}

// hostDown reports whether the session is on a host that is not
// connected: what it shows is the last the host said.
func hostDown(hosts map[string]HostState, name string) bool {
	h, _ := splitHost(name)
	if h == "" || hosts == nil {
		return false
	}
	st, ok := hosts[h]
	return !ok || st.State != "connected"
}

// hostsNote says which hosts are not connected, and since when they were
// last seen: "h1 unreachable, seen 2m ago".
func hostsNote(hosts []HostState, now time.Time) string {
	var parts []string
	for _, h := range hosts {
		if h.State == "connected" {
			continue
		}
		seen := "never seen"
		if !h.LastSeen.IsZero() {
			seen = "seen " + age(h.LastSeen.Format(time.RFC3339Nano), now) + " ago"
		}
		parts = append(parts, fmt.Sprintf("%s %s, %s", termtext.Line(h.Name), termtext.Line(h.State), seen))
	}
	if len(parts) == 0 {
		return ""
	}
	return "host " + strings.Join(parts, "; ") + " · dimmed: last known state"
}
