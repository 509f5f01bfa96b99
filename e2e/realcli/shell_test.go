package realcli

import (
	"os"
	"os/exec"
	"strings"
)

// runShell runs command with sh -c, stdin and one extra variable, and
// returns its stdout.
func runShell(command, stdin, kv string) (string, error) {
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), kv)
	out, err := cmd.Output()
	return string(out), err
}
