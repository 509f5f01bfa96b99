package emulator

import (
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// state is what a snapshot needs and x/vt does not expose: margins, the
// saved cursor, modes, cursor style and keyboard protocols. It is recorded
// by handlers that run before x/vt's own (they return false, so x/vt still
// acts on every sequence) and by x/vt's mode callbacks.
type state struct {
	dec  map[int]bool // DEC private modes by number
	ansi map[int]bool // ANSI modes by number
	// margins per screen (0 main, 1 alternate); zero means the full screen.
	margins [2]margins
	saved   [2]*savedCursor
	// decscusr is the last cursor style parameter (CSI Ps SP q).
	decscusr int
	// kitty is the kitty keyboard flags stack; kitty[0] is the base.
	kitty []int
	// modifyOtherKeys is xterm's CSI > 4 ; n m level.
	modifyOtherKeys int
}

type margins struct{ top, bottom int } // 0-based top, exclusive bottom

type savedCursor struct{ x, y int }

// maxKitty bounds the kitty flags stack as kitty itself does.
const maxKitty = 16

func (s *state) reset() {
	// The defaults x/vt starts with but announces through no callback.
	s.dec = map[int]bool{7: true, 25: true}
	s.ansi = map[int]bool{}
	s.margins = [2]margins{}
	s.saved = [2]*savedCursor{}
	s.decscusr = 0
	s.kitty = []int{0}
	s.modifyOtherKeys = 0
}

func (t *vtTerminal) screen() int {
	if t.emu.IsAltScreen() {
		return 1
	}
	return 0
}

func (t *vtTerminal) saveCursor() {
	pos := t.emu.CursorPosition()
	t.st.saved[t.screen()] = &savedCursor{pos.X, pos.Y}
}

// track installs the recording handlers and callbacks.
func (t *vtTerminal) track() {
	e := t.emu
	e.SetCallbacks(vt.Callbacks{
		EnableMode:  func(m ansi.Mode) { t.setMode(m, true) },
		DisableMode: func(m ansi.Mode) { t.setMode(m, false) },
	})
	e.RegisterEscHandler('c', func() bool { t.st.reset(); return false }) // RIS (x/vt keeps the history too)
	e.RegisterCsiHandler('J', func(params ansi.Params) bool {
		if n, _, _ := params.Param(0, 0); n == 3 { // ED 3: erase the saved lines
			t.hist.clear()
		}
		return false
	})
	e.RegisterEscHandler('7', func() bool { t.saveCursor(); return false })
	e.RegisterCsiHandler('s', func(ansi.Params) bool {
		if !t.st.dec[int(ansi.ModeLeftRightMargin)] {
			t.saveCursor()
		}
		return false
	})
	e.RegisterCsiHandler(ansi.Command('?', 0, 'h'), func(params ansi.Params) bool {
		// ?1049h saves the main screen's cursor before switching, which
		// the mode callback, called after the switch, cannot see.
		for _, p := range params {
			if p.Param(0) == 1049 && !t.emu.IsAltScreen() {
				t.saveCursor()
			}
		}
		return false
	})
	e.RegisterCsiHandler('r', func(params ansi.Params) bool {
		// The same arithmetic as x/vt's DECSTBM, which keeps no accessor.
		top, _, _ := params.Param(0, 1)
		top = max(top, 1)
		height := e.Height()
		bottom, _, _ := params.Param(1, height)
		if bottom < 1 {
			bottom = height
		}
		if top < bottom {
			m := margins{top - 1, bottom}
			if m.top == 0 && m.bottom >= height {
				m = margins{}
			}
			t.st.margins[t.screen()] = m
		}
		return false
	})
	e.RegisterCsiHandler(ansi.Command(0, ' ', 'q'), func(params ansi.Params) bool {
		t.st.decscusr, _, _ = params.Param(0, 0)
		return false
	})
	e.RegisterCsiHandler(ansi.Command('>', 0, 'u'), func(params ansi.Params) bool {
		flags, _, _ := params.Param(0, 0)
		if len(t.st.kitty) > maxKitty {
			t.st.kitty = append(t.st.kitty[:1], t.st.kitty[2:]...)
		}
		t.st.kitty = append(t.st.kitty, flags)
		return false
	})
	e.RegisterCsiHandler(ansi.Command('<', 0, 'u'), func(params ansi.Params) bool {
		n, _, _ := params.Param(0, 1)
		n = max(n, 1)
		t.st.kitty = t.st.kitty[:max(1, len(t.st.kitty)-n)]
		return false
	})
	e.RegisterCsiHandler(ansi.Command('=', 0, 'u'), func(params ansi.Params) bool {
		flags, _, _ := params.Param(0, 0)
		mode, _, _ := params.Param(1, 1)
		top := &t.st.kitty[len(t.st.kitty)-1]
		switch mode {
		case 1:
			*top = flags
		case 2:
			*top |= flags
		case 3:
			*top &^= flags
		}
		return false
	})
	e.RegisterCsiHandler(ansi.Command('>', 0, 'm'), func(params ansi.Params) bool {
		if res, _, _ := params.Param(0, 0); res == 4 {
			t.st.modifyOtherKeys, _, _ = params.Param(1, 0)
		}
		return false
	})
}

func (t *vtTerminal) setMode(m ansi.Mode, on bool) {
	switch m := m.(type) {
	case ansi.DECMode:
		t.st.dec[int(m)] = on
		if int(m) == 1048 && on {
			t.saveCursor()
		}
	case ansi.ANSIMode:
		t.st.ansi[int(m)] = on
	}
}
