package hosts_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/testing/poll"
)

// agentOnHost writes, into the host user's home, an agent that reports
// its conversation id through `muster hook capture` (the custom
// launcher's capture) and resumes one given as --resume ID; it logs each
// argv it was started with to the returned log.
func (e *env) agentOnHost() (agent, log string) {
	e.t.Helper()
	agent = e.srv.home + "/myagent"
	log = e.srv.home + "/myagent.log"
	script := fmt.Sprintf(`#!/bin/sh
echo "argv:$*" >> %[1]s
if [ "$1" = "--resume" ]; then
	echo "resumed conversation $2"
	id="$2"
else
	id="conv-$$"
	echo "new conversation $id"
fi
printf '{"version":1,"event":"session_started","session_id":"%%s"}' "$id" |
	%[2]s hook capture --provider custom --process-id "$$" || echo "capture failed"
exec sleep 100000
`, log, e.srv.home+"/.local/share/muster/bin/"+version(e)+"/muster")
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		e.t.Fatal(err)
	}
	os.Chown(agent, e.srv.uid, -1)
	return agent, log
}

// TestResumeOnAHostAfterItsDaemonStops: the host's daemon stops under
// a session whose conversation id it captured; the session is listed
// restorable here, and `muster resume h1:NAME` brings it back on the host,
// running, relaunched with that id.
func TestResumeOnAHostAfterItsDaemonStops(t *testing.T) {
	srv := newServer(t)
	e := newEnv(t, srv)
	e.must("host", "add", "h1", "h1")
	agent, log := e.agentOnHost()
	e.must("new", "--host", "h1", "--name", "ag", "-d", "--cmd", agent, "--resume-cmd", agent+" --resume {session_id}")

	type row struct {
		Host            string `json:"host"`
		Name            string `json:"name"`
		State           string `json:"state"`
		NativeSessionID string `json:"native_session_id"`
		NativeConfirmed bool   `json:"native_confirmed"`
	}
	session := func() row {
		var rows []row
		out := e.must("ls", "--json", "--host", "h1")
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("ls --json: %v\n%s", err, out)
		}
		for _, r := range rows {
			if r.Name == "ag" {
				return r
			}
		}
		return row{}
	}
	poll.Wait(t, 20*time.Second, func() bool { return session().NativeConfirmed },
		func() string {
			return fmt.Sprintf("the id was never captured: %+v\n%s", session(), e.run("capture", "h1:ag").stdout)
		})
	id := session().NativeSessionID
	if !strings.HasPrefix(id, "conv-") {
		t.Fatalf("captured id %q", id)
	}

	// The host's daemon starts again on demand (its relay), and finds the
	// session's process gone with the one stopped.
	e.remote("daemon", "stop", "--force")
	poll.Wait(t, 30*time.Second, func() bool { return session().State == "restorable" },
		func() string { return fmt.Sprintf("h1:ag after its daemon stopped: %+v", session()) })

	r := e.run("resume", "h1:ag")
	if r.code != 0 || r.stdout != "ag: resumed\n" {
		t.Fatalf("resume h1:ag: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	poll.Wait(t, 20*time.Second, func() bool { return strings.Contains(e.run("capture", "h1:ag").stdout, "resumed conversation "+id) },
		func() string { return "capture h1:ag: " + e.run("capture", "h1:ag").stdout })
	if s := session(); s.State != "running" || s.NativeSessionID != id {
		t.Fatalf("h1:ag after resume: %+v, want running with %s", s, id)
	}
	b, _ := os.ReadFile(log)
	argvs := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if !slices.Equal(argvs, []string{"argv:", "argv:--resume " + id}) {
		t.Fatalf("the agent's launches: %q, want one with no arguments, then --resume %s", argvs, id)
	}
}
