package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestForkCommands: the recorded forks of Claude Code 2.1.328 and Codex
// 0.169.0 (the providers' testdata/fork) through history, show, replay
// and search: a fork is its own row, marked and naming its original; it
// shows and replays as the whole conversation, the original's part once,
// with the fork point marked; a search for what was said before the fork
// finds the original only.
func TestForkCommands(t *testing.T) {
	claude, err := filepath.Abs("../provider/claude/testdata/fork/projects")
	if err != nil {
		t.Fatal(err)
	}
	codex, err := filepath.Abs("../provider/codex/testdata/fork/.codex")
	if err != nil {
		t.Fatal(err)
	}
	e := newCLIEnv(t) // changes the directory
	for src, dst := range map[string]string{claude: filepath.Join(e.home, ".claude", "projects"), codex: filepath.Join(e.home, ".codex")} {
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := e.run("history", "--limit", "0")
	if code != 0 {
		t.Fatalf("history: %d %s", code, errOut)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		for _, id := range []string{"claude:11111111", "claude:b0d046f5", "codex:01a23606", "codex:01a23607"} {
			if strings.Contains(l, id) {
				rows[id] = l
			}
		}
	}
	if len(rows) != 4 {
		t.Fatalf("history lists %d of the 4 conversations:\n%s", len(rows), out)
	}
	for id, fork := range map[string]bool{"claude:11111111": false, "claude:b0d046f5": true, "codex:01a23606": false, "codex:01a23607": true} {
		if strings.Contains(rows[id], "⑂ ") != fork {
			t.Errorf("%s: fork mark %v, want %v: %q", id, !fork, fork, rows[id])
		}
	}

	code, out, errOut = e.run("history", "--json", "--provider", "codex")
	if code != 0 {
		t.Fatalf("history --json: %d %s", code, errOut)
	}
	var entries []historyEntry
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		want := ""
		if en.ID == "01a23607-1fc3-7ba1-98e0-b55e6aed91f9" {
			want = "01a23606-ff46-72b3-8261-0e9bb2725698"
		}
		if en.ForkedFrom != want {
			t.Errorf("%s: forked_from %q, want %q", en.ID, en.ForkedFrom, want)
		}
	}

	for _, c := range []struct {
		ref, from     string
		before, after []string
	}{
		{"claude:b0d0", "claude:11111111-2222-4333-8444-555555555555",
			[]string{"first prompt alpha", "second prompt bravo", "third prompt charlie"}, []string{"fourth prompt delta forked"}},
		{"codex:01a23607", "codex:01a23606-ff46-72b3-8261-0e9bb2725698",
			[]string{"first prompt alpha", "second prompt bravo"}, []string{"third prompt charlie forked"}},
	} {
		code, out, errOut := e.run("show", c.ref)
		if code != 0 {
			t.Fatalf("show %s: %d %s", c.ref, code, errOut)
		}
		mark := strings.Index(out, "── forked from "+c.from+" here")
		if !strings.Contains(out, "forked from "+c.from+"\n") || mark < 0 {
			t.Fatalf("show %s: no fork header or mark:\n%s", c.ref, out)
		}
		for _, p := range c.before {
			if i := strings.Index(out, "> "+p); i < 0 || i > mark || strings.Count(out, "> "+p+"\n") != 1 {
				t.Errorf("show %s: %q not once before the fork mark:\n%s", c.ref, p, out)
			}
		}
		for _, p := range c.after {
			if i := strings.Index(out, "> "+p); i < mark {
				t.Errorf("show %s: %q not after the fork mark:\n%s", c.ref, p, out)
			}
		}

		code, page, errOut := e.run("replay", c.ref, "-o", "-")
		if code != 0 {
			t.Fatalf("replay %s: %d %s", c.ref, code, errOut)
		}
		_, id, _ := strings.Cut(c.from, ":")
		fork := strings.Index(page, "⑂ Forked from "+id+" here")
		if fork < 0 {
			t.Fatalf("replay %s: no fork mark", c.ref)
		}
		if i := strings.Index(page, "second prompt bravo"); i < 0 || i > fork || strings.Count(page, "second prompt bravo") != 1 {
			t.Errorf("replay %s: the original's second prompt not once before the fork mark", c.ref)
		}
		if i := strings.LastIndex(page, c.after[0]); i < fork { // the title may hold it too
			t.Errorf("replay %s: %q not after the fork mark", c.ref, c.after[0])
		}
	}

	code, out, errOut = e.run("history", "--search", "bravo", "--json")
	if code != 0 {
		t.Fatalf("search: %d %s", code, errOut)
	}
	entries = nil
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, en := range entries {
		got = append(got, en.Ref)
	}
	if j := strings.Join(got, " "); len(got) != 2 || !strings.Contains(j, "claude:11111111") || !strings.Contains(j, "codex:01a23606") {
		t.Errorf("search bravo: %v, want the two originals only", got)
	}
}
