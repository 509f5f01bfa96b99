package opencode

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/musterhq/muster/internal/transcript"
)

// parseJSON reads an export document or a legacy session file.
func parseJSON(path, data string, opts transcript.ParseOptions) *transcript.Transcript {
	doc := strings.TrimSpace(data)
	if !transcript.ValidJSONString(doc) || !transcript.Parse(doc).IsObject() {
		b := newBuilder(path, info{id: stem(path)}, opts)
		b.warnf("%s: not a JSON object", filepath.Base(path))
		return b.finish()
	}
	v := transcript.Parse(doc)
	if in, msgs := v.Get("info"), v.Get("messages"); in.IsObject() && msgs.IsArray() {
		return parseExport(path, in, msgs, opts)
	}
	if v.Get("id").IsString() {
		return parseTree(path, v, opts)
	}
	b := newBuilder(path, info{id: stem(path)}, opts)
	b.warnf("%s: neither an OpenCode session nor an export", filepath.Base(path))
	return b.finish()
}

func stem(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// sessionInfo reads a session's info object (export info, legacy file).
func sessionInfo(v transcript.Value) info {
	return info{
		id:        v.Get("id").String(),
		parentID:  v.Get("parentID").String(),
		directory: v.Get("directory").String(),
		title:     v.Get("title").String(),
		modelID:   v.Get("model.id").String(),
		created:   v.Get("time.created").Int(),
		updated:   v.Get("time.updated").Int(),
	}
}

func parseExport(path string, in, msgs transcript.Value, opts transcript.ParseOptions) *transcript.Transcript {
	si := sessionInfo(in)
	if si.id == "" {
		si.id = stem(path)
	}
	b := newBuilder(path, si, opts)
	i := 0
	msgs.ForEach(func(_ string, mv transcript.Value) bool {
		i++
		mi := mv.Get("info")
		if !mi.IsObject() {
			b.warnf("message %d: no info object", i)
			return true
		}
		m := newMessage("", mi)
		mv.Get("parts").ForEach(func(_ string, p transcript.Value) bool {
			if p.IsObject() {
				b.part(m, p.Get("id").String(), p)
			}
			return true
		})
		b.add(m)
		return true
	})
	return b.finish()
}

// parseTree reads storage/session/<project>/<id>.json with the message and
// part files it points at.
func parseTree(path string, v transcript.Value, opts transcript.ParseOptions) *transcript.Transcript {
	si := sessionInfo(v)
	storage := filepath.Dir(filepath.Dir(filepath.Dir(path)))
	b := newBuilder(path, si, opts)
	if si.id == "" || si.id == "." || si.id == ".." || strings.ContainsAny(si.id, `/\`) {
		b.warnf("%s: session id %q cannot name a message directory", filepath.Base(path), si.id)
		return b.finish()
	}
	var msgs []*message
	for _, f := range sortedJSON(filepath.Join(storage, "message", si.id)) {
		data, ok := readJSON(b, f)
		if !ok {
			continue
		}
		msgs = append(msgs, newMessage(stem(f), data))
	}
	slices.SortStableFunc(msgs, func(a, c *message) int {
		return cmp.Or(a.created.Compare(c.created), cmp.Compare(a.id, c.id))
	})
	for _, m := range msgs {
		for _, f := range sortedJSON(filepath.Join(storage, "part", m.id)) {
			if p, ok := readJSON(b, f); ok {
				b.part(m, stem(f), p)
			}
		}
		b.add(m)
	}
	t := b.finish()
	if t.CWD == "" {
		if pid := v.Get("projectID").Str(); pid != "" {
			if data, err := transcript.ReadFileFollow(filepath.Join(storage, "project", pid+".json"), transcript.MaxConfigFile); err == nil {
				t.CWD = transcript.ParseBytes(data).Get("worktree").String()
			} else if !errors.Is(err, fs.ErrNotExist) {
				t.Warnings = append(t.Warnings, fmt.Sprintf("project %s: skipped: %v", pid, err))
			}
		}
	}
	return t
}

func readJSON(b *builder, path string) (transcript.Value, bool) {
	data, err := readFile(path)
	if err != nil {
		b.warnf("%s: skipped: %v", filepath.Base(path), err)
		return transcript.Value{}, false
	}
	s := string(data)
	if !transcript.ValidJSONString(s) || !transcript.Parse(s).IsObject() {
		b.warnf("%s: malformed JSON", filepath.Base(path))
		return transcript.Value{}, false
	}
	return transcript.Parse(s), true
}

func readFile(path string) ([]byte, error) {
	f, err := transcript.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
