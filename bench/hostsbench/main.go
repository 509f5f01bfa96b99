// Command hostsbench measures muster on a host against plain ssh, on a
// loopback sshd it starts (its own host key, three Unix users it creates as
// hosts h1, h2, h3; run as root): keystroke-to-echo p50/p99 through
// `muster attach h1:x` vs `ssh -tt h1 tmux attach` to a tmux session on the
// host running the same program, cat (the issue's anchor), and vs `ssh -tt
// h1 cat` with no multiplexer at all (stricter, for information), warm `muster ls` across one and across three hosts vs a local
// `muster ls` with no hosts, output throughput through `muster attach` vs
// `ssh -tt h1 cat` of the same flood, and the reconnect of an attach whose
// connection is killed. bench/hosts.sh builds and runs it.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
)

var (
	musterBin = flag.String("muster", "muster", "the muster binary")
	keys      = flag.Int("keys", 300, "keystrokes per echo kind")
	lsRuns    = flag.Int("ls", 30, "muster ls runs per kind")
	drops     = flag.Int("drops", 10, "connections killed under an attach")
	floodMB   = flag.Int("flood", 32, "MB of output for the throughput runs")
	floods    = flag.Int("floods", 3, "throughput runs per kind")
)

func must(name string, args ...string) string {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		log.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func main() {
	flag.Parse()
	dir, _ := os.MkdirTemp("/tmp", "hb")
	os.Chmod(dir, 0o755)
	var users []string
	for range 3 {
		b := make([]byte, 4)
		rand.Read(b)
		users = append(users, "hb"+hex.EncodeToString(b))
		must("useradd", "-m", "-s", "/bin/sh", "-p", "*", users[len(users)-1])
	}
	var sshd *exec.Cmd
	var homes []string
	cleanup := func() {
		for _, h := range homes {
			c := exec.Command(*musterBin, "daemon", "stop", "--force")
			c.Env = append(os.Environ(), "MUSTER_HOME="+h)
			c.Run()
			for _, name := range []string{"h1", "h2", "h3"} {
				c = exec.Command(*musterBin, "host", "rm", name)
				c.Env = append(os.Environ(), "MUSTER_HOME="+h)
				c.Run()
			}
		}
		if sshd != nil {
			syscall.Kill(-sshd.Process.Pid, syscall.SIGKILL)
			sshd.Wait()
		}
		// The users exist for this run only: their processes (the hosts'
		// daemons and panes) are this run's.
		for _, user := range users {
			for range 50 {
				if exec.Command("userdel", "-r", user).Run() == nil {
					break
				}
				if out, _ := exec.Command("pgrep", "-u", user).Output(); len(out) > 0 {
					for _, p := range strings.Fields(string(out)) {
						exec.Command("kill", "-9", p).Run()
					}
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		os.RemoveAll(dir)
		for _, h := range homes {
			os.RemoveAll(h)
		}
	}
	defer cleanup()
	must("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir+"/hostkey")
	must("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", dir+"/id")
	pub, _ := os.ReadFile(dir + "/id.pub")
	os.WriteFile(dir+"/authorized_keys", pub, 0o644)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	os.WriteFile(dir+"/sshd_config", fmt.Appendf(nil, "Port %d\nListenAddress 127.0.0.1\nHostKey %s/hostkey\nAuthorizedKeysFile %s/authorized_keys\nPidFile %s/sshd.pid\nStrictModes no\nUsePAM no\nPasswordAuthentication no\nAllowUsers %s\n", port, dir, dir, dir, strings.Join(users, " ")), 0o644)
	os.MkdirAll("/run/sshd", 0o755)
	sshd = exec.Command("/usr/sbin/sshd", "-D", "-e", "-f", dir+"/sshd_config")
	sshd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sshd.Start(); err != nil {
		log.Fatal(err)
	}
	for range 100 {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	hostPub, _ := os.ReadFile(dir + "/hostkey.pub")
	os.WriteFile(dir+"/known_hosts", fmt.Appendf(nil, "[127.0.0.1]:%d %s", port, hostPub), 0o644)
	sshConfig := dir + "/ssh_config"
	var conf []byte
	for i, u := range users {
		conf = fmt.Appendf(conf, "Host h%d\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s/id\n  IdentitiesOnly yes\n  UserKnownHostsFile %s/known_hosts\n  GlobalKnownHostsFile /dev/null\n", i+1, port, u, dir, dir)
	}
	os.WriteFile(sshConfig, conf, 0o644)

	newHome := func(hosts int) []string {
		h, _ := os.MkdirTemp("/tmp", "hm")
		homes = append(homes, h)
		os.MkdirAll(h+"/config", 0o700)
		os.WriteFile(h+"/config/config.toml", fmt.Appendf(nil, "[ssh]\nconfig = %q\n", sshConfig), 0o600)
		env := append(os.Environ(), "MUSTER_HOME="+h, "XDG_RUNTIME_DIR=")
		for i := range hosts {
			name := fmt.Sprintf("h%d", i+1)
			run(env, "host", "add", name, name)
		}
		return env
	}
	remote := newHome(1)
	local := newHome(0)
	three := newHome(3)
	for i := range 3 {
		run(three, "new", "--host", fmt.Sprintf("h%d", i+1), "--name", "of3", "-d", "--cmd", "cat")
	}
	run(remote, "new", "--host", "h1", "--name", "x", "-d", "--cmd", "cat")
	run(local, "new", "--name", "x", "-d", "--cmd", "cat")

	// The anchor: tmux on the host running the same program, with
	// no status line (its clock would put letters on the screen that no
	// key typed) and no user config.
	must("ssh", "-F", sshConfig, "h1", "tmux -f /dev/null new-session -d -s S -x 200 -y 50 cat && tmux set -g status off")
	defer exec.Command("ssh", "-F", sshConfig, "h1", "tmux kill-server").Run()
	attach := exec.Command(*musterBin, "attach", "h1:x")
	attach.Env = remote
	tmuxAttach := exec.Command("ssh", "-F", sshConfig, "-tt", "h1", "tmux attach -t S")
	tmuxAttach.Env = append(os.Environ(), "TERM=xterm-256color")
	tmuxP50, tmuxP99 := echo(tmuxAttach, "\x1b[?1049h")
	plainP50, plainP99 := echo(exec.Command("ssh", "-F", sshConfig, "-tt", "h1", "cat"), "")
	musterP50, musterP99 := echo(attach, "\x1b[?1049h")
	ratio := func(a, b time.Duration) float64 { return float64(a) / float64(b) }
	fmt.Printf("echo p50: muster attach h1:x %v, ssh -tt h1 tmux attach %v (ratio %.2f), ssh -tt h1 cat %v (ratio %.2f)\n",
		musterP50, tmuxP50, ratio(musterP50, tmuxP50), plainP50, ratio(musterP50, plainP50))
	fmt.Printf("echo p99: muster attach h1:x %v, ssh -tt h1 tmux attach %v (ratio %.2f), ssh -tt h1 cat %v (ratio %.2f)\n",
		musterP99, tmuxP99, ratio(musterP99, tmuxP99), plainP99, ratio(musterP99, plainP99))

	lsHost := timeLs(remote)
	lsLocal := timeLs(local)
	lsThree := timeLs(three)
	fmt.Printf("muster ls p50 (warm): across 1 host %v, across 3 hosts %v, local only %v\n", lsHost, lsThree, lsLocal)

	// A command on one session of a host: through the local daemon's
	// relay, against the way it went before the relay (the host's muster
	// run over the same master connection) and a local capture.
	cfg, _ := os.ReadFile(homes[0] + "/config/config.toml")
	hostMuster := regexp.MustCompile(`muster = "([^"]+)"`).FindSubmatch(cfg)
	if hostMuster == nil {
		log.Fatalf("no muster path for h1 in config.toml:\n%s", cfg)
	}
	capHost := timeRun(remote, "capture", "h1:x")
	capLocal := timeRun(local, "capture", "x")
	capSSH := timeCmd(func() *exec.Cmd {
		return exec.Command("ssh", "-F", sshConfig, "-o", "ControlPath="+homes[0]+"/run/ssh/h1", "h1", string(hostMuster[1]), "capture", "--", "x")
	})
	fmt.Printf("muster capture p50 (warm): h1:x %v, the host's muster over the same ssh master %v (ratio %.2f), x on this machine %v\n",
		capHost, capSSH, ratio(capHost, capSSH), capLocal)

	// The flood: printable lines on the host, the same file for both.
	must("ssh", "-F", sshConfig, "h1", fmt.Sprintf("head -c %d /dev/urandom | base64 > flood.txt", *floodMB*3/4<<20))
	floodCmd := "echo READY; read x; cat flood.txt; echo FLOOD-END"
	run(remote, "new", "--host", "h1", "--name", "flood", "-d", "--cmd", floodCmd+"; exec sleep 100000")
	var viaMuster, viaSSH []time.Duration
	for i := range *floods {
		if i > 0 {
			run(remote, "kill", "h1:flood")
			run(remote, "new", "--host", "h1", "--name", "flood", "-d", "--cmd", floodCmd+"; exec sleep 100000")
		}
		a := exec.Command(*musterBin, "attach", "h1:flood")
		a.Env = remote
		viaMuster = append(viaMuster, flood(a))
		viaSSH = append(viaSSH, flood(exec.Command("ssh", "-F", sshConfig, "-tt", "h1", floodCmd)))
	}
	slices.Sort(viaMuster)
	slices.Sort(viaSSH)
	mb := float64(*floodMB)
	m, p := viaMuster[len(viaMuster)/2], viaSSH[len(viaSSH)/2]
	fmt.Printf("throughput (%d MB flood, median of %d): muster attach h1:flood %.0f MB/s (%v), ssh -tt h1 cat %.0f MB/s (%v), ratio %.2f\n",
		*floodMB, *floods, mb/m.Seconds(), m.Round(time.Millisecond), mb/p.Seconds(), p.Round(time.Millisecond), p.Seconds()/m.Seconds())

	run(remote, "new", "--host", "h1", "--name", "ticker", "-d", "--cmd", `i=0; while :; do i=$((i+1)); echo "tick-$i"; sleep 0.05; done`)
	p50, worst := reconnect(remote, sshConfig, homes[0]+"/run/ssh/h1")
	fmt.Printf("reconnect (ControlMaster killed under attach h1:ticker, %d times): live output again p50 %v, max %v\n", *drops, p50, worst)
}

// reconnect kills the host's master connection under an attach, drops
// times, and returns the p50 and max of the time until the attach shows
// the session's output again.
func reconnect(env []string, sshConfig, socket string) (time.Duration, time.Duration) {
	cmd := exec.Command(*musterBin, "attach", "h1:ticker")
	cmd.Env = env
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
	if err != nil {
		log.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait(); ptmx.Close() }()
	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	// live: a tick drawn after the last time the attach entered the pane.
	live := func(from int) bool {
		mu.Lock()
		defer mu.Unlock()
		s := screen.String()[from:]
		i := strings.LastIndex(s, "\x1b[?1049h")
		return i >= 0 && strings.Contains(s[i:], "tick-")
	}
	waitFor := func(from int) {
		deadline := time.Now().Add(30 * time.Second)
		for !live(from) {
			if time.Now().After(deadline) {
				log.Fatalf("attach h1:ticker never showed live output: %q", screen.String()[from:])
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor(0)
	var d []time.Duration
	for range *drops {
		out, _ := exec.Command("ssh", "-F", sshConfig, "-o", "ControlPath="+socket, "-O", "check", "h1").CombinedOutput()
		var pid int
		if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "Master running (pid=%d)", &pid); err != nil {
			log.Fatalf("no master for h1: %q", out)
		}
		mu.Lock()
		from := screen.Len()
		mu.Unlock()
		start := time.Now()
		syscall.Kill(pid, syscall.SIGKILL)
		waitFor(from)
		d = append(d, time.Since(start))
		time.Sleep(1500 * time.Millisecond) // a fresh drop, not a retry
	}
	slices.Sort(d)
	return d[len(d)/2], d[len(d)-1]
}

// flood runs cmd in a terminal, waits for it to say READY, presses
// enter and returns the time until the end of its flood is on the
// terminal: every byte read, for ssh; for an attach, the pane's output as
// the attach draws it.
func flood(cmd *exec.Cmd) time.Duration {
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 160, Rows: 50})
	if err != nil {
		log.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait(); ptmx.Close() }()
	buf := make([]byte, 256<<10)
	var tail []byte
	seen := func(want string) bool {
		n, err := ptmx.Read(buf)
		if err != nil {
			log.Fatalf("%v ended before %q", cmd.Args, want)
		}
		tail = append(tail, buf[:n]...)
		found := bytes.Contains(tail, []byte(want))
		if len(tail) > 64 {
			tail = append(tail[:0], tail[len(tail)-64:]...)
		}
		return found
	}
	for !seen("READY") {
	}
	time.Sleep(200 * time.Millisecond) // the read is waiting
	tail = tail[:0]
	start := time.Now()
	ptmx.Write([]byte("\r"))
	for !seen("FLOOD-END") {
	}
	return time.Since(start)
}

func run(env []string, args ...string) {
	c := exec.Command(*musterBin, args...)
	c.Env = env
	if out, err := c.CombinedOutput(); err != nil {
		log.Fatalf("muster %v: %v\n%s", args, err, out)
	}
}

// echo types keys one at a time into cmd's terminal, each after the last
// one's echo, and returns the p50 and p99 of key-to-echo.
func echo(cmd *exec.Cmd, ready string) (time.Duration, time.Duration) {
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 200, Rows: 50})
	if err != nil {
		log.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait(); ptmx.Close() }()
	got := make(chan []byte, 1024)
	go func() {
		for {
			buf := make([]byte, 4096)
			n, err := ptmx.Read(buf)
			if n > 0 {
				got <- buf[:n]
			}
			if err != nil {
				close(got)
				return
			}
		}
	}()
	// A key is echoed when it shows up as text: tmux and muster wrap it
	// in escape sequences whose letters (the h of ESC[?25h) would pass for
	// a key, and such a sequence can end in the next read.
	var seen bytes.Buffer
	var text textOnly
	read := func(b []byte) {
		if ready != "" {
			seen.Write(b)
			return
		}
		text.feed(&seen, b)
	}
	wait := func(want string) {
		deadline := time.After(20 * time.Second)
		for !strings.Contains(seen.String(), want) {
			select {
			case b, ok := <-got:
				if !ok {
					log.Fatalf("%v ended before %q: %q", cmd.Args, want, seen.String())
				}
				read(b)
			case <-deadline:
				log.Fatalf("%v never showed %q: %q", cmd.Args, want, seen.String())
			}
		}
		seen.Reset()
	}
	// Keys typed before the attach is in would reach the host's shell,
	// and an echo read in the same chunk as ready would be lost.
	if ready != "" {
		wait(ready)
		ready = ""
	}
	// quiet lets the screen settle and reads what it drew, as text, so
	// that the next key's echo is all the next wait sees.
	quiet := func() {
		time.Sleep(300 * time.Millisecond)
		for {
			select {
			case b := <-got:
				read(b)
			default:
				seen.Reset()
				return
			}
		}
	}
	ptmx.Write([]byte("warm\r"))
	wait("warm")
	quiet()
	var d []time.Duration
	for i := range *keys {
		k := string(rune('a' + i%26))
		start := time.Now()
		ptmx.Write([]byte(k))
		wait(k)
		d = append(d, time.Since(start))
		if i%60 == 59 {
			ptmx.Write([]byte("\r"))
			quiet()
		}
	}
	slices.Sort(d)
	return d[len(d)/2], d[len(d)*99/100]
}

func timeLs(env []string) time.Duration { return timeRun(env, "ls") }

// timeRun is the p50 of muster args over -ls runs, after one that warms
// the daemon, its relays and the master connections.
func timeRun(env []string, args ...string) time.Duration {
	return timeCmd(func() *exec.Cmd {
		c := exec.Command(*musterBin, args...)
		c.Env = env
		return c
	})
}

// timeCmd is the p50 of -ls runs of the command cmd makes, after one more.
func timeCmd(cmd func() *exec.Cmd) time.Duration {
	if out, err := cmd().CombinedOutput(); err != nil {
		log.Fatalf("%v: %v\n%s", cmd().Args, err, out)
	}
	var d []time.Duration
	for range *lsRuns {
		c := cmd()
		start := time.Now()
		if out, err := c.CombinedOutput(); err != nil {
			log.Fatalf("%v: %v\n%s", c.Args, err, out)
		}
		d = append(d, time.Since(start))
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// textOnly passes on the text of a terminal's output stream, leaving out
// control characters and escape sequences (CSI, OSC and the other strings,
// two- and three-byte escapes), across reads.
type textOnly struct{ state int }

const (
	ground = iota
	escape
	escapeIntermediate
	csi
	str    // OSC, DCS, SOS, PM, APC: up to BEL or ST
	strEsc // ESC inside a string: ST when a backslash follows
)

func (t *textOnly) feed(out *bytes.Buffer, b []byte) {
	for _, c := range b {
		switch t.state {
		case ground:
			switch {
			case c == 0x1b:
				t.state = escape
			case c >= 0x20 && c != 0x7f:
				out.WriteByte(c)
			}
		case escape:
			switch {
			case c == '[':
				t.state = csi
			case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
				t.state = str
			case c >= 0x20 && c <= 0x2f:
				t.state = escapeIntermediate
			default:
				t.state = ground
			}
		case escapeIntermediate:
			if c < 0x20 || c > 0x2f {
				t.state = ground
			}
		case csi:
			if c >= 0x40 && c <= 0x7e {
				t.state = ground
			}
		case str:
			switch c {
			case 0x07:
				t.state = ground
			case 0x1b:
				t.state = strEsc
			}
		case strEsc:
			if c == '\\' {
				t.state = ground
			} else {
				t.state = str
			}
		}
	}
}
