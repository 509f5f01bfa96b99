package opencode

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/musterhq/muster/internal/transcript"
)

// maxValue bounds one value of a JSON file (an export's message, a legacy
// message or part file): a longer one is skipped with a warning rather
// than held. A variable for tests.
var maxValue = transcript.DefaultMaxLine

// parseJSON reads an export document or a legacy session file as a
// stream: an export's messages are converted one at a time, so a document
// of any size is read in bounded memory.
func parseJSON(r io.Reader, path string, opts transcript.ParseOptions) *transcript.Transcript {
	members := map[string]transcript.Value{}
	var b *builder
	var notes []string
	n := 0
	err := transcript.WalkObject(r, maxValue, map[string]bool{"messages": true}, func(v transcript.DocValue) bool {
		if v.Index < 0 {
			switch {
			case v.TooLong:
				notes = append(notes, fmt.Sprintf("%s: %q is over %d bytes; skipped", filepath.Base(path), v.Key, maxValue))
			case v.Value.Exists():
				members[v.Key] = v.Value
			}
			return true
		}
		if b == nil {
			// The info an export writes before its messages.
			si := sessionInfo(members["info"])
			if si.id == "" {
				si.id = stem(path)
			}
			b = newBuilder(path, si, opts)
		}
		n++
		switch {
		case v.TooLong:
			b.warnf("message %d: over %d bytes; skipped", n, maxValue)
		case v.Malformed:
			b.warnf("message %d: malformed JSON", n)
		default:
			exportMessage(b, n, v.Value)
		}
		return true
	})
	switch in := members["info"]; {
	case b != nil || (in.IsObject() && !members["id"].IsString()):
		if b == nil {
			si := sessionInfo(in)
			if si.id == "" {
				si.id = stem(path)
			}
			b = newBuilder(path, si, opts)
		}
	case err == nil && members["id"].IsString():
		return parseTree(path, objectOf(members), opts)
	default:
		b = newBuilder(path, info{id: stem(path)}, opts)
		if err != nil {
			b.warnf("%s: not a JSON object: %v", filepath.Base(path), err)
		} else {
			b.warnf("%s: neither an OpenCode session nor an export", filepath.Base(path))
		}
		return b.finish()
	}
	b.t.Warnings = append(b.t.Warnings, notes...)
	if err != nil {
		b.warnf("%s: %v", filepath.Base(path), err)
	}
	return b.finish()
}

// objectOf joins members read one by one back into an object.
func objectOf(members map[string]transcript.Value) transcript.Value {
	var sb strings.Builder
	sb.WriteByte('{')
	for _, k := range slices.Sorted(maps.Keys(members)) {
		if sb.Len() > 1 {
			sb.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		sb.Write(key)
		sb.WriteByte(':')
		sb.WriteString(members[k].Raw)
	}
	sb.WriteByte('}')
	return transcript.Parse(sb.String())
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

// exportMessage converts the i-th message of an export.
func exportMessage(b *builder, i int, mv transcript.Value) {
	mi := mv.Get("info")
	if !mi.IsObject() {
		b.warnf("message %d: no info object", i)
		return
	}
	m := newMessage("", mi)
	mv.Get("parts").ForEach(func(_ string, p transcript.Value) bool {
		if p.IsObject() {
			b.part(m, p.Get("id").String(), p)
		}
		return true
	})
	b.add(m)
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
	data, err := transcript.ReadFile(path, int64(maxValue))
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
