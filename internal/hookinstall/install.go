package hookinstall

import (
	"fmt"
	"slices"
	"strings"

	"github.com/musterhq/muster/internal/launcher"
	"github.com/musterhq/muster/internal/provider"
)

// Result is what Setup or Remove did to one provider's configuration.
type Result struct {
	Provider string   `json:"provider"`
	Path     string   `json:"path"`
	Changed  bool     `json:"changed"`           // the file was written or deleted
	Created  bool     `json:"created,omitempty"` // the file did not exist before
	Deleted  bool     `json:"deleted,omitempty"` // remove deleted the file
	Backup   string   `json:"backup,omitempty"`  // backup written by this call
	Notes    []string `json:"notes,omitempty"`   // things the user must know or do
}

// State is the installation state of one provider's hooks.
type State string

// States reported by Status (wire spellings for `muster hooks status --json`).
const (
	Installed    State = "installed"
	Outdated     State = "outdated"      // ours, but not what this muster would write
	NotInstalled State = "not_installed" // none of our entries
	Unreadable   State = "error"         // the file cannot be read or parsed
)

// Report is the status of one provider's hooks.
type Report struct {
	Provider string   `json:"provider"`
	Path     string   `json:"path"`
	State    State    `json:"state"`
	Version  int      `json:"version,omitempty"` // highest marker version found
	Detail   string   `json:"detail,omitempty"`  // why outdated, or the error
	Notes    []string `json:"notes,omitempty"`
}

// Setup installs the capture adapter and the lifecycle helper for provider,
// running the muster binary at musterPath (absolute). It is idempotent: when
// everything is already installed it writes nothing. Outdated entries of
// ours are replaced in place.
func Setup(env Env, provider, musterPath string) (Result, error) {
	if err := checkMusterPath(musterPath); err != nil {
		return Result{}, fmt.Errorf("hooks setup %s: %w", provider, err)
	}
	sp, err := spec(provider)
	if err != nil {
		return Result{}, fmt.Errorf("hooks setup %s: %w", provider, err)
	}
	path, err := sp.Config(env)
	if err != nil {
		return Result{}, fmt.Errorf("hooks setup %s: %w", provider, err)
	}
	if sp.Plugin != nil {
		return setupPlugin(provider, path, musterPath, sp.Plugin)
	}
	spec := jsonSpecFor(sp, provider)
	r := Result{Provider: provider, Path: path}
	f, err := readFile(path)
	if err != nil {
		return r, err
	}
	out, hadOurs, err := spec.setupText(path, f.data, f.exists, loadMemory(path, spec.JSONC), musterPath)
	if err != nil {
		return r, err
	}
	if f.exists && out == string(f.data) {
		return r, nil
	}
	if f.exists && !hadOurs {
		if r.Backup, err = f.writeBackup(); err != nil {
			return r, err
		}
	}
	if err := f.writeAtomic([]byte(out)); err != nil {
		return r, err
	}
	r.Changed, r.Created = true, !f.exists
	r.Notes = append(r.Notes, sp.SetupNotes...)
	return r, nil
}

// Remove deletes every entry of ours for provider. The file is left as it
// would be without them: containers Muster added are removed again, and when
// nothing else changed since the first setup the backup's exact bytes are
// restored. A file Muster created is deleted once nothing else is in it.
func Remove(env Env, provider string) (Result, error) {
	sp, err := spec(provider)
	if err != nil {
		return Result{}, fmt.Errorf("hooks remove %s: %w", provider, err)
	}
	path, err := sp.Config(env)
	if err != nil {
		return Result{}, fmt.Errorf("hooks remove %s: %w", provider, err)
	}
	if sp.Plugin != nil {
		return removePlugin(provider, path)
	}
	spec := jsonSpecFor(sp, provider)
	r := Result{Provider: provider, Path: path}
	f, err := readFile(path)
	if err != nil {
		return r, err
	}
	if !f.exists {
		return r, nil
	}
	out, del, changed, err := spec.removeText(path, f.data, loadMemory(path, spec.JSONC), !f.symlink)
	if err != nil || !changed {
		return r, err
	}
	if del {
		if err := f.remove(); err != nil {
			return r, err
		}
		r.Changed, r.Deleted = true, true
		return r, nil
	}
	if err := f.writeAtomic([]byte(out)); err != nil {
		return r, err
	}
	r.Changed = true
	return r, nil
}

// Status reports whether provider's hooks are installed as musterPath
// would install them. It never writes.
func Status(env Env, provider, musterPath string) Report {
	sp, err := spec(provider)
	path := ""
	if err == nil {
		path, err = sp.Config(env)
	}
	r := Report{Provider: provider, Path: path, State: NotInstalled}
	if err != nil {
		r.State, r.Detail = Unreadable, err.Error()
		return r
	}
	if sp.Plugin != nil {
		return statusPlugin(r, musterPath, sp.Plugin)
	}
	spec := jsonSpecFor(sp, provider)
	f, err := readFile(path)
	if err != nil {
		r.State, r.Detail = Unreadable, err.Error()
		return r
	}
	if !f.exists || strings.TrimSpace(string(f.data)) == "" {
		r.Notes = notes(sp, env, "")
		return r
	}
	d, err := parseConfig(path, f.data, f.exists, spec.JSONC)
	if err != nil {
		r.State, r.Detail = Unreadable, err.Error()
		return r
	}
	r.Notes = notes(sp, env, d.clean)
	spec.compare(d, musterPath, &r)
	return r
}

// compare fills in State, Version and Detail.
func (s *jsonSpec) compare(d *doc, musterPath string, r *Report) {
	got := map[string][]string{}
	mixed := ""
	var bins []string
	hooks := d.root.get("hooks")
	if hooks != nil && hooks.kind == '{' {
		for _, m := range hooks.members {
			if m.val.kind != '[' {
				continue
			}
			for _, el := range m.val.elems {
				st := s.groupState(d, el)
				if st == 0 {
					continue
				}
				if st == 2 && mixed == "" {
					mixed = m.key
				}
				got[m.key] = append(got[m.key], d.raw(el))
				for _, c := range s.commandsIn(d, el) {
					if v := markerVersion(c); v > r.Version {
						r.Version = v
					}
					if b := firstWord(c); b != "" && !slices.Contains(bins, b) {
						bins = append(bins, b)
					}
				}
			}
		}
	}
	if len(got) == 0 {
		r.State = NotInstalled
		return
	}
	r.State = Outdated
	switch {
	case r.Version < MarkerVersion:
		r.Detail = fmt.Sprintf("installed by an older muster (hooks v%d, this muster writes v%d)", r.Version, MarkerVersion)
		return
	case r.Version > MarkerVersion:
		r.Detail = fmt.Sprintf("installed by a newer muster (hooks v%d, this muster writes v%d)", r.Version, MarkerVersion)
		return
	case len(bins) > 0 && !slices.Contains(bins, musterPath):
		r.Detail = fmt.Sprintf("hooks run %s, not %s", strings.Join(bins, ", "), musterPath)
		return
	case mixed != "":
		r.Detail = fmt.Sprintf("entries in %q share a group with other hooks", mixed)
		return
	}
	st := style{unit: "", colon: ":"}
	for _, ev := range s.Events {
		els := s.Entries(ev, commandsFor(musterPath, s.provider, ev))
		have := got[ev.Name]
		delete(got, ev.Name)
		if len(have) == 0 {
			r.Detail = fmt.Sprintf("missing %s", ev.Name)
			return
		}
		if len(have) != len(els) {
			r.Detail = fmt.Sprintf("%d entries in %s, want %d", len(have), ev.Name, len(els))
			return
		}
		for i, el := range els {
			if !equalJSON(have[i], st.encode(el, "")) {
				r.Detail = fmt.Sprintf("the entry in %s differs from what this muster installs", ev.Name)
				return
			}
		}
	}
	for k := range got {
		r.Detail = fmt.Sprintf("unexpected entry in %s", k)
		return
	}
	r.State, r.Detail = Installed, ""
}

// commandsIn returns the commands of our handlers in element el.
func (s *jsonSpec) commandsIn(d *doc, el *node) []string {
	var hs []*node
	if s.Flat {
		hs = []*node{el}
	} else if h := el.get("hooks"); h != nil && h.kind == '[' {
		hs = h.elems
	}
	var out []string
	for _, h := range hs {
		if d.isOursHandler(h) {
			out = append(out, d.command(h))
		}
	}
	return out
}

func firstWord(cmd string) string {
	words, err := launcher.Words(cmd)
	if err != nil || len(words) == 0 {
		return ""
	}
	return words[0].Value
}

// notes reports provider settings that keep installed hooks from running.
func notes(sp provider.HookInstall, env Env, settings string) []string {
	if sp.Notes == nil {
		return nil
	}
	return sp.Notes(env, settings)
}

// parseConfig parses a config file's bytes, treating a missing or blank
// file as the skeleton document.
func parseConfig(path string, data []byte, exists, jsonc bool) (*doc, error) {
	src := string(data)
	if !exists || strings.TrimSpace(src) == "" {
		src = skeleton
	}
	d, err := parseDoc(src, jsonc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; fix or move it, then run the command again", path, err)
	}
	return d, nil
}

// setupText computes the file content after setup from the current content
// (exists false: no file) and the memory of the original. hadOurs reports
// whether the current content already held entries of ours.
func (s *jsonSpec) setupText(path string, data []byte, exists bool, mem memory, musterPath string) (string, bool, error) {
	d, err := parseConfig(path, data, exists, s.JSONC)
	if err != nil {
		return "", false, err
	}
	hadOurs := s.hasOurs(d)
	if hadOurs {
		// Already exactly what we would write (perhaps reformatted by the
		// provider or the user): leave the bytes alone.
		rep := Report{}
		s.compare(d, musterPath, &rep)
		if rep.State == Installed {
			return string(data), true, nil
		}
	}
	stripped, err := s.strip(d, mem)
	if err != nil {
		return "", hadOurs, fmt.Errorf("edit %s: %w", path, err)
	}
	out, err := s.insert(stripped, musterPath)
	if err != nil {
		return "", hadOurs, fmt.Errorf("edit %s: %w; fix it by hand, then run setup again", path, err)
	}
	return out.src, hadOurs, nil
}

// removeText computes the file content after remove. del reports that the
// file should be deleted instead (only when mayDelete); changed is false
// when there is nothing of ours to remove.
func (s *jsonSpec) removeText(path string, data []byte, mem memory, mayDelete bool) (out string, del, changed bool, err error) {
	if strings.TrimSpace(string(data)) == "" {
		return string(data), false, false, nil
	}
	d, err := parseConfig(path, data, true, s.JSONC)
	if err != nil {
		return "", false, false, err
	}
	if !s.hasOurs(d) {
		return string(data), false, false, nil
	}
	stripped, err := s.strip(d, mem)
	if err != nil {
		return "", false, false, fmt.Errorf("edit %s: %w", path, err)
	}
	switch {
	case mem.known && mem.empty && equalJSON(stripped.clean, "{}") && !hasComments(stripped):
		return string(mem.raw), false, true, nil
	case mem.known && mem.doc != nil && equalJSON(stripped.clean, mem.doc.clean) && comments(stripped) == comments(mem.doc):
		return string(mem.raw), false, true, nil
	case !mem.known && mayDelete && equalJSON(stripped.clean, "{}") && !hasComments(stripped):
		return "", true, true, nil
	}
	return stripped.src, false, true, nil
}

// loadMemory reads the backup as the record of the user's original file.
func loadMemory(path string, jsonc bool) memory {
	b, ok := readBackup(path)
	return memoryFrom(b, ok, jsonc)
}

func memoryFrom(b []byte, ok, jsonc bool) memory {
	if !ok {
		return memory{}
	}
	m := memory{known: true, raw: b}
	if strings.TrimSpace(string(b)) == "" {
		m.empty = true
		return m
	}
	if d, err := parseDoc(string(b), jsonc); err == nil {
		m.doc = d
	}
	return m
}

// comments returns the comment text of a JSONC document (the bytes that
// blanking changed), so that a restore never drops a comment.
func comments(d *doc) string {
	var b strings.Builder
	for i := 0; i < len(d.src); i++ {
		if d.src[i] != d.clean[i] {
			b.WriteByte(d.src[i])
		}
	}
	return b.String()
}

func hasComments(d *doc) bool { return d.src != d.clean }
