package daemon

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/proto"
)

// plainWord is a command word that needs no shell expansion to name.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9_.+/-]+$`)

// checkCommand refuses a --cmd whose first word names no command, so that
// `muster new --cmd nonexistent-binary` says why it cannot start instead
// of creating a pane that exits with 127 before anyone reads the shell's
// error. Only a plain first word is checked: one the shell would expand,
// an assignment or a redirection is left for the shell to judge.
func checkCommand(ctx context.Context, shell, cmd, dir string, env map[string]string) error {
	fields := strings.Fields(cmd)
	if len(fields) == 0 {
		return nil
	}
	word := fields[0]
	if !plainWord.MatchString(word) {
		return nil
	}
	if strings.Contains(word, "/") {
		p := word
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return nil
		}
		return missing(word, "no executable file at that path")
	}
	if _, err := findExecutable([]string{word}, env["PATH"]); err == nil {
		return nil
	}
	// Not on PATH: it may still be a builtin or keyword of the shell.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, shell, "-c", `command -v -- "$1" >/dev/null`, "sh", word)
	c.Dir = dir
	c.Env = []string{} // no PATH at all: the shell's default, as in the pane
	if path, ok := env["PATH"]; ok {
		c.Env = append(c.Env, "PATH="+path)
	}
	if err := c.Run(); err == nil {
		return nil
	} else if _, ok := err.(*exec.ExitError); !ok {
		return nil // the shell itself did not run; let launch report that
	}
	return missing(word, "no such command on PATH or in the shell; check the spelling or give its full path")
}

func missing(word, hint string) error {
	return &proto.Error{Code: proto.CodeInvalid, Message: word + ": not found", Hint: hint}
}
