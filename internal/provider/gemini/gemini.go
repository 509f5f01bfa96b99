package gemini

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/musterhq/muster/internal/provider/gemini/geminihook"
	"github.com/musterhq/muster/internal/transcript"
)

// Name is the provider's stable name.
const Name = geminihook.Name

// Source is the Gemini CLI provider.
type Source struct{}

// New returns the Gemini CLI provider.
func New() transcript.Source { return &Source{} }

// Provider returns "gemini".
func (*Source) Provider() string { return Name }

// Dir is the CLI's global directory: $GEMINI_CLI_HOME/.gemini, else
// ~/.gemini; "" when neither is known.
func Dir(env transcript.Env) string {
	d, _ := dir(env)
	return d
}

// dir is Dir, with an error when it is not absolute. GEMINI_CLI_HOME
// replaces the home directory, not ~/.gemini.
func dir(env transcript.Env) (string, error) {
	return env.CheckedDir("GEMINI_CLI_HOME", ".gemini", ".gemini")
}

// Roots returns the per-project temp directory that holds every chats/.
func (*Source) Roots(env transcript.Env) []string {
	d := Dir(env)
	if d == "" {
		return nil
	}
	return []string{filepath.Join(d, "tmp")}
}

// Discover lists tmp/<project>/chats/*.json{,l} and the subagent chats one
// directory below. A legacy .json with a migrated .jsonl sibling is left
// out. Missing or unreadable directories are skipped.
func (s *Source) Discover(ctx context.Context, env transcript.Env) ([]transcript.File, error) {
	var files []transcript.File
	for _, root := range s.Roots(env) {
		projects, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, p := range projects {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if !p.IsDir() {
				continue
			}
			chats := filepath.Join(root, p.Name(), "chats")
			files = appendChats(files, chats, true)
		}
	}
	return files, nil
}

func appendChats(files []transcript.File, dir string, top bool) []transcript.File {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return files
	}
	have := make(map[string]bool, len(entries))
	for _, e := range entries {
		have[e.Name()] = true
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			if top {
				files = appendChats(files, filepath.Join(dir, name), false)
			}
			continue
		}
		switch filepath.Ext(name) {
		case ".jsonl":
		case ".json":
			if have[name+"l"] {
				continue
			}
		default:
			continue
		}
		if f, ok := transcript.Candidate(filepath.Join(dir, name), e); ok {
			files = append(files, f)
		}
	}
	return files
}

// Parse reads one chat recording (.jsonl patch log or legacy .json).
func (*Source) Parse(ctx context.Context, env transcript.Env, path string, opts transcript.ParseOptions) ([]*transcript.Transcript, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := transcript.OpenFile(path)
	if err != nil {
		return nil, fmt.Errorf("read gemini transcript: %w", err)
	}
	defer f.Close()
	t, projectHash := read(f, path, strings.EqualFold(filepath.Ext(path), ".json"), opts)
	root, notes := projectRoot(path, projectHash)
	if root != "" {
		t.CWD = root
	}
	t.Warnings = append(t.Warnings, notes...)
	return []*transcript.Transcript{t}, nil
}

// projectRoot maps a chat file back to the project's absolute path, using
// the layout tmp/<project>/chats/[<parent>/]<file>. A .project_root or
// projects.json that is there but cannot be read (a FIFO, a symlink loop,
// a runaway size) is skipped with a note for the session's warnings.
func projectRoot(path, projectHash string) (string, []string) {
	dir := filepath.Dir(path)
	if filepath.Base(dir) != "chats" {
		dir = filepath.Dir(dir)
		if filepath.Base(dir) != "chats" {
			return "", nil
		}
	}
	projDir := filepath.Dir(dir)
	var notes []string
	note := func(err error) {
		if !errors.Is(err, fs.ErrNotExist) {
			notes = append(notes, fmt.Sprintf("project directory: skipped: %v", err))
		}
	}
	b, err := transcript.ReadFileFollow(filepath.Join(projDir, ".project_root"), transcript.MaxConfigFile)
	if err == nil {
		if root := strings.TrimSpace(string(b)); root != "" {
			return root, notes
		}
	} else {
		note(err)
	}
	geminiDir := filepath.Dir(filepath.Dir(projDir)) // tmp/<project> → .gemini
	reg, err := readRegistry(filepath.Join(geminiDir, "projects.json"))
	if err != nil {
		if !errors.Is(err, errors.ErrUnsupported) {
			note(err)
		}
		return "", notes
	}
	id := filepath.Base(projDir)
	var byHash string
	for root, slug := range reg {
		if slug == id {
			return root, notes
		}
		sum := sha256.Sum256([]byte(root))
		h := hex.EncodeToString(sum[:])
		if h == id || (projectHash != "" && h == projectHash) {
			byHash = root
		}
	}
	return byHash, notes
}

func readRegistry(path string) (map[string]string, error) {
	b, err := transcript.ReadFileFollow(path, transcript.MaxConfigFile)
	if err != nil {
		return nil, err
	}
	var reg struct {
		Projects map[string]string `json:"projects"`
	}
	if err := json.Unmarshal(b, &reg); err != nil {
		return nil, errors.ErrUnsupported // someone else's file: not ours to report
	}
	if reg.Projects == nil {
		return nil, errors.ErrUnsupported
	}
	return reg.Projects, nil
}
