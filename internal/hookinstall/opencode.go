package hookinstall

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// pluginMarkerRE finds the marker on the first line of our OpenCode plugin.
var pluginMarkerRE = regexp.MustCompile(`^// muster-hooks:v([0-9]+)\b`)

func pluginVersion(data []byte) int {
	m := pluginMarkerRE.FindSubmatch(data)
	if m == nil {
		return 0
	}
	v, _ := strconv.Atoi(string(m[1]))
	return v
}

// OpenCodePlugin returns the plugin file that setup writes. OpenCode has no
// shell hooks: a plugin runs inside the OpenCode process, so the plugin
// itself spawns muster. On a root session's session.created it pipes the
// canonical capture event to `muster hook capture --provider opencode` with
// its own process.pid and process.ppid; every lifecycle bus event is piped,
// as the event object {id, type, properties} OpenCode passed to the plugin,
// to `muster hook event opencode`. Commands run one at a time in event order
// and never block or fail OpenCode. Outside a Muster pane the plugin does
// nothing.
func OpenCodePlugin(musterPath string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// muster-hooks:v%d (written by `muster hooks setup opencode`; `muster hooks remove opencode` deletes it)\n", MarkerVersion)
	b.WriteString(`// Forwards OpenCode lifecycle events to Muster. Outside a Muster pane
// (no MUSTER_AGENT_SESSION_ID in the environment) it does nothing.
import { spawn } from "node:child_process";

`)
	fmt.Fprintf(&b, "const MUSTER = %s;\n", quote(musterPath))
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

func setupPlugin(path, musterPath string) (Result, error) {
	r := Result{Provider: OpenCode, Path: path}
	f, err := readFile(path)
	if err != nil {
		return r, err
	}
	want := OpenCodePlugin(musterPath)
	if f.exists {
		if pluginVersion(f.data) == 0 {
			return r, fmt.Errorf("%s exists and was not written by muster; move it away, then run setup again", path)
		}
		if string(f.data) == want {
			return r, nil
		}
	}
	if err := f.writeAtomic([]byte(want)); err != nil {
		return r, err
	}
	r.Changed, r.Created = true, !f.exists
	if !f.exists {
		r.Notes = append(r.Notes, OpenCodeNote)
	}
	return r, nil
}

func removePlugin(path string) (Result, error) {
	r := Result{Provider: OpenCode, Path: path}
	f, err := readFile(path)
	if err != nil {
		return r, err
	}
	if !f.exists || pluginVersion(f.data) == 0 {
		return r, nil
	}
	if f.symlink {
		if err := os.Remove(path); err != nil {
			return r, fmt.Errorf("remove %s: %w", path, err)
		}
	} else if err := f.remove(); err != nil {
		return r, err
	}
	r.Changed, r.Deleted = true, true
	return r, nil
}

func statusPlugin(r Report, musterPath string) Report {
	f, err := readFile(r.Path)
	if err != nil {
		r.State, r.Detail = Unreadable, err.Error()
		return r
	}
	if !f.exists {
		return r
	}
	v := pluginVersion(f.data)
	r.Version = v
	switch {
	case v == 0:
		r.State, r.Detail = NotInstalled, "the file exists but was not written by muster"
	case string(f.data) == OpenCodePlugin(musterPath):
		r.State = Installed
	case v < MarkerVersion:
		r.State, r.Detail = Outdated, fmt.Sprintf("installed by an older muster (hooks v%d, this muster writes v%d)", v, MarkerVersion)
	case !strings.Contains(string(f.data), "const MUSTER = "+quote(musterPath)+";"):
		r.State, r.Detail = Outdated, "the plugin runs a different muster binary"
	default:
		r.State, r.Detail = Outdated, "the plugin differs from what this muster installs"
	}
	return r
}
