package daemon

// A restart (`muster daemon restart`, op "restart") replaces the daemon's
// binary without ending a pane: the daemon re-executes itself in place
// (syscall.Exec, same pid) as the new binary, and the new image adopts
// every pane. What crosses the exec:
//
//   - the processes: the agents stay this pid's children, so the new image
//     reaps them and learns their exit codes (pane.Adopt);
//   - descriptors with FD_CLOEXEC cleared: every pane's PTY master, the
//     daemon lock (its flock never drops, so no second daemon starts in
//     between), both listening sockets (a client that connects meanwhile
//     waits in the backlog), the state (a memfd) and the old binary (for a
//     rollback);
//   - the state, JSON in the memfd: per pane its ids, event capability,
//     pid, size, title, raw ring, emulator history and screen snapshot
//     (pane.Frozen). Each pane's reader is stopped before it is frozen, so
//     no byte read from a PTY is lost; what the programs write meanwhile
//     waits in the kernel's buffers for the new image's readers.
//
// Capabilities stay the same: each is in its program's environment, which
// no one can change in a running process, so the new image restores each
// surface's token (events.Engine.AdoptSurface) and the hooks the agents
// run go on being accepted.
//
// It fails safe. Before anything is touched the new binary must say it
// reads this state's format (`muster daemon adopts`): a file that
// is not executable, not muster, or a muster too old is refused with the
// reason and the daemon goes on as it was. If exec itself fails, or the
// new image cannot read the state, the old binary (kept open as a
// descriptor, so an upgrade that deleted it does not matter) is executed
// again with the same state, takes its panes back and reports why
// (proto.HandoffReport.Refused).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/musterhq/muster/internal/events"
	"github.com/musterhq/muster/internal/native"
	"github.com/musterhq/muster/internal/pane"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/proto"
)

// handoffFormat is the state format this binary writes; CanAdopt says
// which it reads.
const handoffFormat = 1

// The environment of an image started by a restart: the state's and the
// old binary's descriptors, and, in an old image taking its panes back,
// why the new one refused them.
const (
	envHandoff = "MUSTER_HANDOFF"
	envRefused = "MUSTER_HANDOFF_REFUSED"
)

// CanAdopt reports whether this binary adopts panes frozen in format
// (`muster daemon adopts`).
func CanAdopt(format int) error {
	if format != handoffFormat {
		return fmt.Errorf("this muster reads handoff format %d, not %d", handoffFormat, format)
	}
	return nil
}

// AdoptsLine is what `muster daemon adopts FORMAT` prints when this
// binary adopts panes of that format: a program that merely exits 0 (not
// muster at all) does not pass the check.
func AdoptsLine(format int) string {
	return "muster adopts handoff format " + strconv.Itoa(format)
}

// handoffState is what one image hands the next.
type handoffState struct {
	Format      int           `json:"format"`
	FromVersion string        `json:"from_version"`
	Token       string        `json:"token"`
	Requested   time.Time     `json:"requested"`
	LockFD      int           `json:"lock_fd"`
	ControlFD   int           `json:"control_fd"`
	EventsFD    int           `json:"events_fd"`
	Panes       []handoffPane `json:"panes"`
}

type handoffPane struct {
	SessionID     string      `json:"session_id"`
	SurfaceID     string      `json:"surface_id"`
	Capability    string      `json:"capability"`
	HooksInjected bool        `json:"hooks_injected,omitempty"`
	Pane          pane.Frozen `json:"pane"`
}

// restartPlan is a restart under way in the old image.
type restartPlan struct {
	executable string
	token      string
	requested  time.Time
	// control and events are dups of the listening sockets, kept open
	// across exec.
	control, events *os.File
	lock            *lockFile
	panes           []handoffPane
	version         string
}

// restartPlan returns the restart asked for, if any.
func (d *Daemon) restartPlan() *restartPlan {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.restart
}

// restarting reports whether the daemon is handing its panes over.
func (d *Daemon) restarting() bool { return d.restartPlan() != nil }

// requestRestart checks that the new binary adopts this daemon's panes
// and starts the handoff. Nothing has changed when it fails.
func (d *Daemon) requestRestart(ctx context.Context, a proto.RestartArgs) error {
	exe := a.Executable
	refused := func(why string) error {
		return proto.Errorf(proto.CodeInvalid, "cannot restart into %s: %s; the daemon keeps running as it was", exe, why)
	}
	if !filepath.IsAbs(exe) {
		return refused("not an absolute path")
	}
	st, err := os.Stat(exe)
	switch {
	case err != nil:
		return refused(errors.Unwrap(err).Error())
	case st.IsDir() || st.Mode()&0o111 == 0 || unix.Access(exe, unix.X_OK) != nil:
		return refused("it is not an executable file")
	}
	if err := checkAdopts(ctx, exe); err != nil {
		return refused(err.Error())
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.restart != nil {
		return proto.Errorf(proto.CodeConflict, "a restart is already under way")
	}
	if d.ln == nil || d.evln == nil {
		return proto.Errorf(proto.CodeUnsupported, "the daemon is not listening yet")
	}
	control, err := keepListener(d.ln)
	if err != nil {
		return proto.Errorf(proto.CodeInternal, "keep control.sock open: %v", err)
	}
	evs, err := keepListener(d.evln)
	if err != nil {
		control.Close()
		return proto.Errorf(proto.CodeInternal, "keep events.sock open: %v", err)
	}
	d.restart = &restartPlan{executable: exe, token: a.Token, requested: time.Now(), control: control, events: evs, version: d.opts.Version}
	d.logger.Info("restart requested", "executable", exe)
	d.stop()
	return nil
}

// checkAdopts runs the new binary's `daemon adopts`: a binary that
// is not muster, or a muster that predates restarts or reads another
// format, says no (or nothing) there instead of after the exec.
func checkAdopts(ctx context.Context, exe string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "daemon", "adopts", strconv.Itoa(handoffFormat))
	cmd.Env = os.Environ()
	out, err := cmd.CombinedOutput()
	msg := strings.TrimSpace(string(out))
	if err == nil && msg == AdoptsLine(handoffFormat) {
		return nil
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	switch {
	case ctx.Err() != nil:
		return errors.New("it did not answer `muster daemon adopts` within 10s")
	case strings.Contains(msg, "unknown command") || strings.Contains(msg, "unknown flag"):
		return errors.New("it is a muster too old to adopt panes (it has no `muster daemon adopts`)")
	case err == nil:
		return errors.New("it is not a muster that adopts panes (`daemon adopts` did not answer as one)")
	case msg != "":
		return fmt.Errorf("it cannot adopt the panes: %s", msg)
	}
	return fmt.Errorf("it cannot adopt the panes: %v", err)
}

// keepListener returns a dup of ln's socket that survives exec, and has
// ln leave its path in place when it closes.
func keepListener(ln *net.UnixListener) (*os.File, error) {
	f, err := ln.File()
	if err != nil {
		return nil, err
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil {
		f.Close()
		return nil, err
	}
	ln.SetUnlinkOnClose(false)
	return f, nil
}

// handOver ends this image's service without ending a pane: attached
// clients are told to attach again (attach.go), every control connection
// ends, and every pane is frozen into the plan.
func (d *Daemon) handOver(ln *net.UnixListener) {
	d.lock.setPhase(paths.PhaseStarting)
	ln.Close()
	d.conns.Wait()
	plan := d.restartPlan()
	d.mu.Lock()
	type live struct {
		s *session
		p *pane.Pane
	}
	var panes []live
	for _, s := range d.sessions {
		if s.pane != nil {
			panes = append(panes, live{s, s.pane})
		}
	}
	d.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, l := range panes {
		f, err := l.p.Freeze(ctx)
		if err != nil {
			if !errors.Is(err, pane.ErrReaped) {
				d.logger.Error("a pane cannot be handed over; it is closed", "session_id", l.s.rec.ID, "err", err)
			}
			// Its exit is recorded as usual (OnExit) before the store
			// closes.
			l.p.Close(2 * time.Second)
			continue
		}
		d.mu.Lock()
		plan.panes = append(plan.panes, handoffPane{
			SessionID: l.s.rec.ID, SurfaceID: l.s.surface.ID, Capability: l.s.capability,
			HooksInjected: l.s.hooksInjected, Pane: f,
		})
		d.mu.Unlock()
	}
}

// exec replaces this image with the new binary, handing it the state. It
// returns only when neither the new binary nor the old one could be
// executed.
func (plan *restartPlan) exec(logger *slog.Logger) error {
	state := handoffState{
		Format: handoffFormat, FromVersion: plan.version, Token: plan.token, Requested: plan.requested,
		LockFD: inheritable(plan.lock.f), ControlFD: inheritable(plan.control), EventsFD: inheritable(plan.events),
		Panes: plan.panes,
	}
	data, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("restart: encode the panes' state: %w", err)
	}
	memfd, err := unix.MemfdCreate("muster-handoff", 0)
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	if err := writeAll(memfd, data); err != nil {
		return fmt.Errorf("restart: write the panes' state: %w", err)
	}
	// The old binary, for a rollback even if an upgrade replaced or
	// removed its file.
	self, err := unix.Open("/proc/self/exe", unix.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("restart: keep this binary: %w", err)
	}
	env := withoutHandoffEnv(os.Environ())
	env = append(env, envHandoff+"="+strconv.Itoa(memfd)+","+strconv.Itoa(self))
	argv := append([]string{plan.executable}, os.Args[1:]...)
	logger.Info("executing the new daemon image", "executable", plan.executable, "panes", len(plan.panes), "state_bytes", len(data))
	err = syscall.Exec(plan.executable, argv, env)
	logger.Error("restart: exec the new binary", "err", err)
	rollback(self, os.Args, env, fmt.Sprintf("exec %s: %v", plan.executable, err))
	return fmt.Errorf("restart: neither %s nor this binary could be executed; the panes are lost", plan.executable)
}

// inheritable clears FD_CLOEXEC on f's descriptor and returns it.
func inheritable(f *os.File) int {
	raw, err := f.SyscallConn()
	fd := -1
	if err == nil {
		raw.Control(func(u uintptr) {
			if _, err := unix.FcntlInt(u, unix.F_SETFD, 0); err == nil {
				fd = int(u)
			}
		})
	}
	return fd
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return err
		}
		b = b[n:]
	}
	_, err := unix.Seek(fd, 0, io.SeekStart)
	return err
}

func withoutHandoffEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if strings.HasPrefix(kv, envHandoff+"=") || strings.HasPrefix(kv, envRefused+"=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// rollback executes the old binary (its descriptor self) with the state,
// telling it why the new image refused; it returns only when that exec
// failed.
func rollback(self int, argv, env []string, why string) {
	why = strings.ReplaceAll(why, "\n", " ")
	env = append(slices0(env), envRefused+"="+why)
	syscall.Exec("/proc/self/fd/"+strconv.Itoa(self), argv, env)
}

func slices0(s []string) []string { return append([]string(nil), s...) }

// handoff is the state an image started by a restart took over.
type handoff struct {
	state handoffState
	// refused is set in an old image taking its panes back.
	refused string
	self    int
	argv    []string
	env     []string
	taken   time.Time
}

// takeHandoff reads the state of a restart into this image (nil when this
// image was not started by one). A state it cannot use sends the panes
// back to the old image, which reports why; only that image, failing too,
// returns an error.
func takeHandoff(logger *slog.Logger) (*handoff, error) {
	v, ok := os.LookupEnv(envHandoff)
	if !ok {
		return nil, nil
	}
	refused := os.Getenv(envRefused)
	env := withoutHandoffEnv(os.Environ())
	env = append(env, envHandoff+"="+v)
	os.Unsetenv(envHandoff)
	os.Unsetenv(envRefused)
	h := &handoff{refused: refused, self: -1, argv: os.Args, env: env, taken: time.Now()}
	stateFD, self, err := parseHandoffEnv(v)
	if err == nil {
		h.self = self
		unix.CloseOnExec(self)
		h.state, err = readHandoffState(stateFD)
	}
	if err != nil {
		logger.Error("cannot adopt the panes of the restart", "err", err, "rolling_back", refused == "" && h.self >= 0)
		return nil, h.refuse(err)
	}
	return h, nil
}

func parseHandoffEnv(v string) (stateFD, self int, err error) {
	a, b, ok := strings.Cut(v, ",")
	if !ok {
		return -1, -1, fmt.Errorf("%s=%q: want STATE_FD,EXE_FD", envHandoff, v)
	}
	if stateFD, err = strconv.Atoi(a); err != nil || stateFD < 3 {
		return -1, -1, fmt.Errorf("%s=%q: bad state descriptor", envHandoff, v)
	}
	if self, err = strconv.Atoi(b); err != nil || self < 3 {
		return -1, -1, fmt.Errorf("%s=%q: bad binary descriptor", envHandoff, v)
	}
	return stateFD, self, nil
}

// readHandoffState reads and checks the state; it leaves the descriptor
// open and unmoved, for a rollback to read again.
func readHandoffState(fd int) (handoffState, error) {
	var st handoffState
	var fs unix.Stat_t
	if err := unix.Fstat(fd, &fs); err != nil {
		return st, fmt.Errorf("the handoff state (descriptor %d): %w", fd, err)
	}
	data := make([]byte, fs.Size)
	for off := 0; off < len(data); {
		n, err := unix.Pread(fd, data[off:], int64(off))
		if err != nil && !errors.Is(err, unix.EINTR) {
			return st, fmt.Errorf("read the handoff state: %w", err)
		}
		if n == 0 && err == nil {
			return st, errors.New("read the handoff state: it ends early")
		}
		off += n
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("the handoff state is not readable: %w", err)
	}
	if err := CanAdopt(st.Format); err != nil {
		return st, err
	}
	for _, fd := range []int{st.LockFD, st.ControlFD, st.EventsFD} {
		var s unix.Stat_t
		if fd < 3 || unix.Fstat(fd, &s) != nil {
			return st, fmt.Errorf("the handoff state names descriptor %d, which this image does not have", fd)
		}
	}
	if !isSocket(st.ControlFD) || !isSocket(st.EventsFD) {
		return st, errors.New("the handoff state's listening sockets are not sockets")
	}
	seen := map[string]bool{}
	for _, p := range st.Panes {
		if p.SessionID == "" || p.SurfaceID == "" || p.Capability == "" || seen[p.SurfaceID] {
			return st, errors.New("the handoff state has a pane without ids or capability, or one twice")
		}
		seen[p.SurfaceID] = true
		if _, err := unix.IoctlGetInt(p.Pane.FD, unix.TIOCGPTN); err != nil {
			return st, fmt.Errorf("pane %s: descriptor %d is not its terminal: %v", p.SessionID, p.Pane.FD, err)
		}
	}
	return st, nil
}

func isSocket(fd int) bool {
	var s unix.Stat_t
	return unix.Fstat(fd, &s) == nil && s.Mode&unix.S_IFMT == unix.S_IFSOCK
}

// refuse hands the panes back to the old image, saying why; it returns
// err when this image is that old image already (or h is nil: no
// restart), or the rollback could not be executed.
func (h *handoff) refuse(err error) error {
	if h == nil || h.refused != "" || h.self < 0 {
		return err
	}
	rollback(h.self, h.argv, h.env, err.Error())
	return fmt.Errorf("%w (and the previous binary could not take its panes back)", err)
}

// surfaces is the set of surfaces handed over, for the event engine.
func (h *handoff) surfaces() map[string]bool {
	if h == nil {
		return nil
	}
	m := map[string]bool{}
	for _, p := range h.state.Panes {
		m[p.SurfaceID] = true
	}
	return m
}

func (h *handoff) surfaceIDs() []string {
	if h == nil {
		return nil
	}
	ids := make([]string, 0, len(h.state.Panes))
	for _, p := range h.state.Panes {
		ids = append(ids, p.SurfaceID)
	}
	return ids
}

// lock is the daemon lock the old image held; its flock was never
// released.
func (h *handoff) lock() *lockFile {
	unix.CloseOnExec(h.state.LockFD)
	l := &lockFile{f: os.NewFile(uintptr(h.state.LockFD), "daemon.lock")}
	l.setPhase(paths.PhaseStarting)
	return l
}

// listeners are the sockets the old image listened on.
func (h *handoff) listeners() (control, evs *net.UnixListener, err error) {
	take := func(fd int, name string) (*net.UnixListener, error) {
		unix.CloseOnExec(fd)
		f := os.NewFile(uintptr(fd), name)
		defer f.Close()
		ln, err := net.FileListener(f)
		if err != nil {
			return nil, fmt.Errorf("adopt %s: %w", name, err)
		}
		ul, ok := ln.(*net.UnixListener)
		if !ok {
			ln.Close()
			return nil, fmt.Errorf("adopt %s: not a unix socket", name)
		}
		// It removes its path on a later stop, as a socket this image
		// created would.
		ul.SetUnlinkOnClose(true)
		return ul, nil
	}
	if control, err = take(h.state.ControlFD, "control.sock"); err != nil {
		return nil, nil, err
	}
	if evs, err = take(h.state.EventsFD, "events.sock"); err != nil {
		control.Close()
		return nil, nil, err
	}
	if h.self >= 0 {
		unix.Close(h.self)
	}
	return control, evs, nil
}

// adoptPanes gives each handed-over pane back to its session; the report
// says how the restart went.
func (d *Daemon) adoptPanes(h *handoff) {
	adopted := 0
	for _, hp := range h.state.Panes {
		if err := d.adoptPane(hp); err != nil {
			d.logger.Error("a handed-over pane could not be adopted; its program is hung up", "session_id", hp.SessionID, "pid", hp.Pane.PID, "err", err)
			syscall.Kill(-hp.Pane.PID, syscall.SIGHUP)
			unix.Close(hp.Pane.FD)
			continue
		}
		adopted++
	}
	d.handoff = &proto.HandoffReport{
		Token: h.state.Token, FromVersion: h.state.FromVersion, Panes: adopted, Refused: h.refused,
		Millis: time.Since(h.state.Requested).Milliseconds(),
	}
	d.logger.Info("adopted the panes of a restart", "panes", adopted, "from_version", h.state.FromVersion, "refused", h.refused, "ms", d.handoff.Millis)
}

func (d *Daemon) adoptPane(hp handoffPane) error {
	d.mu.Lock()
	s, ok := d.sessions[hp.SessionID]
	d.mu.Unlock()
	if !ok {
		return errors.New("its session is gone from the store")
	}
	if s.surface.ID != hp.SurfaceID || s.surface.State != "running" {
		return fmt.Errorf("its surface %s is not the session's running one", hp.SurfaceID)
	}
	surfaceID := hp.SurfaceID
	if err := d.events.AdoptSurface(events.Surface{
		ID: surfaceID, SessionID: s.rec.ID, Provider: s.rec.Provider, CWD: s.rec.CWD, LaunchArgs: s.surface.Argv,
	}, hp.Capability); err != nil {
		return err
	}
	registered := make(chan struct{})
	defer close(registered) // also when the adoption fails: nothing waits then
	cfg := d.paneConfig(s, surfaceID, registered)
	cfg.OnExit = func(code int) { d.onExit(s, surfaceID, code) }
	p, err := pane.Adopt(cfg, hp.Pane)
	if err != nil {
		d.events.CloseSurface(surfaceID, nil)
		return err
	}
	d.events.SurfaceStarted(surfaceID, p.PID())
	d.native.SurfaceStarted(native.Surface{
		ID: surfaceID, SessionID: s.rec.ID, Provider: s.rec.Provider, PID: p.PID(), CWD: s.rec.CWD,
		ForegroundPGID: p.ForegroundPGID, HooksInjected: hp.HooksInjected,
		NativeID: func() string {
			d.mu.Lock()
			defer d.mu.Unlock()
			return s.rec.NativeID
		},
	})
	d.mu.Lock()
	s.pane = p
	s.capability, s.hooksInjected = hp.Capability, hp.HooksInjected
	d.mu.Unlock()
	return nil
}
