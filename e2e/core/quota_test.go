package core_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/proto"
)

func writeConfig(t *testing.T, e *env, body string) {
	t.Helper()
	dir := filepath.Join(e.home, "config")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func sessionNames(e *env) []string {
	var names []string
	for _, s := range e.ls() {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return names
}

// A process inside a pane may start only limits.panes_per_pane live panes:
// the next `muster new` it runs is refused in one line and adds nothing;
// a user outside every pane is not limited by it.
func TestPaneMayStartOnlyItsQuotaOfPanes(t *testing.T) {
	e := newEnv(t)
	writeConfig(t, e, "[limits]\npanes_per_pane = 2\n")
	work := t.TempDir()
	e.must("new", "--name", "boss", "--detach", "--cmd", "bash --norc --noprofile")
	out := filepath.Join(work, "out")
	script := fmt.Sprintf(`for i in 1 2 3; do %q new --detach --name kid$i --cmd 'sleep 1000' 2>>%q; echo "kid$i=$?" >>%q; done; echo end >>%q`,
		e.bin, out, out, out)
	e.must("send", "boss", script, "--enter")
	var text string
	if !eventually(func() bool {
		b, _ := os.ReadFile(out)
		text = string(b)
		return strings.Contains(text, "end")
	}) {
		t.Fatalf("the pane's three `new`s did not finish:\n%s", text)
	}
	if !strings.Contains(text, "kid1=0") || !strings.Contains(text, "kid2=0") || strings.Contains(text, "kid3=0") {
		t.Fatalf("want kid1 and kid2 started and kid3 refused:\n%s", text)
	}
	if !strings.Contains(text, `refused: muster pane "boss" already runs 2 panes it started, its limit (limits.panes_per_pane in config.toml)`) {
		t.Errorf("kid3's refusal does not say why:\n%s", text)
	}
	if got, want := sessionNames(e), []string{"boss", "kid1", "kid2"}; !slices.Equal(got, want) {
		t.Errorf("sessions = %v, want %v", got, want)
	}
	// The user is not the pane: the limit is the pane's.
	e.must("new", "--name", "mine", "--detach", "--cmd", "sleep 1000")
	// Once one of its panes ends, the pane may start another.
	e.must("kill", "kid1")
	e.must("send", "boss", fmt.Sprintf(`%q new --detach --name kid4 --cmd 'sleep 1000' && touch %q`, e.bin, out+".4"), "--enter")
	if !eventually(func() bool { _, err := os.Stat(out + ".4"); return err == nil }) {
		t.Fatalf("after kid1 ended, the pane still could not start kid4: %v", sessionNames(e))
	}
}

// Every live pane's emulator together may hold limits.emulator_cells
// cells: a 1000×1000 pane past it is refused with CodeLimit and a message
// naming the limit, and nothing is started or stored.
func TestPanePastTheEmulatorBudgetIsRefused(t *testing.T) {
	e := newEnv(t)
	writeConfig(t, e, "[limits]\nemulator_cells = 1500000\n")
	work := t.TempDir()
	e.must("new", "--name", "small", "--detach", "--cmd", "sleep 1000")
	conn, br := e.control(t)
	newReq := func(name string) string {
		return fmt.Sprintf(`{"op":"new","args":{"name":%q,"dir":%q,"cmd":"sleep 1000","cols":1000,"rows":1000}}`, name, work)
	}
	if code, msg := request(t, conn, br, newReq("big1")); code != "" {
		t.Fatalf("the first 1000x1000 pane fits the budget, but: %s %s", code, msg)
	}
	code, msg := request(t, conn, br, newReq("big2"))
	want := "refused: a 1000x1000 pane needs 1000000 cells and the live panes hold 1001920 of the 1500000 all panes may have (limits.emulator_cells in config.toml)"
	if code != proto.CodeLimit || msg != want {
		t.Errorf("second 1000x1000: code %q message %q, want %q %q", code, msg, proto.CodeLimit, want)
	}
	if got, want := sessionNames(e), []string{"big1", "small"}; !slices.Equal(got, want) {
		t.Errorf("sessions = %v, want %v", got, want)
	}
	// Ending the big pane gives its cells back.
	e.must("kill", "big1")
	if code, msg := request(t, conn, br, newReq("big3")); code != "" {
		t.Errorf("after big1 ended, a 1000x1000 pane is still refused: %s %s", code, msg)
	}
}

// TestAttachCannotGrowPastTheEmulatorBudget: a huge terminal attached to a
// pane must not grow it past the cells `new` would refuse. The pane keeps
// its size; a size within the budget still applies.
func TestAttachCannotGrowPastTheEmulatorBudget(t *testing.T) {
	e := newEnv(t)
	writeConfig(t, e, "[limits]\nemulator_cells = 200000\n")
	e.must("new", "--name", "sz", "--detach", "--cmd", "bash --norc --noprofile")
	e.waitScreen("sz", "bash-")
	// Each call's answer carries its own mark: the previous answer, still
	// on the screen until the clear, must not pass for this one.
	calls := 0
	size := func() string {
		calls++
		mark := fmt.Sprintf(" size-%d", calls)
		e.must("send", "sz", fmt.Sprintf(`clear; echo "$(stty size) size-$((%d+0))"`, calls), "--enter")
		var first string
		eventually(func() bool {
			first, _, _ = strings.Cut(strings.TrimSpace(e.must("capture", "sz")), "\n")
			return strings.HasSuffix(first, mark)
		})
		return strings.TrimSuffix(first, mark)
	}
	big := e.attach("sz", 1000, 1000, true) // 1,000,000 cells > 200,000
	big.waitScreen("bash-")
	if out := size(); out != "24 80" {
		t.Errorf("a 1000x1000 client grew the pane past the budget:\n%s", out)
	}
	big.detach()
	ok := e.attach("sz", 200, 50, true) // 10,000 cells: within it
	ok.waitScreen("bash-")
	if out := size(); out != "50 200" {
		t.Errorf("a 200x50 client did not resize the pane:\n%s", out)
	}
	ok.detach()
}
