package native

import (
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMatchProvider(t *testing.T) {
	tests := []struct {
		name string
		info procInfo
		want string
	}{
		{"claude", procInfo{Comm: "claude", Argv: []string{"claude", "--resume", "x"}}, "claude"},
		{"claude native binary", procInfo{Comm: "claude.exe", Argv: []string{"/usr/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe"}}, "claude"},
		{"codex npm shim", procInfo{Comm: "node", Argv: []string{"node", "/usr/lib/node_modules/@openai/codex/bin/codex.js", "--no-daemon"}}, "codex"},
		{"gemini relaunched", procInfo{Comm: "node", Argv: []string{"/usr/bin/node", "--max-old-space-size=4096", "--no-warnings", "/usr/bin/gemini"}}, "gemini"},
		{"cursor", procInfo{Comm: "cursor-agent", Argv: []string{"cursor-agent"}}, "cursor"},
		{"opencode under bun", procInfo{Comm: "bun", Argv: []string{"bun", "run", "opencode"}}, ""},
		{"opencode", procInfo{Comm: ".opencode", Argv: []string{"opencode"}}, "opencode"},
		{"shebang script", procInfo{Comm: "claude", Argv: []string{"/bin/sh", "/home/u/bin/claude"}}, "claude"},
		{"login shell", procInfo{Comm: "bash", Argv: []string{"-bash"}}, ""},
		{"sleep", procInfo{Comm: "sleep", Argv: []string{"sleep", "5"}}, ""},
		{"node server", procInfo{Comm: "node", Argv: []string{"node", "server.js"}}, ""},
		{"an editor on a file named claude", procInfo{Comm: "vim", Argv: []string{"vim", "claude"}}, ""},
		{"nothing known", procInfo{}, ""},
	}
	exes := executables()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := matchProvider(exes, tt.info); got != tt.want {
				t.Errorf("matchProvider(%+v) = %q, want %q", tt.info, got, tt.want)
			}
		})
	}
}

func TestParseCmdline(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want []string
	}{
		{"args", "node\x00/usr/bin/gemini\x00--x\x00", []string{"node", "/usr/bin/gemini", "--x"}},
		{"empty arg kept", "a\x00\x00b\x00", []string{"a", "", "b"}},
		{"no trailing nul", "a\x00b", []string{"a", "b"}},
		{"rewritten title", "claude: busy", []string{"claude: busy"}},
		{"kernel thread", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseCmdline([]byte(tt.raw))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func procArgs(argc int32, rest string) []byte {
	b := binary.NativeEndian.AppendUint32(nil, uint32(argc))
	return append(b, rest...)
}

func TestParseProcArgs2(t *testing.T) {
	tests := []struct {
		name string
		raw  []byte
		want []string
	}{
		{"args and env", procArgs(2, "/usr/local/bin/claude\x00\x00\x00\x00claude\x00--resume\x00HOME=/x\x00"), []string{"claude", "--resume"}},
		{"argc beyond the buffer", procArgs(5, "/bin/x\x00\x00x\x00y"), []string{"x", "y"}},
		{"zero argc", procArgs(0, "/bin/x\x00x\x00"), nil},
		{"negative argc", procArgs(-1, "/bin/x\x00x\x00"), nil},
		{"no path end", procArgs(1, "/bin/x"), nil},
		{"short", []byte{1, 0}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseProcArgs2(tt.raw)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
