package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
)

// Host is one `[[host]]` table: a machine reached with the user's own ssh.
type Host struct {
	// Name is what the user calls it: the HOST of HOST:NAME.
	Name string `toml:"name"`
	// Dest is anything ssh accepts as a destination: an alias from
	// ~/.ssh/config, user@host, ssh://user@host:port.
	Dest string `toml:"dest"`
	// Muster is the path of the muster binary on the host, set once
	// `muster host add` found or installed one; empty until then.
	Muster string `toml:"muster,omitempty"`
}

// SSH is the `[ssh]` table.
type SSH struct {
	// Command is the ssh binary; "ssh" (found on PATH) when empty.
	Command string `toml:"command,omitempty"`
	// Config, when set, is passed as `ssh -F`: OpenSSH reads
	// ~/.ssh/config from the passwd entry's home, not from $HOME.
	Config string `toml:"config,omitempty"`
}

// Host returns the host named name.
func (c Config) Host(name string) (Host, bool) {
	i := slices.IndexFunc(c.Hosts, func(h Host) bool { return h.Name == name })
	if i < 0 {
		return Host{}, false
	}
	return c.Hosts[i], true
}

// CheckHostName says why name cannot name a host. A host name is the
// prefix of HOST:NAME and a file name in the runtime directory, so it is
// short and plain.
func CheckHostName(name string) error {
	if name == "" || len(name) > 32 {
		return fmt.Errorf("host name %q: want 1 to 32 characters", name)
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || i > 0 && (r == '-' || r == '_' || r == '.')
		if !ok {
			return fmt.Errorf("host name %q: use letters, digits, '-', '_' and '.', starting with a letter or digit", name)
		}
	}
	return nil
}

// CheckDest says why dest cannot be given to ssh as a destination. A
// leading '-' would be read as an option (-oProxyCommand=… runs a
// command), so it is refused outright.
func CheckDest(dest string) error {
	if dest == "" {
		return errors.New("destination is empty")
	}
	if strings.HasPrefix(dest, "-") {
		return fmt.Errorf("destination %q must not start with '-'", dest)
	}
	if !utf8.ValidString(dest) || strings.ContainsFunc(dest, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("destination %q may not contain spaces or control characters", dest)
	}
	return nil
}

func checkHosts(hosts []Host) error {
	seen := map[string]bool{}
	for _, h := range hosts {
		if err := CheckHostName(h.Name); err != nil {
			return fmt.Errorf("[[host]]: %w", err)
		}
		if err := CheckDest(h.Dest); err != nil {
			return fmt.Errorf("[[host]] %s: %w", h.Name, err)
		}
		if seen[h.Name] {
			return fmt.Errorf("[[host]] %s is listed twice", h.Name)
		}
		seen[h.Name] = true
	}
	return nil
}

// PutHost records h in the config file at path: its `[[host]]` table is
// replaced where it stands, or appended. The rest of the file, comments
// included, is kept byte for byte; the result must load with exactly the
// hosts expected, or nothing is written.
func PutHost(path string, h Host) error {
	if err := CheckHostName(h.Name); err != nil {
		return err
	}
	if err := CheckDest(h.Dest); err != nil {
		return err
	}
	block := fmt.Sprintf("[[host]]\nname = %s\ndest = %s\n", tomlString(h.Name), tomlString(h.Dest))
	if h.Muster != "" {
		block += fmt.Sprintf("muster = %s\n", tomlString(h.Muster))
	}
	return editHosts(path, h.Name, func(old []Host) []Host {
		i := slices.IndexFunc(old, func(o Host) bool { return o.Name == h.Name })
		if i < 0 {
			return append(old, h)
		}
		old = slices.Clone(old)
		old[i] = h
		return old
	}, block)
}

// RemoveHost deletes the `[[host]]` table of name from the file at path.
func RemoveHost(path, name string) error {
	return editHosts(path, name, func(old []Host) []Host {
		return slices.DeleteFunc(slices.Clone(old), func(o Host) bool { return o.Name == name })
	}, "")
}

// editHosts replaces name's `[[host]]` table with block (appending block
// when there is none) and checks that the result loads as want(before).
func editHosts(path, name string, want func([]Host) []Host, block string) error {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read config %s: %w", path, err)
	}
	before, err := Load(path)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(b), "\n")
	start, end := findHostTable(lines, name)
	var out string
	if start < 0 {
		out = string(b)
		if block != "" {
			if out != "" && !strings.HasSuffix(out, "\n") {
				out += "\n"
			}
			if out != "" {
				out += "\n"
			}
			out += block
		}
	} else {
		out = strings.Join(lines[:start], "") + block + strings.Join(lines[end:], "")
	}
	var after struct {
		Hosts []Host `toml:"host"`
	}
	if err := toml.Unmarshal([]byte(out), &after); err != nil || !slices.Equal(after.Hosts, want(before.Hosts)) {
		return fmt.Errorf("config %s: cannot edit its [[host]] tables safely; edit the file by hand", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create config dir: %w", err)
	}
	mode := os.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config.toml.*")
	if err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(out); err != nil {
		tmp.Close()
		return fmt.Errorf("write config: %w", err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("write config: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	return nil
}

// findHostTable returns the line range [start, end) of the `[[host]]`
// table whose name is name, or -1, -1. A table runs from its header to
// the next header line.
func findHostTable(lines []string, name string) (int, int) {
	isHeader := func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "[") }
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "[[host]]" {
			continue
		}
		end := i + 1
		for end < len(lines) && !isHeader(lines[end]) {
			end++
		}
		var one struct {
			Hosts []Host `toml:"host"`
		}
		if toml.Unmarshal([]byte(strings.Join(lines[i:end], "")), &one) == nil && len(one.Hosts) == 1 && one.Hosts[0].Name == name {
			return i, end
		}
		i = end - 1
	}
	return -1, -1
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
