package daemon

import (
	"fmt"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/panepeer"
	"github.com/musterhq/muster/internal/proto"
)

// The daemon holds every agent's pane, so one caller must not be able to
// exhaust it: a process inside a pane may start only so many live panes,
// and every live pane's emulator together may hold only so many cells
// (issue 22: five 1000×1000 panes took the daemon from 25 MB to 588 MB).
// A launch reserves its cells under d.mu before it starts, so concurrent
// `new`s and resumes cannot all pass the same check.

func (d *Daemon) panesPerPane() int {
	if d.opts.PanesPerPane > 0 {
		return d.opts.PanesPerPane
	}
	return config.DefaultPanesPerPane
}

func (d *Daemon) emulatorCells() int64 {
	if d.opts.EmulatorCells > 0 {
		return d.opts.EmulatorCells
	}
	return config.DefaultEmulatorCells
}

// requestCells is what a pane of cols×rows costs; 0×0 gets the default size.
func requestCells(cols, rows int) int64 {
	if cols == 0 && rows == 0 {
		cols, rows = proto.DefaultCols, proto.DefaultRows
	}
	return int64(cols) * int64(rows)
}

// liveLocked reports whether s holds a pane (running) or a launch is
// reserving one, and the cells it counts. d.mu is held.
func liveLocked(s *session) (bool, int64) {
	if s.reserved > 0 {
		return true, s.reserved
	}
	if s.pane == nil {
		return false, 0
	}
	if exited, _ := s.pane.Exited(); exited {
		return false, 0
	}
	cols, rows := s.pane.Size()
	return true, int64(cols) * int64(rows)
}

// reserveLocked checks a launch of cols×rows for s against the limits and
// reserves its cells; parent is the session whose pane asks ("" for a
// user outside every pane). The caller clears s.reserved once the pane
// runs or the launch failed. d.mu is held.
func (d *Daemon) reserveLocked(s *session, parent string, cols, rows int) error {
	want := requestCells(cols, rows)
	var used int64
	children := 0
	for _, o := range d.sessions {
		if o == s {
			continue
		}
		live, cells := liveLocked(o)
		if !live {
			continue
		}
		used += cells
		if parent != "" && o.rec.ParentID == parent {
			children++
		}
	}
	if parent != "" && children >= d.panesPerPane() {
		return &proto.Error{Code: proto.CodeLimit,
			Message: fmt.Sprintf("refused: %s already runs %d panes it started, its limit (limits.panes_per_pane in config.toml)", d.paneNameLocked(panepeer.Where{InPane: true, SessionID: parent}), children),
			Hint:    "end one of them (`muster kill NAME`), or raise limits.panes_per_pane"}
	}
	if budget := d.emulatorCells(); used+want > budget {
		if cols == 0 && rows == 0 {
			cols, rows = proto.DefaultCols, proto.DefaultRows
		}
		return &proto.Error{Code: proto.CodeLimit,
			Message: fmt.Sprintf("refused: a %dx%d pane needs %d cells and the live panes hold %d of the %d all panes may have (limits.emulator_cells in config.toml)", cols, rows, want, used, budget),
			Hint:    "ask for a smaller size, end a pane, or raise limits.emulator_cells"}
	}
	s.reserved = want
	return nil
}

// mayGrow reports whether s's pane may take cols×rows: a size no larger
// than the pane's now, or one that keeps every live pane's cells within
// the emulator budget. A resize frame has no reply, so one past the budget
// is ignored, as one out of range is: attaching a huge terminal cannot
// grow the panes past what new refuses.
func (d *Daemon) mayGrow(s *session, cols, rows int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	want := int64(cols) * int64(rows)
	if s.pane != nil {
		if c, r := s.pane.Size(); want <= int64(c)*int64(r) {
			return true
		}
	}
	var used int64
	for _, o := range d.sessions {
		if o == s {
			continue
		}
		if live, cells := liveLocked(o); live {
			used += cells
		}
	}
	return used+want <= d.emulatorCells()
}
