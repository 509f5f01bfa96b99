// Package worktree makes, inspects and removes the git worktrees sessions
// run in (`muster new --worktree`), and reads a repository's setup files
// (.muster/worktree-setup, .worktreeinclude) and their content hash, which
// the user must consent to before they run. It runs the git binary: the
// same rules as the user's own git, hooks and config included.
package worktree

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// git runs git in dir and returns its trimmed standard output; its
// standard error becomes the error's text.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return strings.TrimSpace(out.String()), nil
}

// Toplevel is the root of the repository (the main worktree, not a
// linked one) that holds dir.
func Toplevel(ctx context.Context, dir string) (string, error) {
	common, err := git(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", fmt.Errorf("%s is not in a git repository", dir)
	}
	if filepath.Base(common) == ".git" {
		return filepath.Dir(common), nil
	}
	// A bare repository: worktrees still hang off it.
	return common, nil
}

// DefaultPath is where a branch's worktree goes: beside the repository,
// never inside it (a tree inside the repo would show in its status and
// its tools' globs): /src/app → /src/app.worktrees/BRANCH, slashes in the
// branch name becoming dashes. A non-empty dir (config.toml's
// worktree.dir) replaces /src/app.worktrees, with {repo} the repo's name.
func DefaultPath(repo, branch, dir string) string {
	name := strings.ReplaceAll(branch, "/", "-")
	if dir == "" {
		return filepath.Join(filepath.Dir(repo), filepath.Base(repo)+".worktrees", name)
	}
	return filepath.Join(strings.ReplaceAll(dir, "{repo}", filepath.Base(repo)), name)
}

// Created is a new worktree.
type Created struct {
	Path, Branch, Base string
	// NewBranch: the branch was made for it (from the repo's HEAD).
	NewBranch bool
}

// Create adds a worktree at path on branch: an existing branch is checked
// out there (git refuses one checked out elsewhere), a new one is made
// from the repository's HEAD. An existing path is refused: it may be
// another session's tree.
func Create(ctx context.Context, repo, branch, path string) (Created, error) {
	if _, err := git(ctx, repo, "check-ref-format", "--branch", branch); err != nil || strings.HasPrefix(branch, "-") {
		return Created{}, fmt.Errorf("%q is not a valid branch name", branch)
	}
	if _, err := os.Lstat(path); err == nil {
		return Created{}, fmt.Errorf("%s already exists", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return Created{}, err
	}
	c := Created{Path: path, Branch: branch}
	if tip, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil && tip != "" {
		if _, err := git(ctx, repo, "worktree", "add", "--", path, branch); err != nil {
			return Created{}, err
		}
		c.Base = tip
		return c, nil
	}
	head, err := git(ctx, repo, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return Created{}, fmt.Errorf("%s has no commit to branch from", repo)
	}
	if _, err := git(ctx, repo, "worktree", "add", "-b", branch, "--", path, head); err != nil {
		return Created{}, err
	}
	c.Base, c.NewBranch = head, true
	return c, nil
}

// Status is what a worktree holds that removing it could lose.
type Status struct {
	Exists bool
	Branch string // "" when detached
	// Dirty counts changed and untracked files (git status --porcelain).
	Dirty int
	// Ahead counts commits since the base commit.
	Ahead int
	// Unpushed counts commits on no remote branch; with no remote at all,
	// the commits since the base (the repository's own branches do not
	// count: deleting this branch would lose them).
	Unpushed  int
	HasRemote bool
}

// Inspect reads a worktree's state.
func Inspect(ctx context.Context, path, base string) (Status, error) {
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return Status{}, nil
	}
	s := Status{Exists: true}
	if b, err := git(ctx, path, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil {
		s.Branch = b
	}
	out, err := git(ctx, path, "status", "--porcelain=v1", "--untracked-files=all")
	if err != nil {
		return s, err
	}
	if out != "" {
		s.Dirty = strings.Count(out, "\n") + 1
	}
	if base != "" {
		if s.Ahead, err = count(ctx, path, base+"..HEAD"); err != nil {
			return s, err
		}
	}
	remotes, err := git(ctx, path, "remote")
	if err != nil {
		return s, err
	}
	s.HasRemote = remotes != ""
	if s.HasRemote {
		s.Unpushed, err = count(ctx, path, "HEAD", "--not", "--remotes")
	} else {
		s.Unpushed = s.Ahead
	}
	return s, err
}

func count(ctx context.Context, dir string, revs ...string) (int, error) {
	out, err := git(ctx, dir, append([]string{"rev-list", "--count"}, revs...)...)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(out)
}

// Remove removes the worktree at path from repo; force also removes one
// with changes (the caller decided they may go).
func Remove(ctx context.Context, repo, path string, force bool) error {
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force")
	}
	_, err := git(ctx, repo, append(args, "--", path)...)
	return err
}

// DeleteBranch deletes a local branch.
func DeleteBranch(ctx context.Context, repo, branch string) error {
	_, err := git(ctx, repo, "branch", "-D", "--", branch)
	return err
}

// Setup files of a repository, relative to its root.
const (
	SetupScript  = ".muster/worktree-setup"
	IncludeFile  = ".worktreeinclude"
	maxSetupSize = 1 << 20
)

// Setup is what a repository asks to run or copy for each new worktree.
type Setup struct {
	Script  []byte // .muster/worktree-setup, nil when absent
	Include []byte // .worktreeinclude, nil when absent
	// Hash is the SHA-256 of both files' names and contents: consent is
	// to this exact content, so any edit asks again.
	Hash string
}

// Empty reports whether the repository has no setup files.
func (s Setup) Empty() bool { return s.Script == nil && s.Include == nil }

// ReadSetup reads a repository's setup files.
func ReadSetup(repo string) (Setup, error) {
	var s Setup
	var err error
	if s.Script, err = readOptional(filepath.Join(repo, SetupScript)); err != nil {
		return Setup{}, err
	}
	if s.Include, err = readOptional(filepath.Join(repo, IncludeFile)); err != nil {
		return Setup{}, err
	}
	if s.Empty() {
		return s, nil
	}
	h := sha256.New()
	for _, f := range []struct {
		name string
		body []byte
	}{{SetupScript, s.Script}, {IncludeFile, s.Include}} {
		if f.body != nil {
			fmt.Fprintf(h, "%s\x00%d\x00", f.name, len(f.body))
			h.Write(f.body)
		}
	}
	s.Hash = hex.EncodeToString(h.Sum(nil))
	return s, nil
}

func readOptional(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSetupSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSetupSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxSetupSize)
	}
	return b, nil
}

// RunSetup applies consented setup files to a new worktree: the files
// .worktreeinclude names that git ignores are copied from the repository
// (Claude Code's convention: a tree starts without the repo's .env), then
// the setup script runs in the worktree with sh. It returns the script's
// combined output, for the user.
func RunSetup(ctx context.Context, repo, path string, s Setup) (string, error) {
	if s.Include != nil {
		if err := copyIncluded(ctx, repo, path); err != nil {
			return "", err
		}
	}
	if s.Script == nil {
		return "", nil
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", string(s.Script))
	cmd.Dir = path
	cmd.Env = append(os.Environ(), "MUSTER_WORKTREE_REPO="+repo, "MUSTER_WORKTREE="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s failed: %v", SetupScript, err)
	}
	return string(out), nil
}

// copyIncluded copies the ignored files that match .worktreeinclude's
// patterns (gitignore syntax) into the worktree.
func copyIncluded(ctx context.Context, repo, path string) error {
	matched, err := git(ctx, repo, "ls-files", "--others", "--ignored", "--exclude-from="+filepath.Join(repo, IncludeFile))
	if err != nil {
		return err
	}
	ignored, err := git(ctx, repo, "ls-files", "--others", "--ignored", "--exclude-standard")
	if err != nil {
		return err
	}
	isIgnored := map[string]bool{}
	for sc := bufio.NewScanner(strings.NewReader(ignored)); sc.Scan(); {
		isIgnored[sc.Text()] = true
	}
	for sc := bufio.NewScanner(strings.NewReader(matched)); sc.Scan(); {
		rel := sc.Text()
		if rel == "" || !isIgnored[rel] || !filepath.IsLocal(rel) {
			continue
		}
		if err := copyFile(filepath.Join(repo, rel), filepath.Join(path, rel)); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	st, err := os.Lstat(src)
	if err != nil || !st.Mode().IsRegular() {
		return err // a symlink or a device is not copied
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
