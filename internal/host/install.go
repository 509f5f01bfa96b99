package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/musterhq/muster/internal/proto"
)

// Installed is the muster a host runs, as Install found or put it.
type Installed struct {
	Path string
	// Copied lists the binaries Install copied (their SHA-256 checked on
	// the host); empty when the same ones were there already.
	Copied []string
}

// probeScript prints the host's `uname -sm`, the versioned directory for
// $1 under the user's data dir, the SHA-256 (or -) of the muster and
// muster-hook in it, and the version of a muster on PATH, if any.
const probeScript = `uname -sm
d="${XDG_DATA_HOME:-$HOME/.local/share}/muster/bin/$1"
printf '%s\n' "$d"
for f in muster muster-hook; do
  if [ -f "$d/$f" ]; then (sha256sum "$d/$f" 2>/dev/null || shasum -a 256 "$d/$f") | cut -d' ' -f1; else echo -; fi
done
p=$(command -v muster 2>/dev/null) && printf '%s\n' "$p" && "$p" --version 2>/dev/null | head -n 1
exit 0`

// copyScript writes stdin to $1/$2 through a temporary file that becomes
// $2 only when its SHA-256 is $3: a cut connection leaves nothing
// half-written where muster looks.
const copyScript = `set -e
mkdir -p "$1"
t="$1/.$2.$$"
cat > "$t"
chmod 755 "$t"
s=$( (sha256sum "$t" 2>/dev/null || shasum -a 256 "$t") | cut -d' ' -f1)
if [ "$s" = "$3" ]; then mv -f "$t" "$1/$2"; echo ok; else rm -f "$t"; echo "$s"; exit 3; fi`

// Install finds a muster of version on the host or puts exe (this
// binary, with the muster-hook beside it) there.
func Install(ctx context.Context, l Link, version, exe string) (Installed, error) {
	dirVersion := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '+' {
			return r
		}
		return '_'
	}, version)
	out, err := l.Run(ctx, nil, "sh", "-c", probeScript, "sh", dirVersion)
	if err != nil {
		return Installed{}, err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 4 {
		return Installed{}, fmt.Errorf("host %s: unexpected answer to the probe: %q", l.Host.Name, out)
	}
	uname, dir, remoteSums := lines[0], lines[1], lines[2:4]
	if !filepath.IsAbs(dir) {
		return Installed{}, fmt.Errorf("host %s: its data directory %q is not absolute (is $HOME set there?)", l.Host.Name, dir)
	}
	path := filepath.Join(dir, "muster")
	if !sameMachine(uname) {
		if remoteSums[0] != "-" && remoteVersion(ctx, l, path) == version {
			return Installed{Path: path}, nil
		}
		if len(lines) >= 6 && versionOf(lines[5]) == version {
			return Installed{Path: lines[4]}, nil
		}
		return Installed{}, fmt.Errorf("host %s runs %s and this muster is built for %s/%s: build muster %s for it (GOOS/GOARCH) and put it at %s (muster-hook beside it), then run `muster host add` again",
			l.Host.Name, uname, runtime.GOOS, runtime.GOARCH, version, path)
	}
	var inst Installed
	for i, name := range []string{"muster", "muster-hook"} {
		local := filepath.Join(filepath.Dir(exe), name)
		sum, err := fileSHA256(local)
		if os.IsNotExist(err) && name != "muster" {
			continue // a muster without its hook helper: hooks stay local to what the host has
		}
		if err != nil {
			return Installed{}, err
		}
		if remoteSums[i] == sum {
			continue
		}
		if err := copyTo(ctx, l, local, dir, name, sum); err != nil {
			return Installed{}, err
		}
		inst.Copied = append(inst.Copied, name)
	}
	inst.Path = path
	if v := remoteVersion(ctx, l, path); v != version {
		return Installed{}, fmt.Errorf("host %s: %s says version %q, want %q", l.Host.Name, path, v, version)
	}
	return inst, nil
}

func copyTo(ctx context.Context, l Link, local, dir, name, sum string) error {
	f, err := os.Open(local)
	if err != nil {
		return err
	}
	defer f.Close()
	out, err := l.Run(ctx, f, "sh", "-c", copyScript, "sh", dir, name, sum)
	got := strings.TrimSpace(string(out))
	if re, ok := err.(*RemoteExit); ok && re.Code == 3 {
		return fmt.Errorf("host %s: the copy of %s has SHA-256 %s, want %s; nothing was installed", l.Host.Name, name, got, sum)
	}
	if err != nil {
		return fmt.Errorf("host %s: copy %s to %s: %w", l.Host.Name, name, dir, err)
	}
	if got != "ok" {
		return fmt.Errorf("host %s: copy %s: unexpected answer %q", l.Host.Name, name, got)
	}
	return nil
}

func remoteVersion(ctx context.Context, l Link, path string) string {
	out, err := l.Run(ctx, nil, path, "--version")
	if err != nil {
		return ""
	}
	return versionOf(string(out))
}

// versionOf reads cobra's "muster version X".
func versionOf(line string) string {
	f := strings.Fields(line)
	if len(f) == 3 && f[0] == "muster" && f[1] == "version" {
		return f[2]
	}
	return ""
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sameMachine reports whether `uname -sm` names the OS and architecture
// this binary was built for.
func sameMachine(uname string) bool {
	f := strings.Fields(uname)
	if len(f) != 2 {
		return false
	}
	osName := map[string]string{"linux": "Linux", "darwin": "Darwin", "freebsd": "FreeBSD", "openbsd": "OpenBSD", "netbsd": "NetBSD"}[runtime.GOOS]
	arches := map[string][]string{
		"amd64": {"x86_64", "amd64"},
		"arm64": {"aarch64", "arm64"},
		"386":   {"i386", "i486", "i586", "i686"},
		"arm":   {"armv6l", "armv7l"},
	}[runtime.GOARCH]
	if f[0] != osName {
		return false
	}
	for _, a := range arches {
		if f[1] == a {
			return true
		}
	}
	return false
}

// DaemonStatus is the host's daemon as its muster reports it (a frozen
// op, answered by a daemon of any version); Running is false when none
// runs there.
func DaemonStatus(ctx context.Context, l Link) (st proto.DaemonStatus, running bool, err error) {
	st, err = frozenStatus(ctx, l)
	if re, ok := errors.AsType[*RemoteExit](err); ok && re.Code == 4 && strings.Contains(re.Stderr, "not running") {
		return st, false, nil
	}
	return st, err == nil, err
}

// RestartDaemon restarts the host's daemon into the muster at path with
// the live handoff (`muster daemon restart --binary`): the new image
// adopts every pane, so the agents there keep running with their pids.
// It returns what the host's muster said of it.
func RestartDaemon(ctx context.Context, l Link, path string) (string, error) {
	cmd := l.Command(ctx, false, path, "daemon", "restart", "--binary", path)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &errb, &errb
	err := cmd.Run()
	said := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(errb.String()), "muster: "))
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.ExitCode() != 255 {
		return "", fmt.Errorf("host %s: the daemon restart failed: %s", l.Host.Name, said)
	}
	if err != nil {
		return "", l.classify(ctx, errb.String(), err)
	}
	return said, nil
}
