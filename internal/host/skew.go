package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/musterhq/muster/internal/proto"
)

// SkewError is a host whose daemon speaks another control protocol than
// the muster this machine runs there, and none that both speak
// (proto.Speaks; OlderDaemon is one they do). The control protocol serves
// only its frozen ops (status, stop, restart) across those, so the host's
// status still answers and `muster host upgrade` can restart the daemon
// into the host's muster; every other op is refused there until then.
type SkewError struct {
	Host           string
	DaemonVersion  string // "" when the daemon did not say
	DaemonProtocol int
	MusterVersion  string
	MusterProtocol int
}

// CannotDo is what a host in skew cannot do from here, in the words the
// user runs: every command but its status goes through the daemon's
// non-frozen ops.
const CannotDo = "list, start, attach to, send to, capture, kill, rename, wait on or explain its sessions, or read or acknowledge its attention items"

func (e *SkewError) Error() string {
	return fmt.Sprintf("host %s: %s; it cannot %s from here", e.Host, e.versions(), CannotDo)
}

func (e *SkewError) versions() string {
	dv := "of an unknown version"
	if e.DaemonVersion != "" {
		dv = "version " + e.DaemonVersion
	}
	return fmt.Sprintf("its daemon is %s (control protocol %d) and its muster %s speaks control protocol %d",
		dv, e.DaemonProtocol, e.MusterVersion, e.MusterProtocol)
}

// OlderDaemon says what a host whose daemon speaks an older control
// protocol, one this muster still speaks (proto.Speaks), cannot do from
// here: every command goes through, and only an attach keeps the user's
// terminal in the host's muster, which relays it, where a daemon of this
// protocol would take it (proto.DirectAttach).
func OlderDaemon(hostName string, st proto.DaemonStatus, musterVersion string) string {
	e := &SkewError{Host: hostName, DaemonVersion: st.Version, DaemonProtocol: st.Protocol, MusterVersion: musterVersion, MusterProtocol: proto.ControlVersion}
	return fmt.Sprintf("host %s: %s; every command works there, but attach relays the terminal through its muster instead of handing it to the daemon; %s",
		hostName, e.versions(), e.Advice())
}

// Reason is the error without the host's name, as host ls shows it.
func (e *SkewError) Reason() string {
	return fmt.Sprintf("%s: it cannot %s until it is upgraded (agents keep running)", e.versions(), CannotDo)
}

// Advice is what to run on this machine; the restart keeps every pane of
// the host, so no agent there stops.
func (e *SkewError) Advice() string {
	if e.DaemonProtocol > e.MusterProtocol {
		// Restarting a newer daemon into this muster would take
		// features away from every client on the host.
		return fmt.Sprintf("its daemon is newer than this muster: upgrade muster on this machine to %s or later, then run `muster host upgrade %s` (its agents keep running)", orUnknown(e.DaemonVersion), e.Host)
	}
	return fmt.Sprintf("run `muster host upgrade %s` to restart that daemon into muster %s; its agents keep running", e.Host, e.MusterVersion)
}

func orUnknown(v string) string {
	if v == "" {
		return "the host's"
	}
	return v
}

// mismatchLine matches proto.VersionMismatch as the host's muster prints
// it; TestSkewParsesTheMismatchLine holds the two together.
var mismatchLine = regexp.MustCompile(`the running daemon is (?:version (\S+)|older|newer|of an unknown version) \(control protocol (\d+)\), this client is (?:version (\S+)|older|newer|of an unknown version) \(control protocol (\d+)\)`)

// ParseSkew reads the host's own mismatch line out of what its muster
// printed on stderr, nil when there is none.
func ParseSkew(hostName, stderr string) *SkewError {
	m := mismatchLine.FindStringSubmatch(stderr)
	if m == nil {
		return nil
	}
	dp, _ := strconv.Atoi(m[2])
	mp, _ := strconv.Atoi(m[4])
	return &SkewError{Host: hostName, DaemonVersion: m[1], DaemonProtocol: dp, MusterVersion: m[3], MusterProtocol: mp}
}

// stateOf is how host ls shows a host that failed with err: its state,
// the reason and, when a person must act, the command to run.
func stateOf(err error) (state, reason, command string) {
	if he, ok := errors.AsType[*Error](err); ok {
		return he.State, he.Reason, he.Command
	}
	if se, ok := errors.AsType[*SkewError](err); ok {
		reason = se.Reason()
		if se.DaemonProtocol < se.MusterProtocol {
			command = ShellQuote("muster", "host", "upgrade", se.Host)
		} else {
			reason += "; " + se.Advice()
		}
		return NeedsAttention, reason, command
	}
	return Unreachable, err.Error(), ""
}

// CheckSkew asks the host's muster for something only a daemon of its
// own protocol serves: the *SkewError when the two speak different ones,
// nil when they agree, another error when the host could not be asked.
func CheckSkew(ctx context.Context, l Link) error {
	_, err := l.Run(ctx, nil, l.Host.Muster, "ls", "--json")
	return err
}

// frozenStatus is the host daemon's status, which every version serves.
func frozenStatus(ctx context.Context, l Link) (proto.DaemonStatus, error) {
	var st struct {
		proto.DaemonStatus
		Running bool `json:"running"`
	}
	out, err := l.Run(ctx, nil, l.Host.Muster, "daemon", "status", "--json")
	if err != nil {
		return st.DaemonStatus, err
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return st.DaemonStatus, fmt.Errorf("host %s: bad answer to daemon status: %w", l.Host.Name, err)
	}
	return st.DaemonStatus, nil
}
