// Package config loads config.toml. Everything has a default: Muster works
// with no config file at all.
package config

import (
	"errors"
	"fmt"
	"os"

	"github.com/pelletier/go-toml/v2"
)

// Config is the user's config.toml.
type Config struct {
	// Term is the TERM value panes get.
	Term string `toml:"term"`
	// Scrollback is each pane's history, in lines.
	Scrollback int `toml:"scrollback"`
	// ScrollbackBytes bounds each pane's history in bytes (its text with
	// styles, plus 16 bytes a line); ScrollbackTotalBytes bounds all
	// panes' together, taking the oldest lines of the largest first.
	ScrollbackBytes      int   `toml:"scrollback_bytes"`
	ScrollbackTotalBytes int64 `toml:"scrollback_total_bytes"`
	// WindowSize is how a pane's size follows several attached clients,
	// as tmux's window-size option: "latest" (the default: the client that
	// typed last), "smallest" or "largest" (of the writable clients).
	WindowSize string `toml:"window_size"`
	// Mouse lets an attached client take the mouse wheel into copy mode
	// while the pane's program has not asked for mouse reports (true when
	// unset). Off, the terminal's own selection works without Shift.
	Mouse *bool `toml:"mouse"`
	// EscapeTime is how many milliseconds a key read that ends in ESC
	// (or another unfinished sequence) waits for the rest before it goes
	// to the pane as typed, as tmux's escape-time: 10 when unset, 0 for
	// no wait, at most 500.
	EscapeTime *int `toml:"escape_time"`
	Keys       Keys `toml:"keys"`
	// NotifyCommand runs for each new attention item; empty means the
	// platform's desktop notification, ["none"] turns it off.
	NotifyCommand []string   `toml:"notify_command"`
	Launchers     []Launcher `toml:"launcher"`
	// SSH names the ssh binary and config file hosts are reached with.
	SSH SSH `toml:"ssh"`
	// Hosts are the machines `muster host add` recorded, one
	// `[[host]]` table each (hosts.go).
	Hosts []Host `toml:"host"`
}

// Keys configures attach key bindings.
type Keys struct {
	// Detach is the key that leaves an attached pane: "ctrl-\" by default.
	Detach string `toml:"detach"`
	// Copy enters copy mode (history, search, copy): "ctrl-^" by default.
	Copy string `toml:"copy"`
}

// Launcher is a user-defined `[[launcher]]`: `muster new NAME` runs Command
// and resumes with Resume.
type Launcher struct {
	Name    string `toml:"name"`
	Command string `toml:"command"`
	Resume  string `toml:"resume"`
}

// Scrollback byte bounds: 4 MiB holds 10,000 full 200-column lines of
// plain text; 512 MiB is 128 such panes.
const (
	DefaultScrollbackBytes      = 4 << 20
	DefaultScrollbackTotalBytes = 512 << 20
)

// DefaultCopyKey is Ctrl-^ (Ctrl-6 on most keyboards): bound by neither
// the coding agents nor the shells' default key maps.
const DefaultCopyKey = "ctrl-^"

// DefaultDetachKey is Ctrl-\: dtach's choice, and a key no coding agent binds.
const DefaultDetachKey = `ctrl-\`

// EscapeTimeMS is EscapeTime as proto.AttachArgs carries it: 0 for the
// default, negative for no wait.
func (c Config) EscapeTimeMS() int {
	switch {
	case c.EscapeTime == nil:
		return 0
	case *c.EscapeTime <= 0:
		return -1
	}
	return *c.EscapeTime
}

// MouseOn reports the Mouse setting, true when unset.
func (c Config) MouseOn() bool { return c.Mouse == nil || *c.Mouse }

// Default returns the built-in configuration.
func Default() Config {
	return Config{Term: "xterm-256color", Scrollback: 10000, ScrollbackBytes: DefaultScrollbackBytes, ScrollbackTotalBytes: DefaultScrollbackTotalBytes, WindowSize: "latest", Keys: Keys{Detach: DefaultDetachKey, Copy: DefaultCopyKey}}
}

// Load reads path; a missing file gives the defaults.
func Load(path string) (Config, error) {
	c := Default()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read config %s: %w", path, err)
	}
	if err := toml.Unmarshal(b, &c); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return Default(), fmt.Errorf("config %s:%d:%d: %s", path, row, col, de.Error())
		}
		return Default(), fmt.Errorf("config %s: %w", path, err)
	}
	if c.Term == "" {
		c.Term = "xterm-256color"
	}
	if c.Scrollback <= 0 {
		c.Scrollback = 10000
	}
	if c.ScrollbackBytes <= 0 {
		c.ScrollbackBytes = DefaultScrollbackBytes
	}
	if c.ScrollbackTotalBytes <= 0 {
		c.ScrollbackTotalBytes = DefaultScrollbackTotalBytes
	}
	switch c.WindowSize {
	case "":
		c.WindowSize = "latest"
	case "latest", "smallest", "largest":
	default:
		return Default(), fmt.Errorf("config %s: window_size %q: want latest, smallest or largest", path, c.WindowSize)
	}
	if err := checkHosts(c.Hosts); err != nil {
		return Default(), fmt.Errorf("config %s: %w", path, err)
	}
	if c.Keys.Detach == "" {
		c.Keys.Detach = DefaultDetachKey
	}
	if _, err := ParseKey(c.Keys.Detach); err != nil {
		return Default(), fmt.Errorf("config %s: keys.detach: %w", path, err)
	}
	if c.Keys.Copy == "" {
		c.Keys.Copy = DefaultCopyKey
	}
	if _, err := ParseKey(c.Keys.Copy); err != nil {
		return Default(), fmt.Errorf("config %s: keys.copy: %w", path, err)
	}
	return c, nil
}
