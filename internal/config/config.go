// Package config loads config.toml. Everything has a default: Muster works
// with no config file at all.
package config

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

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
	// NotifyCommand is the older spelling of Notify.Command, an argument
	// list with {title}, {body}, {session}, {reason} and {id}; ["none"]
	// turns notifications off. It is still read; Load refuses a file that
	// sets both.
	NotifyCommand []string   `toml:"notify_command"`
	Notify        Notify     `toml:"notify"`
	Launchers     []Launcher `toml:"launcher"`
	Limits        Limits     `toml:"limits"`
	Cost          Cost       `toml:"cost"`
	Worktree      Worktree   `toml:"worktree"`
	UsageLimit    UsageLimit `toml:"usage_limit"`
	// SSH names the ssh binary and config file hosts are reached with.
	SSH SSH `toml:"ssh"`
	// Hosts are the machines `muster host add` recorded, one
	// `[[host]]` table each (hosts.go).
	Hosts []Host `toml:"host"`
}

// UsageLimit says what Muster does when an agent stops at its provider's
// usage limit.
type UsageLimit struct {
	// Continue is the default of `muster new --continue-after-limit`:
	// send the provider's continue once the limit resets.
	Continue bool `toml:"continue"`
	// Skew is how long after the reset time the continue goes (a Go
	// duration, "30s" when unset): the provider's clock and Muster's
	// differ, and the agent rounds the time it prints.
	Skew string `toml:"skew"`
	// SkewDuration is Skew parsed by Load.
	SkewDuration time.Duration `toml:"-"`
}

// DefaultLimitSkew is UsageLimit.Skew's default.
const DefaultLimitSkew = 30 * time.Second

// Worktree configures `muster new --worktree`.
type Worktree struct {
	// Dir is where worktrees go, one directory per branch inside it;
	// {repo} is the repository's name and a leading ~/ the home. Unset:
	// beside the repository, /src/app → /src/app.worktrees/BRANCH.
	Dir string `toml:"dir"`
}

// Cost is how the daemon measures what each pane's process tree costs
// (memory, CPU) and when a tree's memory raises an attention item.
type Cost struct {
	// Interval is how often every pane is sampled, as a Go duration
	// ("5s" when unset, at least 1s); "off" samples nothing.
	Interval string `toml:"interval"`
	// MemoryCeiling is a size ("2GiB", "1500MB", bytes) past which any
	// pane's tree raises an attention item; unset, none.
	MemoryCeiling string `toml:"memory_ceiling"`
	// Sessions are ceilings of their own by session name, over the
	// global one.
	Sessions map[string]string `toml:"sessions"`

	// Parsed by Load.
	IntervalDuration   time.Duration    `toml:"-"` // 0: sampling off
	MemoryCeilingBytes int64            `toml:"-"`
	SessionCeilings    map[string]int64 `toml:"-"`
}

// DefaultCostInterval is how often panes are sampled when config.toml
// does not say: a sample of 50 panes costs about a millisecond.
const DefaultCostInterval = 5 * time.Second

// ParseSize reads a byte size: a whole number with an optional unit, B,
// KB/MB/GB/TB (powers of 1000) or KiB/MiB/GiB/TiB and K/M/G/T (powers of
// 1024).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional unit (512MiB, 2GB)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	units := map[string]int64{"": 1, "B": 1,
		"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
		"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40,
		"KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40}
	mul, ok := units[strings.ToUpper(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (want B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)", s, strings.TrimSpace(t[i:]))
	}
	if n > (1<<62)/mul {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return n * mul, nil
}

// parse fills the fields Load derives from the file.
func (c *Cost) parse() error {
	switch c.Interval {
	case "":
		c.IntervalDuration = DefaultCostInterval
	case "off":
		c.IntervalDuration = 0
	default:
		d, err := time.ParseDuration(c.Interval)
		if err != nil || d < time.Second {
			return fmt.Errorf("cost.interval %q: want a duration of 1s or more (\"5s\") or \"off\"", c.Interval)
		}
		c.IntervalDuration = d
	}
	if c.MemoryCeiling != "" {
		n, err := ParseSize(c.MemoryCeiling)
		if err != nil || n <= 0 {
			return fmt.Errorf("cost.memory_ceiling: %v", cmpErr(err, "want more than 0 bytes"))
		}
		c.MemoryCeilingBytes = n
	}
	c.SessionCeilings = nil
	for name, v := range c.Sessions {
		n, err := ParseSize(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("cost.sessions.%s: %v", name, cmpErr(err, "want more than 0 bytes"))
		}
		if c.SessionCeilings == nil {
			c.SessionCeilings = map[string]int64{}
		}
		c.SessionCeilings[name] = n
	}
	return nil
}

// cmpErr is err's text, or why when err is nil.
func cmpErr(err error, why string) string {
	if err != nil {
		return err.Error()
	}
	return why
}

// Notify says how a new attention item reaches the user: a command the
// daemon runs, and what an attached client and the dashboard do.
type Notify struct {
	// Command is a shell command (sh -c) run for each new attention
	// item, with the item in its environment (events.NotifyEnv); "none" runs
	// nothing. Unset, notify_command or the platform's desktop
	// notification (notify-send, osascript) runs.
	Command string `toml:"command"`
	// Bell rings the outer terminal's bell when another session's item
	// opens while attached, and in the dashboard (true when unset).
	Bell *bool `toml:"bell"`
	// Message shows one line about another session's item over the
	// bottom row of an attached client for MessageSeconds (true when
	// unset; 5 seconds, at most 60).
	Message        *bool `toml:"message"`
	MessageSeconds int   `toml:"message_seconds"`
	// Terminal sends a desktop notification through the outer terminal
	// while attached: "osc9" (iTerm2, WezTerm, kitty, Windows Terminal,
	// foot), "osc777" (urxvt, VTE terminals, Ghostty) or "off" (the
	// default).
	Terminal string `toml:"terminal"`
}

// DefaultNoticeSeconds is how long an attached client shows a notice.
const DefaultNoticeSeconds = 5

// NotifyBell reports Notify.Bell, true when unset.
func (c Config) NotifyBell() bool { return c.Notify.Bell == nil || *c.Notify.Bell }

// NotifyMessage reports Notify.Message, true when unset.
func (c Config) NotifyMessage() bool { return c.Notify.Message == nil || *c.Notify.Message }

// NoticeSeconds is how long an attached client shows a notice.
func (c Config) NoticeSeconds() int {
	if c.Notify.MessageSeconds <= 0 {
		return DefaultNoticeSeconds
	}
	return min(c.Notify.MessageSeconds, 60)
}

// NotifyTerminal is the outer terminal's notification sequence: "osc9",
// "osc777" or "" for none.
func (c Config) NotifyTerminal() string {
	if c.Notify.Terminal == "off" {
		return ""
	}
	return c.Notify.Terminal
}

// NotifyArgv is the command the daemon runs per new attention item, for
// events.Config.NotifyCommand: nil for the platform's default, empty for
// none.
func (c Config) NotifyArgv() []string {
	switch cmd := c.Notify.Command; {
	case cmd == "none":
		return []string{}
	case cmd != "":
		return []string{"/bin/sh", "-c", cmd}
	case len(c.NotifyCommand) == 1 && c.NotifyCommand[0] == "none":
		return []string{}
	}
	return c.NotifyCommand
}

// Limits bound what panes may cost the daemon, which holds every agent:
// a request past one is refused in one line and changes nothing.
type Limits struct {
	// PanesPerPane is how many live panes a process inside a pane may
	// have started (an agent starting agents); users outside panes are
	// not limited by it.
	PanesPerPane int `toml:"panes_per_pane"`
	// EmulatorCells bounds columns × rows summed over every live pane:
	// a pane's emulator keeps about 110 bytes a cell per screen in use
	// (an idle 1000×1000 pane took 113 MB, both screens 224 MB), so the
	// default 4,000,000 is 0.45–0.9 GB, or 400 panes of 200×50.
	EmulatorCells int64 `toml:"emulator_cells"`
}

// Default limits.
const (
	DefaultPanesPerPane  = 20
	DefaultEmulatorCells = 4_000_000
)

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
	return Config{Term: "xterm-256color", Scrollback: 10000, ScrollbackBytes: DefaultScrollbackBytes, ScrollbackTotalBytes: DefaultScrollbackTotalBytes, WindowSize: "latest", Keys: Keys{Detach: DefaultDetachKey, Copy: DefaultCopyKey},
		Limits:     Limits{PanesPerPane: DefaultPanesPerPane, EmulatorCells: DefaultEmulatorCells},
		Cost:       Cost{IntervalDuration: DefaultCostInterval},
		UsageLimit: UsageLimit{SkewDuration: DefaultLimitSkew}}
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
	switch {
	case c.Limits.PanesPerPane < 0:
		return Default(), fmt.Errorf("config %s: limits.panes_per_pane %d: want a count of 1 or more", path, c.Limits.PanesPerPane)
	case c.Limits.EmulatorCells < 0:
		return Default(), fmt.Errorf("config %s: limits.emulator_cells %d: want a count of 1 or more", path, c.Limits.EmulatorCells)
	}
	if c.Limits.PanesPerPane == 0 {
		c.Limits.PanesPerPane = DefaultPanesPerPane
	}
	if c.Limits.EmulatorCells == 0 {
		c.Limits.EmulatorCells = DefaultEmulatorCells
	}
	if d, ok := strings.CutPrefix(c.Worktree.Dir, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return Default(), fmt.Errorf("config %s: worktree.dir: %v", path, err)
		}
		c.Worktree.Dir = home + "/" + d
	}
	if c.Worktree.Dir != "" && !strings.HasPrefix(c.Worktree.Dir, "/") {
		return Default(), fmt.Errorf("config %s: worktree.dir %q: want an absolute path or one under ~/", path, c.Worktree.Dir)
	}
	c.UsageLimit.SkewDuration = DefaultLimitSkew
	if c.UsageLimit.Skew != "" {
		d, err := time.ParseDuration(c.UsageLimit.Skew)
		if err != nil || d < 0 || d > time.Hour {
			return Default(), fmt.Errorf("config %s: usage_limit.skew %q: want a duration from 0s to 1h", path, c.UsageLimit.Skew)
		}
		c.UsageLimit.SkewDuration = d
	}
	if err := c.Cost.parse(); err != nil {
		return Default(), fmt.Errorf("config %s: %w", path, err)
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
	if c.Notify.Command != "" && len(c.NotifyCommand) > 0 {
		return Default(), fmt.Errorf("config %s: both notify.command and notify_command are set: keep notify.command", path)
	}
	switch c.Notify.Terminal {
	case "", "off", "osc9", "osc777":
	default:
		return Default(), fmt.Errorf("config %s: notify.terminal %q: want osc9, osc777 or off", path, c.Notify.Terminal)
	}
	if c.Notify.MessageSeconds < 0 {
		return Default(), fmt.Errorf("config %s: notify.message_seconds %d: want a positive number of seconds", path, c.Notify.MessageSeconds)
	}
	return c, nil
}
