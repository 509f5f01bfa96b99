package core_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// gitRepo makes a repository with one commit in a temp dir, git's
// identity and config kept in the env's own home.
func (e *env) gitRepo() string {
	e.t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		e.t.Skip("no git here")
	}
	e.vars = append(e.vars, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	repo := filepath.Join(e.t.TempDir(), "app")
	e.git("", "init", "-q", "-b", "main", repo)
	writeFile(e.t, filepath.Join(repo, "README"), "hi\n")
	e.git(repo, "add", ".")
	e.git(repo, "commit", "-q", "-m", "first")
	return repo
}

func (e *env) git(dir string, args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, e.vars
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// refusesRemoval checks that `worktree rm` (with args) exits 1 with the
// reason and leaves the tree.
func (e *env) refusesRemoval(path, reason string, args ...string) {
	e.t.Helper()
	r := e.run(append([]string{"worktree", "rm"}, args...)...)
	if r.code != 1 || !strings.Contains(r.stderr, reason) {
		e.t.Errorf("worktree rm %v: exit %d, stderr %q; want 1 and %q", args, r.code, r.stderr, reason)
	}
	if _, err := os.Stat(path); err != nil {
		e.t.Errorf("a refused removal removed %s: %v", path, err)
	}
}

// TestWorktreeLifecycle: `new --worktree BRANCH` makes a tree beside the
// repository and runs the pane in it; ls shows its branch; removal is
// refused while a pane runs in it (even forced), while it is dirty and
// while its commit is on no remote, each with the reason; once pushed it
// goes, with the branch Muster made.
func TestWorktreeLifecycle(t *testing.T) {
	e := newEnv(t)
	repo := e.gitRepo()
	e.must("new", "--name", "wt", "--detach", "--dir", repo, "--cmd", "bash --norc --noprofile", "--worktree", "feat")
	path := filepath.Join(filepath.Dir(repo), "app.worktrees", "feat")
	s := e.session("wt")
	if s.CWD != path || s.Worktree == nil || s.Worktree.Branch != "feat" || s.Worktree.Repo != repo ||
		s.Worktree.BaseCommit != e.git(repo, "rev-parse", "HEAD") {
		t.Fatalf("session: cwd %q worktree %+v; want %s on feat from the repo's HEAD", s.CWD, s.Worktree, path)
	}
	e.must("send", "wt", "pwd > where.txt", "--enter")
	if !eventually(func() bool {
		b, _ := os.ReadFile(filepath.Join(path, "where.txt"))
		return strings.TrimSpace(string(b)) == path
	}) {
		t.Fatal("the pane does not run in the worktree")
	}
	if out := e.must("ls"); !strings.Contains(out, "BRANCH") || !strings.Contains(out, "feat") {
		t.Errorf("ls shows no branch:\n%s", out)
	}
	e.refusesRemoval(path, "is live: session wt runs in it", "wt")
	e.refusesRemoval(path, "is live", path, "--force")

	e.must("kill", "wt")
	// where.txt is untracked: the tree is dirty.
	e.refusesRemoval(path, "dirty: 1 changed or untracked files", path)
	e.git(path, "add", ".")
	e.git(path, "commit", "-q", "-m", "work")
	e.refusesRemoval(path, "unpushed: 1 commits on feat", path)
	if out := e.must("worktree", "ls"); !strings.Contains(out, "unpushed (1 commits)") {
		t.Errorf("worktree ls:\n%s", out)
	}
	remote := filepath.Join(t.TempDir(), "remote.git")
	e.git("", "init", "-q", "--bare", remote)
	e.git(repo, "remote", "add", "origin", remote)
	e.git(path, "push", "-q", "origin", "feat")
	out := e.must("worktree", "rm", path)
	if !strings.Contains(out, "removed "+path+" and branch feat") {
		t.Errorf("worktree rm printed %q", out)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the worktree is still there: %v", err)
	}
	if strings.Contains(e.git(repo, "branch", "--list", "feat"), "feat") {
		t.Error("the branch Muster made is still there")
	}
}

// TestWorktreeResumeAndSetup: a session resumes into its worktree; the
// repository's setup script runs only once the user consented to its
// exact content, and not after it changed.
func TestWorktreeResumeAndSetup(t *testing.T) {
	e := newEnv(t)
	repo := e.gitRepo()
	writeFile(t, filepath.Join(repo, ".muster", "worktree-setup"), "touch setup-ran\n")
	r := e.run("new", "--name", "one", "--detach", "--dir", repo, "--cmd", "sleep 1000", "--worktree")
	if r.code != 0 || !strings.Contains(r.stderr, "setup files: not run: no consent") {
		t.Fatalf("new without consent: exit %d, stderr %q", r.code, r.stderr)
	}
	one := filepath.Join(filepath.Dir(repo), "app.worktrees", "muster-one")
	if _, err := os.Stat(filepath.Join(one, "setup-ran")); err == nil {
		t.Error("the setup script ran without consent")
	}
	// Not a terminal: the review prints the hash and asks for --yes.
	r = e.run("worktree", "setup", "--dir", repo)
	hash := regexp.MustCompile(`sha256 ([0-9a-f]{64})`).FindStringSubmatch(r.stdout)
	if r.code != 1 || hash == nil || !strings.Contains(r.stdout, "touch setup-ran") {
		t.Fatalf("worktree setup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run("worktree", "setup", "--dir", repo, "--yes", strings.Repeat("0", 64)); r.code != 1 || !strings.Contains(r.stderr, "changed since you read them") {
		t.Errorf("consent to another hash: exit %d, %q", r.code, r.stderr)
	}
	e.must("worktree", "setup", "--dir", repo, "--yes", hash[1])
	e.must("new", "--name", "two", "--detach", "--dir", repo, "--cmd", "sleep 1000", "--worktree")
	if _, err := os.Stat(filepath.Join(filepath.Dir(repo), "app.worktrees", "muster-two", "setup-ran")); err != nil {
		t.Errorf("the consented setup script did not run: %v", err)
	}
	writeFile(t, filepath.Join(repo, ".muster", "worktree-setup"), "touch setup-ran; echo changed\n")
	if r := e.run("new", "--name", "three", "--detach", "--dir", repo, "--cmd", "sleep 1000", "--worktree", "three"); !strings.Contains(r.stderr, "not run: no consent") {
		t.Errorf("an edited script ran on the old consent: %q", r.stderr)
	}

	e.must("daemon", "stop")
	e.must("resume", "one")
	if s := e.session("one"); s.State != "running" || s.CWD != one || s.Worktree == nil || s.Worktree.Path != one {
		t.Errorf("resumed: state %s cwd %s worktree %+v; want running in %s", s.State, s.CWD, s.Worktree, one)
	}
}
