package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/proto"
)

// TestLiveLink: with a daemon running, history marks the conversation a
// pane holds and names the pane; show and replay accept the session's
// name for its current conversation.
func TestLiveLink(t *testing.T) {
	e := newCLIEnv(t)
	e.muster = startCannedDaemon(t, func(m *proto.Mux) {
		answer[proto.None](m, proto.OpList, []proto.SessionInfo{
			{Name: "fixer", Provider: "claude", State: "running", NativeSessionID: "cccccccc-0000-4000-8000-000000000003"},
			{Name: "gone", Provider: "claude", State: "exited", NativeSessionID: "aaaaaaaa-0000-4000-8000-000000000001"},
			{Name: "fresh", Provider: "claude", State: "running"},
		})
	})
	code, out, errOut := e.run("history")
	if code != 0 {
		t.Fatalf("history: %d %s", code, errOut)
	}
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[0], "PANE") || !strings.Contains(out, "fixer") || strings.Contains(out, "gone") {
		t.Errorf("history:\n%s", out)
	}
	for _, l := range lines[1:] {
		if strings.Contains(l, "cccccccc") != strings.Contains(l, "fixer") {
			t.Errorf("row %q", l)
		}
	}
	_, out, _ = e.run("history", "--json")
	var list []historyEntry
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	for _, h := range list {
		live := h.Live != nil && h.Live.Name == "fixer"
		if live != (h.ID == "cccccccc-0000-4000-8000-000000000003") {
			t.Errorf("%s live %+v", h.ID, h.Live)
		}
	}

	code, out, errOut = e.run("show", "fixer")
	if code != 0 || !strings.Contains(out, "prompt 1 of cccccccc") {
		t.Errorf("show fixer: %d %s\n%s", code, errOut, out)
	}
	code, _, errOut = e.run("show", "fresh")
	if code == 0 || !strings.Contains(errOut, "fresh has no conversation id yet") {
		t.Errorf("show fresh: %d %s", code, errOut)
	}
	// An id prefix still works beside the names.
	if code, out, _ = e.run("show", "aaaabbbb"); code != 0 || !strings.Contains(out, "prompt 1 of aaaabbbb") {
		t.Errorf("show by prefix: %d\n%s", code, out)
	}
}

// TestHistoryNoDaemon: without a daemon, history has no PANE column and
// starts none.
func TestHistoryNoDaemon(t *testing.T) {
	e := newCLIEnv(t)
	code, out, _ := e.run("history")
	if code != 0 || strings.Contains(out, "PANE") {
		t.Errorf("history: %d\n%s", code, out)
	}
}
