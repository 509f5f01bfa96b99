package hookinstall

import (
	"fmt"

	"github.com/musterhq/muster/internal/transcript"
)

// skeleton is the document we start from when the file is missing or
// empty; strip turns our own entries back into exactly this text.
const skeleton = "{}\n"

// memory says which containers existed in the user's file before Muster
// first edited it. It is read from the backup; without a backup every
// container that becomes empty through our removal is pruned.
type memory struct {
	known bool
	raw   []byte // the backup's bytes
	doc   *doc   // the parsed backup; nil when it does not parse
	empty bool   // the backup is an empty (or all-blank) file
}

// has reports whether the backup had a value at path (keys from the root).
func (m memory) has(path ...string) bool {
	if !m.known {
		return false
	}
	if m.empty || m.doc == nil {
		return false
	}
	n := m.doc.root
	for _, k := range path {
		n = n.get(k)
		if n == nil {
			return false
		}
	}
	return true
}

// command returns the "command" string of a handler object ("" if none).
// Like JSON.parse, the last of duplicate keys wins.
func (d *doc) command(h *node) string {
	c := h.get("command")
	if c == nil || c.kind != '"' {
		return ""
	}
	return transcript.Parse(d.raw(c)).Str()
}

// isOursHandler reports whether a handler's command carries our marker.
func (d *doc) isOursHandler(h *node) bool {
	return h.kind == '{' && markerVersion(d.command(h)) != 0
}

// groupState classifies an element of an event array: 0 not ours, 1 ours
// entirely, 2 a foreign group holding some of our handlers.
func (s *jsonSpec) groupState(d *doc, el *node) int {
	if s.Flat {
		if d.isOursHandler(el) {
			return 1
		}
		return 0
	}
	hs := el.get("hooks")
	if hs == nil || hs.kind != '[' || len(hs.elems) == 0 {
		return 0
	}
	n := 0
	for _, h := range hs.elems {
		if d.isOursHandler(h) {
			n++
		}
	}
	switch {
	case n == len(hs.elems):
		return 1
	case n > 0:
		return 2
	}
	return 0
}

// hasOurs reports whether the document holds any of our entries.
func (s *jsonSpec) hasOurs(d *doc) bool {
	hooks := d.root.get("hooks")
	if hooks == nil || hooks.kind != '{' {
		return false
	}
	for _, m := range hooks.members {
		if m.val.kind != '[' {
			continue
		}
		for _, el := range m.val.elems {
			if s.groupState(d, el) != 0 {
				return true
			}
		}
	}
	return false
}

func reparse(d *doc, src string) (*doc, error) {
	nd, err := parseDoc(src, d.jsonc)
	if err != nil {
		// Our own splices always produce valid JSON; reaching this is a bug.
		return nil, fmt.Errorf("internal edit produced invalid JSON: %w", err)
	}
	return nd, nil
}

// findOurs locates one entry of ours: the container to remove it from, its
// index there and the event key it sits under.
func (s *jsonSpec) findOurs(d *doc) (c *node, i int, key string, ok bool) {
	hooks := d.root.get("hooks")
	if hooks == nil || hooks.kind != '{' {
		return nil, 0, "", false
	}
	for _, m := range hooks.members {
		if m.val.kind != '[' {
			continue
		}
		for ei, el := range m.val.elems {
			switch s.groupState(d, el) {
			case 1:
				return m.val, ei, m.key, true
			case 2:
				for hi, h := range el.get("hooks").elems {
					if d.isOursHandler(h) {
						return el.get("hooks"), hi, m.key, true
					}
				}
			}
		}
	}
	return nil, 0, "", false
}

// strip removes every entry of ours, then prunes the containers that became
// empty through that removal and did not exist before Muster (per mem).
func (s *jsonSpec) strip(d *doc, mem memory) (*doc, error) {
	touched := map[string]bool{}
	var err error
	for {
		c, i, key, ok := s.findOurs(d)
		if !ok {
			break
		}
		if d, err = reparse(d, d.removeItem(c, i)); err != nil {
			return nil, err
		}
		touched[key] = true
	}
	if len(touched) == 0 {
		return d, nil
	}
	// Prune event arrays that we emptied and that were not there before.
	prunedEvent := false
	for {
		hooks := d.root.get("hooks")
		idx := -1
		for mi, m := range hooks.members {
			if touched[m.key] && m.val.kind == '[' && len(m.val.elems) == 0 && !mem.has("hooks", m.key) {
				idx = mi
				break
			}
		}
		if idx < 0 {
			break
		}
		if d, err = reparse(d, d.removeItem(hooks, idx)); err != nil {
			return nil, err
		}
		prunedEvent = true
	}
	if prunedEvent && len(d.root.get("hooks").members) == 0 && !mem.has("hooks") {
		if d, err = reparse(d, d.removeItem(d.root, d.root.index("hooks"))); err != nil {
			return nil, err
		}
	}
	// "version" goes when the original had none; without a backup, only
	// when no other hooks remain that would need it.
	if s.Version && !mem.has("version") && (mem.known || !s.hasForeignHooks(d)) {
		if i := d.root.index("version"); i >= 0 && d.raw(d.root.members[i].val) == "1" {
			if d, err = reparse(d, d.removeItem(d.root, i)); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

// hasForeignHooks reports whether any hook entry remains (Cursor needs its
// "version" for those).
func (s *jsonSpec) hasForeignHooks(d *doc) bool {
	hooks := d.root.get("hooks")
	if hooks == nil || hooks.kind != '{' {
		return false
	}
	for _, m := range hooks.members {
		if m.val.kind != '[' || len(m.val.elems) > 0 {
			return true
		}
	}
	return false
}

// insert adds our entries to a document that holds none. It refuses a
// document whose "hooks" or event values have the wrong type.
func (s *jsonSpec) insert(d *doc, musterPath string) (*doc, error) {
	if err := s.checkShape(d); err != nil {
		return nil, err
	}
	st := detectStyle(d)
	var err error
	if s.Version && d.root.get("version") == nil {
		if d, err = reparse(d, d.appendMember(d.root, st, "version", 1)); err != nil {
			return nil, err
		}
	}
	hooks := d.root.get("hooks")
	if hooks == nil {
		return reparse(d, d.appendMember(d.root, st, "hooks", s.hooksValue(musterPath)))
	}
	for _, ev := range s.Events {
		els := s.Entries(ev, commandsFor(musterPath, s.provider, ev))
		hooks = d.root.get("hooks")
		arr := hooks.get(ev.Name)
		if arr == nil {
			if d, err = reparse(d, d.appendMember(hooks, st, ev.Name, els)); err != nil {
				return nil, err
			}
			continue
		}
		for _, el := range els {
			arr = d.root.get("hooks").get(ev.Name)
			if d, err = reparse(d, d.appendElement(arr, st, el)); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

// checkShape refuses documents we cannot add to without replacing user data.
func (s *jsonSpec) checkShape(d *doc) error {
	hooks := d.root.get("hooks")
	if hooks == nil {
		return nil
	}
	if hooks.kind != '{' {
		return fmt.Errorf("\"hooks\" is %s, not an object", kindName(hooks.kind))
	}
	for _, ev := range s.Events {
		if v := hooks.get(ev.Name); v != nil && v.kind != '[' {
			return fmt.Errorf("\"hooks\".%q is %s, not an array", ev.Name, kindName(v.kind))
		}
	}
	if s.Version {
		if v := d.root.get("version"); v != nil && d.raw(v) != "1" {
			return fmt.Errorf("\"version\" is %s; Muster writes hooks for version 1 only", d.raw(v))
		}
	}
	return nil
}

func kindName(k byte) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	}
	return "null"
}
