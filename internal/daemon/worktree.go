package daemon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/store"
	"github.com/musterhq/muster/internal/worktree"
)

// Worktrees (`muster new --worktree`): the daemon makes the tree before
// the pane starts in it, records session ⇄ path ⇄ branch ⇄ base commit,
// and the session's directory is the tree, so a resume returns to it. A
// tree is removed only on request, and never while a pane runs in it or
// while removing it would lose work (checked at the moment of removal).

// worktreeRefresh is how often the trees' git state is read again for ls
// and the dashboard.
const worktreeRefresh = 10 * time.Second

// worktreeBoard caches each tree's last inspection, by path; it has its
// own lock because infoLocked reads it under d.mu while git runs without.
type worktreeBoard struct {
	mu     sync.Mutex
	rows   map[string]store.Worktree // by session id
	status map[string]worktree.Status
}

func (b *worktreeBoard) set(rows []store.Worktree) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rows = map[string]store.Worktree{}
	for _, w := range rows {
		b.rows[w.SessionID] = w
	}
}

func (b *worktreeBoard) add(w store.Worktree) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rows == nil {
		b.rows = map[string]store.Worktree{}
	}
	b.rows[w.SessionID] = w
}

func (b *worktreeBoard) forget(sessionID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.rows, sessionID)
}

func (b *worktreeBoard) setStatus(path string, s worktree.Status) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.status == nil {
		b.status = map[string]worktree.Status{}
	}
	b.status[path] = s
}

// fill sets info's worktree from the session's row and its last status.
func (b *worktreeBoard) fill(sessionID string, info *proto.SessionInfo) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.rows[sessionID]
	if !ok {
		return
	}
	wi := wireWorktree(w, b.status[w.Path])
	info.Worktree = &wi
}

func wireWorktree(w store.Worktree, s worktree.Status) proto.WorktreeInfo {
	return proto.WorktreeInfo{Path: w.Path, Repo: w.Repo, Branch: w.Branch, BaseCommit: w.BaseCommit, SessionID: w.SessionID,
		Exists: s.Exists, Dirty: s.Dirty, Ahead: s.Ahead, Unpushed: s.Unpushed}
}

// loadWorktrees reads the recorded trees at start.
func (d *Daemon) loadWorktrees(ctx context.Context) error {
	rows, err := d.store.Worktrees(ctx)
	if err != nil {
		return err
	}
	d.worktrees.set(rows)
	return nil
}

// watchWorktrees inspects every recorded tree each worktreeRefresh.
func (d *Daemon) watchWorktrees(ctx context.Context) {
	t := time.NewTicker(worktreeRefresh)
	defer t.Stop()
	for {
		rows, err := d.store.Worktrees(ctx)
		if err == nil {
			changed := false
			for _, w := range rows {
				s, err := worktree.Inspect(ctx, w.Path, w.BaseCommit)
				if err != nil && ctx.Err() == nil {
					d.logger.Debug("inspect worktree", "path", w.Path, "err", err)
				}
				d.worktrees.mu.Lock()
				changed = changed || d.worktrees.status[w.Path] != s
				d.worktrees.mu.Unlock()
				d.worktrees.setStatus(w.Path, s)
			}
			if changed {
				d.stateChanged()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// createWorktree makes the tree a new session starts in, from the
// repository that holds dir; setup is what became of the repository's
// setup files.
func (d *Daemon) createWorktree(ctx context.Context, sessionID, name, dir string, a *proto.WorktreeArgs) (w store.Worktree, setup string, err error) {
	repo, err := worktree.Toplevel(ctx, dir)
	if err != nil {
		return w, "", proto.Errorf(proto.CodeInvalid, "--worktree: %v", err)
	}
	branch := a.Branch
	if branch == "" {
		branch = "muster/" + name
	}
	path := worktree.DefaultPath(repo, branch, d.opts.WorktreeDir)
	if old, err := d.store.WorktreeByPath(ctx, path); err == nil {
		return w, "", &proto.Error{Code: proto.CodeConflict,
			Message: fmt.Sprintf("worktree %s belongs to another session (%s)", path, short8(old.SessionID)),
			Hint:    "choose another branch, or remove it with `muster worktree rm " + path + "`"}
	}
	c, err := worktree.Create(ctx, repo, branch, path)
	if err != nil {
		return w, "", proto.Errorf(proto.CodeInvalid, "--worktree: %v", err)
	}
	w = store.Worktree{Path: c.Path, SessionID: sessionID, Repo: repo, Branch: c.Branch, BaseCommit: c.Base,
		CreatedBranch: c.NewBranch, CreatedAt: time.Now()}
	setup, err = d.runSetup(ctx, repo, c.Path)
	if err != nil {
		d.discardWorktree(w)
		return store.Worktree{}, "", proto.Errorf(proto.CodeInvalid, "--worktree: %v", err)
	}
	return w, setup, nil
}

// runSetup applies the repository's setup files to a new tree when the
// user consented to their exact content.
func (d *Daemon) runSetup(ctx context.Context, repo, path string) (string, error) {
	s, err := worktree.ReadSetup(repo)
	if err != nil {
		return "", err
	}
	if s.Empty() {
		return "none", nil
	}
	ok, err := d.store.HasSetupConsent(ctx, repo, s.Hash)
	if err != nil {
		return "", err
	}
	if !ok {
		return "not run: no consent to this content (sha256 " + s.Hash[:12] + "…); review it with `muster worktree setup --dir " + repo + "`", nil
	}
	out, err := worktree.RunSetup(ctx, repo, path, s)
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, strings.TrimSpace(out))
	}
	return "ran", nil
}

// discardWorktree undoes a tree made for a launch that failed: nothing
// was done in it yet.
func (d *Daemon) discardWorktree(w store.Worktree) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := worktree.Remove(ctx, w.Repo, w.Path, true); err != nil {
		d.logger.Warn("remove the worktree of a failed launch", "path", w.Path, "err", err)
		return
	}
	if w.CreatedBranch {
		worktree.DeleteBranch(ctx, w.Repo, w.Branch)
	}
}

func short8(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// liveInLocked names the live session whose pane runs in the tree at
// path (it owns it, or its directory is inside it); "" when none does.
func (d *Daemon) liveInLocked(w store.Worktree) string {
	for _, s := range d.sessions {
		if s.pane == nil {
			continue
		}
		if exited, _ := s.pane.Exited(); exited {
			continue
		}
		if s.rec.ID == w.SessionID || s.rec.CWD == w.Path || strings.HasPrefix(s.rec.CWD, w.Path+string(filepath.Separator)) {
			return s.rec.Name
		}
	}
	return ""
}

// listWorktrees serves op worktrees: every recorded tree, inspected now.
func (d *Daemon) listWorktrees(ctx context.Context) ([]proto.WorktreeInfo, error) {
	rows, err := d.store.Worktrees(ctx)
	if err != nil {
		return nil, proto.Errorf(proto.CodeInternal, "list worktrees: %v", err)
	}
	out := []proto.WorktreeInfo{}
	for _, w := range rows {
		s, _ := worktree.Inspect(ctx, w.Path, w.BaseCommit)
		d.worktrees.setStatus(w.Path, s)
		wi := wireWorktree(w, s)
		d.mu.Lock()
		if ss, ok := d.sessions[w.SessionID]; ok {
			wi.Session = ss.rec.Name
		}
		wi.Live = d.liveInLocked(w) != ""
		d.mu.Unlock()
		out = append(out, wi)
	}
	return out, nil
}

// removeWorktree serves op worktree_rm. Every check runs now, against the
// tree as it is: a live pane in it refuses whatever the caller says;
// changed or untracked files and commits on no remote refuse unless
// forced. A branch Muster made is deleted with the tree only when nothing
// on it is unpushed.
func (d *Daemon) removeWorktree(ctx context.Context, a proto.WorktreeRmArgs) (proto.WorktreeRemoved, error) {
	w, err := d.worktreeTarget(ctx, a.Target)
	if err != nil {
		return proto.WorktreeRemoved{}, err
	}
	live := func() error {
		d.mu.Lock()
		name := d.liveInLocked(w)
		d.mu.Unlock()
		if name != "" {
			return &proto.Error{Code: proto.CodeConflict,
				Message: fmt.Sprintf("%s is live: session %s runs in it (--force does not remove a live worktree)", w.Path, name),
				Hint:    "end it first: `muster kill " + name + "`"}
		}
		return nil
	}
	if err := live(); err != nil {
		return proto.WorktreeRemoved{}, err
	}
	s, err := worktree.Inspect(ctx, w.Path, w.BaseCommit)
	if err != nil {
		return proto.WorktreeRemoved{}, proto.Errorf(proto.CodeInternal, "inspect %s: %v", w.Path, err)
	}
	if !a.Force {
		var why []string
		if s.Dirty > 0 {
			why = append(why, fmt.Sprintf("dirty: %d changed or untracked files", s.Dirty))
		}
		if s.Unpushed > 0 {
			where := "on no remote"
			if !s.HasRemote {
				where = "since its base, and the repository has no remote"
			}
			why = append(why, fmt.Sprintf("unpushed: %d commits on %s %s", s.Unpushed, w.Branch, where))
		}
		if len(why) > 0 {
			return proto.WorktreeRemoved{}, &proto.Error{Code: proto.CodeConflict,
				Message: fmt.Sprintf("%s not removed: %s", w.Path, strings.Join(why, "; ")),
				Hint:    "commit and push, or --force (an unpushed branch is kept)"}
		}
	}
	// A pane may have started in it while git ran.
	if err := live(); err != nil {
		return proto.WorktreeRemoved{}, err
	}
	out := proto.WorktreeRemoved{Path: w.Path, Branch: w.Branch}
	if s.Exists {
		if err := worktree.Remove(ctx, w.Repo, w.Path, a.Force); err != nil {
			return proto.WorktreeRemoved{}, proto.Errorf(proto.CodeConflict, "%v", err)
		}
	}
	if w.CreatedBranch && s.Unpushed == 0 {
		out.BranchDeleted = worktree.DeleteBranch(ctx, w.Repo, w.Branch) == nil
	}
	if err := d.store.DeleteWorktree(ctx, w.Path); err != nil {
		return out, proto.Errorf(proto.CodeInternal, "forget %s: %v", w.Path, err)
	}
	if rows, err := d.store.Worktrees(ctx); err == nil {
		d.worktrees.set(rows)
	}
	d.stateChanged()
	return out, nil
}

// worktreeTarget finds a recorded tree by its path or its session's name
// or id.
func (d *Daemon) worktreeTarget(ctx context.Context, target string) (store.Worktree, error) {
	if target == "" {
		return store.Worktree{}, proto.Errorf(proto.CodeBadRequest, "name a worktree: its path or its session")
	}
	if filepath.IsAbs(target) {
		w, err := d.store.WorktreeByPath(ctx, filepath.Clean(target))
		if errors.Is(err, store.ErrNotFound) {
			return w, proto.Errorf(proto.CodeNotFound, "no worktree of Muster's at %s", target)
		}
		return w, err
	}
	d.mu.Lock()
	s, err := d.lookupLocked(target)
	id := ""
	if err == nil {
		id = s.rec.ID
	}
	d.mu.Unlock()
	if err != nil {
		return store.Worktree{}, err
	}
	d.worktrees.mu.Lock()
	w, ok := d.worktrees.rows[id]
	d.worktrees.mu.Unlock()
	if !ok {
		return w, proto.Errorf(proto.CodeNotFound, "session %s has no worktree", target)
	}
	return w, nil
}

// setupConsent serves op setup_consent: the files are read again, and the
// consent recorded only for the content the user saw.
func (d *Daemon) setupConsent(ctx context.Context, a proto.SetupConsentArgs) error {
	if !filepath.IsAbs(a.Repo) {
		return proto.Errorf(proto.CodeInvalid, "repository %q is not an absolute path", a.Repo)
	}
	repo, err := worktree.Toplevel(ctx, a.Repo)
	if err != nil {
		return proto.Errorf(proto.CodeInvalid, "%v", err)
	}
	s, err := worktree.ReadSetup(repo)
	if err != nil {
		return proto.Errorf(proto.CodeInvalid, "%v", err)
	}
	if s.Empty() {
		return proto.Errorf(proto.CodeInvalid, "%s has no %s or %s", repo, worktree.SetupScript, worktree.IncludeFile)
	}
	if s.Hash != a.SHA256 {
		return proto.Errorf(proto.CodeConflict, "the setup files of %s changed since you read them (sha256 %s…): review them again", repo, s.Hash[:12])
	}
	return d.store.AddSetupConsent(ctx, repo, s.Hash, time.Now())
}
