package hookinstall

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/musterhq/muster/internal/launcher"
	"github.com/musterhq/muster/internal/paths"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
	"github.com/musterhq/muster/internal/transcript"
)

// Providers returns the providers with a hook installer, in display order.
func Providers() []string {
	var out []string
	for _, h := range all.Capable[provider.HookInstaller]() {
		out = append(out, h.Name())
	}
	return out
}

// spec returns provider's installer description.
func spec(name string) (provider.HookInstall, error) {
	h, ok := all.As[provider.HookInstaller](name)
	if !ok {
		return provider.HookInstall{}, unknownProvider(name)
	}
	return h.HookInstall(), nil
}

// MarkerVersion is the version of the hook entries this package writes.
// Bump it whenever the generated entries change, so that status reports
// older installations as outdated.
const MarkerVersion = 1

// Marker is the shell comment that ends every command we install; its
// number is MarkerVersion.
const Marker = "# muster-hooks:v1"

var markerRE = regexp.MustCompile(`#\s*muster-hooks:v([0-9]+)\s*$`)

// markerVersion returns the marker version at the end of command, or 0.
func markerVersion(command string) int {
	m := markerRE.FindStringSubmatch(command)
	if m == nil {
		return 0
	}
	v, err := strconv.Atoi(m[1])
	if err != nil || v == 0 {
		return -1 // ours, but unreadable: treat as outdated
	}
	return v
}

// Env is where the installer looks for provider homes. Tests set Home and
// Getenv to temporary values so that the real home is never touched.
type Env = transcript.Env

// ConfigPath returns the file the installer edits for provider, as the
// provider's HookInstall says (Claude Code's settings.json under
// $CLAUDE_CONFIG_DIR, Codex's hooks.json under $CODEX_HOME, …). A relative
// directory in the environment is refused rather than resolved against
// whatever the current directory happens to be.
func ConfigPath(env Env, provider string) (string, error) {
	sp, err := spec(provider)
	if err != nil {
		return "", err
	}
	return sp.Config(env)
}

// ErrUnknownProvider means the provider has no hook installer.
var ErrUnknownProvider = errors.New("no hook installer for this provider")

func unknownProvider(p string) error {
	return fmt.Errorf("%w: %q (known: %s)", ErrUnknownProvider, p, strings.Join(Providers(), ", "))
}

// checkMusterPath refuses a binary path that cannot be put into a hook
// command safely.
func checkMusterPath(p string) error {
	switch {
	case p == "":
		return errors.New("muster binary path is empty")
	case !filepath.IsAbs(p):
		return fmt.Errorf("muster binary path %q is not absolute", p)
	case strings.ContainsAny(p, "\x00\n\r"):
		return fmt.Errorf("muster binary path %q contains a control character", p)
	}
	return nil
}

// CaptureCommand is the shell command that reports the provider's native
// session id: "$PPID" is expanded by the `sh -c` that runs the hook, so it is
// the provider process itself.
func CaptureCommand(musterPath, provider string) string {
	return launcher.ShellQuote(musterPath) + " hook capture --provider " + provider + ` --process-id "$PPID" ` + Marker
}

// EventCommand is the shell command that forwards every lifecycle event:
// the muster-hook helper beside the muster binary when there is one (it
// starts several times faster, and agents run it on every hook), else
// `muster hook event`.
func EventCommand(musterPath, provider string) string {
	if helper := paths.HookHelper(musterPath); helper != "" {
		return launcher.ShellQuote(helper) + " event " + provider + " " + Marker
	}
	return launcher.ShellQuote(musterPath) + " hook event " + provider + " " + Marker
}

// jsonSpec is a provider whose hooks live in a JSON settings file.
type jsonSpec struct {
	provider string
	*provider.HookJSON
}

// jsonSpecFor returns the JSON description of a provider, or nil when its
// hooks are not kept in a JSON file.
func jsonSpecFor(sp provider.HookInstall, name string) *jsonSpec {
	if sp.JSON == nil {
		return nil
	}
	return &jsonSpec{provider: name, HookJSON: sp.JSON}
}

func commandsFor(musterPath, provider string, ev provider.HookEvent) []string {
	var cmds []string
	if ev.Capture {
		cmds = append(cmds, CaptureCommand(musterPath, provider))
	}
	return append(cmds, EventCommand(musterPath, provider))
}

// hooksValue is the value of the "hooks" key we would install.
func (s *jsonSpec) hooksValue(musterPath string) object {
	var o object
	for _, ev := range s.Events {
		o = append(o, kv{Key: ev.Name, Value: s.Entries(ev, commandsFor(musterPath, s.provider, ev))})
	}
	return o
}

// SettingsJSON returns a compact settings document with Muster's hooks for
// provider, for a launch that passes settings on the command line
// (provider.Launch.HookArgs: `claude --settings '<json>'`), so that a
// session the daemon starts reports even before `muster hooks setup`. The
// commands are byte-identical to the ones setup installs, so a CLI that
// merges hooks from all settings sources and runs identical commands once
// (Claude Code does) does not report twice. ok is false when the provider
// keeps no hooks in a JSON settings file.
func SettingsJSON(provider, musterPath string) (settings string, ok bool) {
	sp, err := spec(provider)
	if err != nil || sp.JSON == nil {
		return "", false
	}
	st := style{nl: "\n", unit: "", colon: ":"}
	return st.encode(object{{Key: "hooks", Value: jsonSpecFor(sp, provider).hooksValue(musterPath)}}, ""), true
}
