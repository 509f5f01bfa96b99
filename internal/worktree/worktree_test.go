package worktree

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// newRepo makes a repository with one commit, its git identity and
// config in the test's own home.
func newRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"} {
		t.Setenv(k, v)
	}
	repo := filepath.Join(t.TempDir(), "app")
	run(t, "", "git", "init", "-q", "-b", "main", repo)
	write(t, filepath.Join(repo, "README"), "hi\n")
	run(t, repo, "git", "add", ".")
	run(t, repo, "git", "commit", "-q", "-m", "first")
	return repo
}

func run(t *testing.T, dir string, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCreateInspectRemove(t *testing.T) {
	repo := newRepo(t)
	ctx := t.Context()
	top, err := Toplevel(ctx, repo)
	if err != nil || top != repo {
		t.Fatalf("Toplevel = %q, %v", top, err)
	}
	path := DefaultPath(repo, "feat/x", "")
	if want := filepath.Join(filepath.Dir(repo), "app.worktrees", "feat-x"); path != want {
		t.Errorf("DefaultPath = %s, want %s beside the repo", path, want)
	}
	c, err := Create(ctx, repo, "feat/x", path)
	if err != nil || !c.NewBranch || c.Base != run(t, repo, "git", "rev-parse", "HEAD") {
		t.Fatalf("Create = %+v, %v", c, err)
	}
	if top, _ := Toplevel(ctx, path); top != repo {
		t.Errorf("Toplevel of the worktree = %q, want the repo", top)
	}
	if _, err := Create(ctx, repo, "other", path); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Create over an existing path: %v", err)
	}
	if _, err := Create(ctx, repo, "bad..name", path+"2"); err == nil || !strings.Contains(err.Error(), "not a valid branch name") {
		t.Errorf("Create with a bad branch: %v", err)
	}
	s, err := Inspect(ctx, path, c.Base)
	if err != nil || !s.Exists || s.Branch != "feat/x" || s.Dirty != 0 || s.Ahead != 0 || s.Unpushed != 0 {
		t.Errorf("fresh: %+v, %v", s, err)
	}
	write(t, filepath.Join(path, "new.txt"), "x\n")
	if s, _ = Inspect(ctx, path, c.Base); s.Dirty != 1 {
		t.Errorf("an untracked file: %+v, want dirty 1", s)
	}
	run(t, path, "git", "add", ".")
	run(t, path, "git", "commit", "-q", "-m", "work")
	if s, _ = Inspect(ctx, path, c.Base); s.Dirty != 0 || s.Ahead != 1 || s.Unpushed != 1 || s.HasRemote {
		t.Errorf("one commit, no remote: %+v", s)
	}
	// Pushed to a remote, the commit is safe.
	remote := filepath.Join(t.TempDir(), "remote.git")
	run(t, "", "git", "init", "-q", "--bare", remote)
	run(t, repo, "git", "remote", "add", "origin", remote)
	run(t, path, "git", "push", "-q", "origin", "feat/x")
	if s, _ = Inspect(ctx, path, c.Base); s.Ahead != 1 || s.Unpushed != 0 || !s.HasRemote {
		t.Errorf("pushed: %+v", s)
	}
	if err := Remove(ctx, repo, path, false); err != nil {
		t.Fatal(err)
	}
	if s, _ = Inspect(ctx, path, c.Base); s.Exists {
		t.Error("the worktree is still there")
	}
}

func TestSetup(t *testing.T) {
	repo := newRepo(t)
	ctx := t.Context()
	if s, err := ReadSetup(repo); err != nil || !s.Empty() || s.Hash != "" {
		t.Fatalf("no setup files: %+v, %v", s, err)
	}
	write(t, filepath.Join(repo, ".gitignore"), ".env\nbuild/\n")
	write(t, filepath.Join(repo, ".env"), "SECRET=1\n")
	write(t, filepath.Join(repo, "build", "out"), "big\n")
	write(t, filepath.Join(repo, IncludeFile), ".env\n")
	write(t, filepath.Join(repo, SetupScript), "echo set up > setup-ran\n")
	s, err := ReadSetup(repo)
	if err != nil || s.Empty() || len(s.Hash) != 64 {
		t.Fatalf("ReadSetup = %+v, %v", s, err)
	}
	write(t, filepath.Join(repo, SetupScript), "echo set up > setup-ran # edited\n")
	if s2, _ := ReadSetup(repo); s2.Hash == s.Hash {
		t.Error("an edited script kept its hash: consent would carry over")
	}
	s, _ = ReadSetup(repo)
	c, err := Create(ctx, repo, "w", DefaultPath(repo, "w", ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunSetup(ctx, repo, c.Path, s); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(c.Path, ".env")); err != nil || string(b) != "SECRET=1\n" {
		t.Errorf(".env not copied: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(c.Path, "build", "out")); err == nil {
		t.Error("an ignored file .worktreeinclude does not name was copied")
	}
	if _, err := os.Stat(filepath.Join(c.Path, "setup-ran")); err != nil {
		t.Errorf("the setup script did not run: %v", err)
	}
}
