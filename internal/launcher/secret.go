package launcher

import (
	"regexp"
	"strings"
)

var secretRE = regexp.MustCompile(`(?i)(TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL)`)

// SecretName reports whether an environment variable name looks like it
// holds a credential (it contains TOKEN, KEY, SECRET or PASSWORD, in any
// case). Such variables are never persisted with a launch command.
func SecretName(name string) bool { return secretRE.MatchString(name) }

// SecretAssignments returns the names of variables a command assigns inline
// (NAME=value words, as in `OPENAI_API_KEY=sk-… agent` or `env NAME=v agent`)
// whose names look like credentials, in order. The caller refuses to persist
// such a command or asks the user to move the value into the environment.
func SecretAssignments(cmd string) ([]string, error) {
	words, err := Words(cmd)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, w := range words {
		name, _, ok := strings.Cut(w.Value, "=")
		if !ok || !isName(name) || !SecretName(name) {
			continue
		}
		names = append(names, name)
	}
	return names, nil
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}
