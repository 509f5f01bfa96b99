package native

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"strings"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
)

// procInfo is what the estimator reads of a foreground process group's
// leader.
type procInfo struct {
	// Comm is the kernel's short name, the base name the program was
	// exec'd as (macOS; on Linux only when the command line is empty).
	Comm string
	Argv []string // the command line
}

// executables maps executable names to providers, from the launch table.
func executables() map[string]string {
	m := map[string]string{}
	for _, l := range all.Capable[provider.Launcher]() {
		for _, exe := range l.Launch().Executables {
			m[exe] = l.Name()
		}
	}
	return m
}

// interpreters run a provider's script named by their first non-flag
// argument: npm installs Codex and Gemini CLI as `node …/bin/codex.js`, and
// the kernel runs a #! script as `/bin/sh …/bin/claude`.
var interpreters = map[string]bool{
	"node": true, "nodejs": true, "bun": true, "deno": true,
	"sh": true, "bash": true, "dash": true, "zsh": true, "python": true, "python3": true,
}

// matchProvider returns the provider whose executable the process runs, or
// "": the base name of argv[0], of the script an interpreter runs, or of
// comm, with an .exe, .js, .mjs or .cjs suffix removed.
func matchProvider(exes map[string]string, info procInfo) string {
	if len(info.Argv) > 0 {
		name := exeName(info.Argv[0])
		if p, ok := exes[name]; ok {
			return p
		}
		if interpreters[name] {
			for _, arg := range info.Argv[1:] {
				if strings.HasPrefix(arg, "-") {
					continue
				}
				if p, ok := exes[exeName(arg)]; ok {
					return p
				}
				break
			}
		}
	}
	if p, ok := exes[exeName(info.Comm)]; ok {
		return p
	}
	return ""
}

func exeName(path string) string {
	name := filepath.Base(strings.TrimSpace(path))
	for _, ext := range []string{".exe", ".js", ".mjs", ".cjs"} {
		name = strings.TrimSuffix(name, ext)
	}
	return name
}

// maxArgs bounds the arguments kept of a command line.
const maxArgs = 64

// parseCmdline splits a Linux /proc/PID/cmdline: arguments each ended by
// NUL. A process that rewrote its title may use spaces instead; only the
// NUL form is split.
func parseCmdline(raw []byte) []string {
	raw = bytes.TrimRight(raw, "\x00")
	if len(raw) == 0 {
		return nil
	}
	var argv []string
	for f := range bytes.SplitSeq(raw, []byte{0}) {
		if len(argv) == maxArgs {
			break
		}
		argv = append(argv, string(f))
	}
	return argv
}

// parseProcArgs2 reads the macOS kern.procargs2 buffer: a native-endian
// int32 argc, the executable path, NUL padding, then argc NUL-terminated
// arguments (the environment follows and is not read).
func parseProcArgs2(raw []byte) []string {
	if len(raw) < 4 {
		return nil
	}
	argc := int(int32(binary.NativeEndian.Uint32(raw)))
	if argc <= 0 {
		return nil
	}
	rest := raw[4:]
	end := bytes.IndexByte(rest, 0)
	if end < 0 {
		return nil
	}
	rest = rest[end:]
	for len(rest) > 0 && rest[0] == 0 {
		rest = rest[1:]
	}
	var argv []string
	for len(argv) < argc && len(argv) < maxArgs && len(rest) > 0 {
		end := bytes.IndexByte(rest, 0)
		if end < 0 {
			argv = append(argv, string(rest))
			break
		}
		argv = append(argv, string(rest[:end]))
		rest = rest[end+1:]
	}
	return argv
}
