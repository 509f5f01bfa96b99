package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/runstate"
)

// WaitSpec is what Wait waits for on one host, in the words of `muster
// wait`: every named session (or any one, with Any) in one of Until.
// No names with Any is every session of the host, new ones too.
type WaitSpec struct {
	Names    []string
	Until    []string
	Any      bool
	Deadline time.Time // zero: no timeout
}

// Backoff bounds reconnects: the first try waits about First, each
// later one twice the one before up to Max, each drawn at random from
// its upper half so that clients that lost one host together do not
// come back together.
type Backoff struct{ First, Max time.Duration }

// DefaultBackoff is cmux-tui's: quick after a blip, at most every few
// seconds against a host that is gone.
var DefaultBackoff = Backoff{First: 100 * time.Millisecond, Max: 5 * time.Second}

// Delay is the wait before retry n (0 for the first retry).
func (b Backoff) Delay(n int) time.Duration {
	d := b.First
	for i := 0; i < n && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	return d/2 + rand.N(d/2+1)
}

// heartbeat is how often a long wait checks that the link still carries
// a round trip, and heartbeatTimeout how long one may take: ssh's own
// ServerAlive notices a silent link only after 45 s.
const (
	heartbeat        = 5 * time.Second
	heartbeatTimeout = 10 * time.Second
)

// errLinkLost is the link going away under a running command.
var errLinkLost = errors.New("the connection was lost")

// LinkEvent tells a waiting caller what its link does: Err non-nil when
// it went down (and why), nil when it is back.
type LinkEvent struct {
	Host string
	Err  error
}

// marks are what a host had said about the waited sessions when the
// wait began: the newest event sequence of each and the newest attention
// item, so that after a reconnect what happened while the link was down
// can be told from what was there before.
type marks struct {
	seq  map[string]int64 // by session name; absent: a session made since
	item int64
}

// Wait waits on the host's sessions by running its `muster wait`, and
// outlives any number of link drops: when the connection goes (ssh exits
// 255, or the heartbeat gets no answer) it reconnects with a jittered
// backoff and, before waiting again, reads the events the host recorded
// since the wait began: a wanted state reached and left while the link
// was down still counts. Then the host's wait checks the current state
// first, so a state reached while down and still held counts too.
// events, if not nil, hears the link go down and come back.
func Wait(ctx context.Context, l Link, spec WaitSpec, events func(LinkEvent)) (proto.WaitResult, error) {
	if l.Host.Muster == "" {
		return proto.WaitResult{}, &Error{Host: l.Host.Name, State: NeedsAttention, Reason: ErrNotInstalled.Error(),
			Command: ShellQuote("muster", "host", "add", l.Host.Name, l.Host.Dest)}
	}
	states, attention, err := proto.ExpandWaitStates(spec.Until)
	if err != nil {
		return proto.WaitResult{}, err
	}
	var base *marks
	reached := map[string]proto.WaitSession{} // all-mode: names already seen there
	down := false
	for try := 0; ; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return proto.WaitResult{}, ctx.Err()
			case <-time.After(DefaultBackoff.Delay(try - 1)):
			}
		}
		if !spec.Deadline.IsZero() && !time.Now().Before(spec.Deadline) {
			return timedOut(spec, reached), nil
		}
		err := l.Connect(ctx)
		if err == nil && base == nil {
			var m marks
			if m, err = readMarks(ctx, l, spec.Names); err == nil {
				base = &m
			}
		} else if err == nil {
			var missed []proto.WaitSession
			if missed, err = missedWhileDown(ctx, l, spec.Names, *base, states, attention); err == nil {
				for _, s := range missed {
					reached[s.Name] = s
				}
				if res, done := settle(spec, reached); done {
					return res, nil
				}
			}
		}
		if err == nil {
			if down && events != nil {
				events(LinkEvent{Host: l.Host.Name})
			}
			down, try = false, 0
			var res proto.WaitResult
			res, err = waitOnce(ctx, l, spec, reached)
			if err == nil {
				return merge(res, reached), nil
			}
		}
		if ctx.Err() != nil {
			return proto.WaitResult{}, ctx.Err()
		}
		if he, ok := errors.AsType[*Error](err); ok && he.State == NeedsAttention {
			return proto.WaitResult{}, err
		}
		if _, ok := errors.AsType[*RemoteExit](err); ok {
			return proto.WaitResult{}, err
		}
		if _, ok := errors.AsType[*SkewError](err); ok {
			// Waiting longer changes nothing: the daemon refuses it.
			return proto.WaitResult{}, err
		}
		if !down && events != nil {
			events(LinkEvent{Host: l.Host.Name, Err: err})
		}
		down = true
	}
}

// waitOnce runs the host's wait for what is still wanted; errLinkLost
// (or an *Error) when the link went down under it.
func waitOnce(ctx context.Context, l Link, spec WaitSpec, reached map[string]proto.WaitSession) (proto.WaitResult, error) {
	names := spec.Names
	if !spec.Any {
		names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { _, ok := reached[n]; return ok })
	}
	argv := []string{l.Host.Muster, "wait", "--json", "--until=" + strings.Join(spec.Until, ",")}
	if spec.Any {
		argv = append(argv, "--any")
	}
	if !spec.Deadline.IsZero() {
		left := time.Until(spec.Deadline)
		if left <= 0 {
			return timedOut(spec, reached), nil
		}
		argv = append(argv, "--timeout="+strconv.FormatInt(max(left.Milliseconds(), 1), 10)+"ms")
	}
	argv = append(append(argv, "--"), names...)
	run, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := l.Command(run, false, argv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return proto.WaitResult{}, fmt.Errorf("host %s: %w", l.Host.Name, err)
	}
	lost := make(chan struct{})
	var beat sync.WaitGroup
	beat.Go(func() { heartbeatUntil(run, l, cancel, lost) })
	err := cmd.Wait()
	cancel()
	beat.Wait()
	var res proto.WaitResult
	select {
	case <-lost:
		l.dropMaster()
		return res, errLinkLost
	default:
	}
	if json.Unmarshal(out.Bytes(), &res) == nil && res.Status != "" {
		return res, nil
	}
	if ctx.Err() != nil && err != nil {
		return res, err
	}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.ExitCode() != 255 {
		return res, remoteFailure(l, ee.ExitCode(), errb.String())
	}
	if err == nil {
		return res, fmt.Errorf("host %s: bad answer to wait: %q", l.Host.Name, out.Bytes())
	}
	return res, l.classify(ctx, errb.String(), err)
}

// heartbeatUntil runs a round trip through the link every heartbeat
// until ctx ends; when one gets no answer in time it closes lost and
// calls stop.
func heartbeatUntil(ctx context.Context, l Link, stop func(), lost chan<- struct{}) {
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		hctx, cancel := context.WithTimeout(ctx, heartbeatTimeout)
		cmd := l.Command(hctx, false, "true")
		err := cmd.Run()
		timedOut := hctx.Err() == context.DeadlineExceeded
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil && timedOut {
			close(lost)
			stop()
			return
		}
	}
}

// readMarks reads the newest event of each named session (of every
// session, when there are no names) and the newest attention item, in
// one round trip.
func readMarks(ctx context.Context, l Link, names []string) (marks, error) {
	m := marks{seq: map[string]int64{}}
	xs, items, err := snapshot(ctx, l, names)
	if err != nil {
		return m, err
	}
	for _, x := range xs {
		m.seq[x.Name] = newestSeq(x)
	}
	for _, it := range items {
		m.item = max(m.item, it.ID)
	}
	return m, nil
}

// snapshotScript prints, for each session named, its explanation,
// then the attention drawer with what was resolved lately: JSON
// documents one after another, each section after its name.
const snapshotScript = `m=$1; shift
echo '"explain"'
for n; do "$m" explain --json -- "$n" 2>/dev/null || echo null; done
echo '"attention"'
"$m" attention --all --json`

// snapshot asks the host for the explanations of names (of every
// session it has now, when there are none) and its attention items.
func snapshot(ctx context.Context, l Link, names []string) ([]proto.Explanation, []proto.AttentionItem, error) {
	if len(names) == 0 {
		out, err := l.Run(ctx, nil, l.Host.Muster, "ls", "--json")
		if err != nil {
			return nil, nil, err
		}
		var list []proto.SessionInfo
		if err := json.Unmarshal(out, &list); err != nil {
			return nil, nil, fmt.Errorf("host %s: bad answer to ls: %w", l.Host.Name, err)
		}
		for _, s := range list {
			names = append(names, s.Name)
		}
	}
	out, err := l.Run(ctx, nil, append([]string{"sh", "-c", snapshotScript, "sh", l.Host.Muster}, names...)...)
	if err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var xs []proto.Explanation
	var items []proto.AttentionItem
	section := ""
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			break
		} else if err != nil {
			return nil, nil, fmt.Errorf("host %s: bad answer to a snapshot: %w", l.Host.Name, err)
		}
		var word string
		if json.Unmarshal(raw, &word) == nil {
			section = word
			continue
		}
		switch section {
		case "explain":
			var x *proto.Explanation
			if json.Unmarshal(raw, &x) == nil && x != nil {
				xs = append(xs, *x)
			}
		case "attention":
			json.Unmarshal(raw, &items)
		}
	}
	if section != "attention" {
		return nil, nil, fmt.Errorf("host %s: the snapshot was cut short", l.Host.Name)
	}
	return xs, items, nil
}

func newestSeq(x proto.Explanation) int64 {
	var s int64
	for _, e := range x.Events {
		s = max(s, e.Seq)
	}
	return s
}

// missedWhileDown lists the sessions that reached a wanted state after
// the marks: an event that moved their run to one of states, or (for
// attention) an item opened for them, whether or not they have left it
// since. A session made since the marks counts from its first event.
// The host keeps each session's last events only: a session that saw
// more while the link was down is judged by its current state, which the
// wait that follows checks.
func missedWhileDown(ctx context.Context, l Link, names []string, base marks, states []proto.RunState, attention bool) ([]proto.WaitSession, error) {
	xs, items, err := snapshot(ctx, l, names)
	if err != nil {
		return nil, err
	}
	var got []proto.WaitSession
	for _, x := range xs {
		since, known := base.seq[x.Name]
		if len(names) > 0 && !known {
			// A named session renamed away and another made under its
			// name: only its own events count.
			since = 0
		}
		for _, e := range x.Events {
			if e.Seq <= since || (e.Effect != string(runstate.EffectApplied) && e.Effect != string(runstate.EffectConfirmed)) {
				continue
			}
			if st := runstate.StateFor(proto.EventKind(e.Kind)); slices.Contains(states, st) {
				got = append(got, proto.WaitSession{Name: x.Name, SessionID: x.SessionID, State: string(st), RunID: e.RunID, Reached: true})
				break
			}
		}
	}
	if attention {
		for _, it := range items {
			if it.ID <= base.item || len(names) > 0 && !slices.Contains(names, it.SessionName) {
				continue
			}
			if !slices.ContainsFunc(got, func(s proto.WaitSession) bool { return s.Name == it.SessionName }) {
				got = append(got, proto.WaitSession{Name: it.SessionName, SessionID: it.SessionID, State: "attention", RunID: it.RunID, Attention: 1, Reached: true})
			}
		}
	}
	return got, nil
}

// settle says whether what was seen while the link was down ends the
// wait: any one session with Any, every named one without.
func settle(spec WaitSpec, reached map[string]proto.WaitSession) (proto.WaitResult, bool) {
	if len(reached) == 0 {
		return proto.WaitResult{}, false
	}
	if !spec.Any {
		for _, n := range spec.Names {
			if _, ok := reached[n]; !ok {
				return proto.WaitResult{}, false
			}
		}
	}
	return merge(proto.WaitResult{Status: proto.WaitReached}, reached), true
}

// merge adds the sessions seen reached while the link was down to the
// host's answer for the others.
func merge(res proto.WaitResult, reached map[string]proto.WaitSession) proto.WaitResult {
	for _, s := range sortedSessions(reached) {
		if !slices.ContainsFunc(res.Sessions, func(r proto.WaitSession) bool { return r.Name == s.Name }) {
			res.Sessions = append(res.Sessions, s)
		}
	}
	return res
}

func timedOut(spec WaitSpec, reached map[string]proto.WaitSession) proto.WaitResult {
	res := proto.WaitResult{Status: proto.WaitTimeout}
	for _, n := range spec.Names {
		s, ok := reached[n]
		if !ok {
			s = proto.WaitSession{Name: n}
		}
		res.Sessions = append(res.Sessions, s)
	}
	return res
}

func sortedSessions(m map[string]proto.WaitSession) []proto.WaitSession {
	var out []proto.WaitSession
	for _, s := range m {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b proto.WaitSession) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}
