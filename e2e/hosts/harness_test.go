package hosts_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/musterhq/muster/internal/testing/poll"
	"github.com/musterhq/muster/internal/testing/testbin"
)

var musterBin string

const sshd = "/usr/sbin/sshd"

func TestMain(m *testing.M) {
	if out := os.Getenv(hostCallHelper); out != "" {
		hostCallFromPane(out)
		os.Exit(0)
	}
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e/hosts starts sshd, creates a Unix user and runs daemons: skipped under -short")
		os.Exit(0)
	}
	if os.Getuid() != 0 {
		fmt.Println("e2e/hosts creates a Unix user for the remote side: needs root; skipped")
		os.Exit(0)
	}
	if _, err := os.Stat(sshd); err != nil {
		// As .ci/run does: the tests need a real OpenSSH server.
		install := exec.Command("sh", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server")
		if out, err := install.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "install openssh-server: %v\n%s", err, out)
			os.Exit(1)
		}
	}
	bin, err := testbin.BuildMuster()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	musterBin = bin
	os.Exit(m.Run())
}

// server is one sshd and the Unix user it lets in.
type server struct {
	t       *testing.T
	dir     string
	port    int
	user    string
	uid     int
	home    string
	cmd     *exec.Cmd
	hostPub string
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newServer creates a Unix user and an sshd that lets the key dir/id in
// as that user.
func newServer(t *testing.T) *server {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "mh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// The user reads authorized_keys from here under its own uid.
	os.Chmod(dir, 0o755)
	s := &server{t: t, dir: dir}
	b := make([]byte, 4)
	rand.Read(b)
	s.user = "mh" + hex.EncodeToString(b)
	run(t, "useradd", "-m", "-s", "/bin/sh", "-p", "*", s.user)
	u, err := user.Lookup(s.user)
	if err != nil {
		t.Fatal(err)
	}
	s.uid, _ = strconv.Atoi(u.Uid)
	s.home = u.HomeDir
	t.Cleanup(s.removeUser)
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "hostkey"))
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "id"))
	pub, _ := os.ReadFile(filepath.Join(dir, "id.pub"))
	os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o644)
	hostPub, _ := os.ReadFile(filepath.Join(dir, "hostkey.pub"))
	s.hostPub = strings.TrimSpace(string(hostPub))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s/hostkey
AuthorizedKeysFile %s/authorized_keys
PidFile %s/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
AllowUsers %s
PrintMotd no
`, s.port, dir, dir, dir, s.user)
	os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(cfg), 0o644)
	os.MkdirAll("/run/sshd", 0o755)
	s.start()
	return s
}

// start runs sshd in a process group of its own, so that stop ends the
// connections' processes too, as a machine going away does.
func (s *server) start() {
	s.t.Helper()
	log, _ := os.OpenFile(filepath.Join(s.dir, "sshd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	defer log.Close()
	s.cmd = exec.Command(sshd, "-D", "-e", "-f", filepath.Join(s.dir, "sshd_config"))
	s.cmd.Stdout, s.cmd.Stderr = log, log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(s.stop)
	if !poll.Until(10*time.Second, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.port))
		if err == nil {
			c.Close()
		}
		return err == nil
	}) {
		b, _ := os.ReadFile(filepath.Join(s.dir, "sshd.log"))
		s.t.Fatalf("sshd never listened on %d:\n%s", s.port, b)
	}
}

// stop ends sshd and every connection it serves: the listener, and the
// per-connection processes, which run as root or as the test's user.
func (s *server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	s.cmd.Wait()
	s.cmd = nil
	s.killUserProcesses(func(p int) bool { return strings.HasPrefix(comm(p), "sshd") })
}

func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// killUserProcesses kills the processes of the test's user that match:
// they exist only because this test made them (the user is its own).
func (s *server) killUserProcesses(match func(pid int) bool) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.Stat(filepath.Join("/proc", e.Name()))
		if err != nil {
			continue
		}
		if int(st.Sys().(*syscall.Stat_t).Uid) == s.uid && match(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func (s *server) removeUser() {
	s.killUserProcesses(func(int) bool { return true })
	poll.Until(5*time.Second, func() bool {
		return exec.Command("userdel", "-r", s.user).Run() == nil
	})
}

// env is one local Muster home whose ssh config names the server as
// alias "h1" (its host key known) and "fresh" (its host key unknown).
type env struct {
	t         *testing.T
	home      string
	vars      []string
	srv       *server
	sshConfig string
	// alias is srv's name in sshConfig, the host remote runs on.
	alias string
}

// sshHost is srv's block in the ssh config, under alias, its host keys
// read from known.
func sshHost(alias string, srv *server, known string) string {
	return fmt.Sprintf("Host %s\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s/id\n  IdentitiesOnly yes\n  GlobalKnownHostsFile /dev/null\n  UserKnownHostsFile %s\n", alias, srv.port, srv.user, srv.dir, known)
}

func knownHost(srv *server) string {
	return fmt.Sprintf("[127.0.0.1]:%d %s\n", srv.port, srv.hostPub)
}

func newEnv(t *testing.T, srv *server) *env {
	t.Helper()
	home, err := os.MkdirTemp("/tmp", "mt")
	if err != nil {
		t.Fatal(err)
	}
	userHome := t.TempDir()
	e := &env{t: t, home: home, srv: srv, alias: "h1"}
	e.vars = append(os.Environ(),
		"MUSTER_HOME="+home,
		"HOME="+userHome,
		"XDG_RUNTIME_DIR=",
		"SHELL=/bin/sh",
	)
	known := filepath.Join(home, "known_hosts")
	os.WriteFile(known, []byte(knownHost(srv)), 0o600)
	e.sshConfig = filepath.Join(home, "ssh_config")
	os.WriteFile(e.sshConfig, []byte(sshHost("h1", srv, known)+"\n"+sshHost("fresh", srv, filepath.Join(home, "known_hosts_empty"))), 0o600)
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(fmt.Sprintf("# the test's\n[ssh]\nconfig = %q\n", e.sshConfig)), 0o600)
	t.Cleanup(func() {
		e.run("daemon", "stop", "--force")
		if srv.cmd != nil {
			e.remote("daemon", "stop", "--force")
		}
		// The hosts' master connections.
		e.run("host", "rm", "h1")
		os.RemoveAll(home)
	})
	return e
}

// addHost names a second server in e's ssh config as alias, its host
// key known, and returns the env that shares e's Muster home but whose
// host helpers (remote, hook, spool, hookLoop, remoteWaits) are srv's.
func (e *env) addHost(alias string, srv *server) *env {
	e.t.Helper()
	appendTo := func(path, text string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			e.t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(text); err != nil {
			e.t.Fatal(err)
		}
	}
	known := filepath.Join(e.home, "known_hosts")
	appendTo(known, knownHost(srv))
	appendTo(e.sshConfig, "\n"+sshHost(alias, srv, known))
	other := *e
	other.srv, other.alias = srv, alias
	e.t.Cleanup(func() {
		if srv.cmd != nil {
			other.remote("daemon", "stop", "--force")
		}
		e.run("host", "rm", alias)
	})
	return &other
}

type result struct {
	stdout, stderr string
	code           int
}

func (e *env) run(args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, musterBin, args...)
	cmd.Env = e.vars
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			e.t.Fatalf("run muster %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

func (e *env) must(args ...string) string {
	e.t.Helper()
	r := e.run(args...)
	if r.code != 0 {
		e.t.Fatalf("muster %v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// remote runs the host's installed muster as the host's user, straight
// through ssh, bypassing what is under test.
func (e *env) remote(args ...string) string {
	path := e.srv.home + "/.local/share/muster/bin/" + version(e) + "/muster"
	cmd := exec.Command("ssh", append([]string{"-F", e.sshConfig, "-o", "BatchMode=yes", e.alias, path}, args...)...)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

func version(e *env) string {
	out, _ := exec.Command(musterBin, "--version").Output()
	f := strings.Fields(string(out))
	return f[len(f)-1]
}

// hostSession is a row of `muster ls --json`.
type hostSession struct {
	Host  string `json:"host"`
	Name  string `json:"name"`
	State string `json:"state"`
}

func (e *env) ls(args ...string) []hostSession {
	e.t.Helper()
	var rows []hostSession
	out := e.must(append([]string{"ls", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		e.t.Fatalf("ls --json: %v\n%s", err, out)
	}
	return rows
}

type hostStatus struct {
	Name, Dest, State, Version, Reason, Command string
	Sessions                                    int
	LastSeen                                    string `json:"last_seen"`
}

func (e *env) hosts() map[string]hostStatus {
	e.t.Helper()
	var list []hostStatus
	out := e.must("host", "ls", "--json")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		e.t.Fatalf("host ls --json: %v\n%s", err, out)
	}
	m := map[string]hostStatus{}
	for _, h := range list {
		m[h.Name] = h
	}
	return m
}

// term is muster running in a PTY the test owns, as in a user's terminal,
// with everything it drew kept for the test to read.
type term struct {
	cmd  *exec.Cmd
	ptmx *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	// exited is closed once the program has exited and been waited for.
	exited chan struct{}
}

// startTerm runs muster with args in a cols×rows terminal; the test's
// cleanup kills it if it is still running.
func startTerm(t *testing.T, env []string, cols, rows int, args ...string) *term {
	t.Helper()
	cmd := exec.Command(musterBin, args...)
	cmd.Env = env
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{cmd: cmd, ptmx: ptmx}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	go func() {
		buf := make([]byte, 8192)
		for {
			n, err := ptmx.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited; ptmx.Close() })
	tm.exited = exited
	return tm
}

// Type writes s as keys typed.
func (tm *term) Type(s string) { tm.ptmx.Write([]byte(s)) }

// Mark is where the output ends now, for Since.
func (tm *term) Mark() int { tm.mu.Lock(); defer tm.mu.Unlock(); return tm.out.Len() }

// Since is what was drawn after mark at, escape sequences and all.
func (tm *term) Since(at int) string { tm.mu.Lock(); defer tm.mu.Unlock(); return tm.out.String()[at:] }

// Running reports whether the program has not exited.
func (tm *term) Running() bool {
	select {
	case <-tm.exited:
		return false
	default:
		return true
	}
}

// Detach types the detach key and fails the test unless muster exits 0
// within 30 s.
func (tm *term) Detach(t *testing.T) {
	t.Helper()
	tm.Type("\x1c")
	select {
	case <-tm.exited:
		if !tm.cmd.ProcessState.Success() {
			t.Fatalf("muster %v exited with %v after the detach key", tm.cmd.Args[1:], tm.cmd.ProcessState)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("muster %v did not exit after the detach key", tm.cmd.Args[1:])
	}
}
