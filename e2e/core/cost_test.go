package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/proto"
)

// TestCostPerPane: the daemon measures each pane's whole process tree,
// shows it in ls (table and --json) and explain, and a tree past its
// session's memory ceiling raises an attention item, while a pane with no
// ceiling of its own follows the global one (none here).
func TestCostPerPane(t *testing.T) {
	e := newEnv(t)
	e.writeConfig("[cost]\ninterval = \"1s\"\n[cost.sessions]\nfat = \"1MiB\"\n")
	// A shell with two children and a busy grandchild: four processes.
	tree := e.script("sleep 300 &\nsleep 300 &\nbash -c 'while :; do :; done' &\nwait")
	e.must("new", "--name", "fat", "--detach", "--", tree)
	e.must("new", "--name", "thin", "--detach", "--", tree)
	var fat, thin proto.SessionInfo
	if !eventually(func() bool {
		for _, s := range e.ls() {
			switch s.Name {
			case "fat":
				fat = s
			case "thin":
				thin = s
			}
		}
		return fat.RSSBytes != nil && fat.Processes >= 4 && fat.CPUPercent != nil && *fat.CPUPercent > 5 &&
			thin.RSSBytes != nil && thin.Processes >= 4
	}) {
		t.Fatalf("ls never showed both trees' cost: fat %+v, thin %+v", fat, thin)
	}
	if fat.MemoryCeiling != 1<<20 || thin.MemoryCeiling != 0 {
		t.Errorf("ceilings: fat %d, thin %d; want 1MiB and none", fat.MemoryCeiling, thin.MemoryCeiling)
	}
	out := e.must("ls")
	if !strings.Contains(out, "MEM") || !strings.Contains(out, "!") {
		t.Errorf("ls shows no MEM column or no ceiling mark:\n%s", out)
	}
	var items []proto.AttentionItem
	if !eventually(func() bool {
		items = nil
		json.Unmarshal([]byte(e.must("attention", "--json")), &items)
		return len(items) > 0
	}) {
		t.Fatal("no attention item for the tree over its ceiling")
	}
	if len(items) != 1 || items[0].SessionName != "fat" || !strings.Contains(items[0].Message, "over its ceiling of 1.0M") {
		t.Errorf("attention items: %+v; want one for fat's memory", items)
	}
	out = e.must("explain", "fat")
	if !strings.Contains(out, "memory") || !strings.Contains(out, "(over)") || !strings.Contains(out, "% of a core") {
		t.Errorf("explain shows no cost:\n%s", out)
	}
}
