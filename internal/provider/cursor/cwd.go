package cursor

import (
	"crypto/md5"
	"encoding/hex"
	"os"
	"strings"
	"sync"
)

// maxProbes bounds the directories one resolution may stat.
const maxProbes = 4096

// resolved caches project directory names resolved to paths, keyed by the
// projects directory and the name (results are only as fresh as the
// process; a path that appears later is found on the next run).
var resolved sync.Map

// resolveProject maps a sanitized project directory name back to the
// absolute path it came from. hash, when known, is the md5 of that path (the
// chats/ directory of the same chat) and picks among candidates.
func resolveProject(name, hash string) string {
	key := name + "\x00" + hash
	if v, ok := resolved.Load(key); ok {
		return v.(string)
	}
	p := resolveUncached(name, hash)
	resolved.Store(key, p)
	return p
}

func resolveUncached(name, hash string) string {
	tokens := strings.Split(name, "-")
	first := ""
	probes := 0
	var walk func(dir string, i int, comp string) string
	walk = func(dir string, i int, comp string) string {
		if probes > maxProbes {
			return ""
		}
		// comp holds tokens up to i-1; end it here or extend it.
		if i == len(tokens) {
			if comp == "" {
				return ""
			}
			p := dir + "/" + comp
			probes++
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				if hash == "" || md5hex(p) == hash {
					return p
				}
				if first == "" {
					first = p
				}
			}
			return ""
		}
		if comp != "" {
			p := dir + "/" + comp
			probes++
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				if r := walk(p, i+1, tokens[i]); r != "" {
					return r
				}
			}
			for _, sep := range []string{"-", ".", "_", " "} {
				if r := walk(dir, i+1, comp+sep+tokens[i]); r != "" {
					return r
				}
			}
			return ""
		}
		// An empty component: a separator right after "/" (a hidden
		// directory) or at the start.
		for _, sep := range []string{".", "-", "_", " "} {
			if r := walk(dir, i+1, sep+tokens[i]); r != "" {
				return r
			}
		}
		return ""
	}
	if name == "" {
		return ""
	}
	if r := walk("", 1, tokens[0]); r != "" {
		return r
	}
	return first
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// findByHash returns the project path whose md5 is hash, among the
// resolvable directories under projectsDir.
func findByHash(projectsDir, hash string) string {
	entries, err := os.ReadDir(projectsDir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if p := resolveProject(e.Name(), hash); p != "" && md5hex(p) == hash {
			return p
		}
	}
	return ""
}
