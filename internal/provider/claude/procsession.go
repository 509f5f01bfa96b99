package claude

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strconv"

	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/transcript"
)

var _ provider.ProcessSessionReader = Provider{}

// maxPIDFile bounds the read of a per-process session record.
const maxPIDFile = 64 << 10

// ProcessSession implements provider.ProcessSessionReader from the record
// Claude Code 2.1.328 keeps for each running process: <ConfigDir>/sessions/
// <pid>.json, {"pid", "sessionId", "cwd", "startedAt", "procStart", …},
// written at start, rewritten when the session changes, and removed at
// exit (read in the bundle, bin/claude.exe: `${process.pid}.json` under
// the config dir's "sessions"). A record whose pid is not pid, or whose
// session id could not name a transcript file, says nothing.
func (Provider) ProcessSession(env transcript.Env, pid int) string {
	dir := ConfigDir(env)
	if dir == "" || pid <= 0 {
		return ""
	}
	f, err := transcript.OpenFile(filepath.Join(dir, "sessions", strconv.Itoa(pid)+".json"))
	if err != nil {
		return ""
	}
	defer f.Close()
	var rec struct {
		PID       int    `json:"pid"`
		SessionID string `json:"sessionId"`
	}
	if err := json.NewDecoder(io.LimitReader(f, maxPIDFile)).Decode(&rec); err != nil || rec.PID != pid || !plainID(rec.SessionID) {
		return ""
	}
	return rec.SessionID
}

// plainID reports whether id is letters, digits and '-' only, at most 64
// bytes: a session id that can be part of a file name.
func plainID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
