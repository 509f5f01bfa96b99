package opencode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/transcript"
)

var (
	_ provider.HookInstaller  = Provider{}
	_ provider.NativeCapturer = Provider{}
)

// CapturesNativePayload implements provider.NativeCapturer. The plugin
// sends the canonical event, but a session.created payload piped as it is
// carries the id as sessionId too.
func (Provider) CapturesNativePayload() {}

// HookCreateNote tells the user about OpenCode's first-plugin install.
const HookCreateNote = "OpenCode installs @opencode-ai/plugin with npm into its config directory the first time a plugin exists (network needed once)"

// HookInstall implements provider.HookInstaller. OpenCode has no command
// hooks: the plugin ($XDG_CONFIG_HOME/opencode/plugins/muster.js, else
// ~/.config/opencode/plugins/muster.js; a relative XDG_CONFIG_HOME is
// ignored, as the XDG spec says) runs inside OpenCode and spawns muster
// itself.
func (Provider) HookInstall() provider.HookInstall {
	return provider.HookInstall{
		Config: func(env transcript.Env) (string, error) {
			base := env.Get("XDG_CONFIG_HOME")
			if base == "" || !filepath.IsAbs(base) {
				home, err := env.CheckedDir("", "")
				if err != nil {
					return "", err
				}
				base = filepath.Join(home, ".config")
			}
			return filepath.Join(base, "opencode", "plugins", "muster.js"), nil
		},
		Plugin: &provider.HookPlugin{
			Source:      plugin,
			Binary:      binaryLine,
			CreateNotes: []string{HookCreateNote},
		},
	}
}

func binaryLine(musterPath string) string { return "const MUSTER = " + quote(musterPath) + ";" }

func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// plugin returns the plugin file that setup writes. OpenCode has no
// shell hooks: a plugin runs inside the OpenCode process, so the plugin
// itself spawns muster. On a root session's session.created it pipes the
// canonical capture event to `muster hook capture --provider opencode` with
// its own process.pid and process.ppid; every lifecycle bus event is piped,
// as the event object {id, type, properties} OpenCode passed to the plugin,
// to `muster hook event opencode`. Commands run one at a time in event order
// and never block or fail OpenCode. Outside a Muster pane the plugin does
// nothing.
func plugin(musterPath, marker string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s (written by `muster hooks setup opencode`; `muster hooks remove opencode` deletes it)\n", marker)
	b.WriteString(`// Forwards OpenCode lifecycle events to Muster. Outside a Muster pane
// (no MUSTER_AGENT_SESSION_ID in the environment) it does nothing.
import { spawn } from "node:child_process";

`)
	b.WriteString(binaryLine(musterPath) + "\n")
	b.WriteString(`const FORWARD = new Set([
  "session.created",
  "session.status",
  "session.idle",
  "session.error",
  "session.compacted",
  "session.deleted",
  "permission.asked",
  "permission.updated",
  "permission.replied",
  "question.asked",
  "question.replied",
]);

let queue = Promise.resolve();

function run(args, payload) {
  queue = queue.then(
    () =>
      new Promise((resolve) => {
        try {
          const child = spawn(MUSTER, args, { stdio: ["pipe", "ignore", "ignore"] });
          child.on("error", () => resolve());
          child.on("close", () => resolve());
          child.stdin.on("error", () => {});
          child.stdin.end(JSON.stringify(payload));
        } catch {
          resolve();
        }
      }),
  );
}

export const MusterPlugin = async () => {
  if (!process.env.MUSTER_AGENT_SESSION_ID) return {};
  return {
    event: async ({ event }) => {
      if (!event || !FORWARD.has(event.type)) return;
      const info = event.type === "session.created" && event.properties && event.properties.info;
      if (info && info.id && !info.parentID) {
        run(
          ["hook", "capture", "--provider", "opencode",
           "--process-id", String(process.pid), "--parent-process-id", String(process.ppid)],
          { version: 1, event: "session_started", session_id: info.id },
        );
      }
      run(["hook", "event", "opencode"], event);
    },
  };
};
`)
	return b.String()
}
