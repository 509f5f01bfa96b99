package proto

// The size rule. Every terminal size that reaches the daemon (op "new",
// "attach" and "resume" arguments, attach resize frames) is checked here,
// and the pane checks again with the same rule so no path can bypass it:
//
//   - Columns and rows are each 1–MaxTermSize. A pane's emulator keeps
//     cols×rows cells per screen, so a size of 5000×5000 from any local
//     process could exhaust the daemon's memory and take every pane down.
//   - 0×0 in a request means "unknown": a new pane gets DefaultCols×
//     DefaultRows, an attach keeps the pane's size.
//   - A request with any other size (negative, one side zero, over the
//     maximum) is refused with CodeInvalid and changes nothing (CheckSize).
//   - A resize frame has no reply, so one out of range is ignored
//     (ValidSize), never clamped: the pane keeps its size.
//   - The CLI reads the user's real terminal, which may be larger, and
//     clamps it into range before sending (ClampSize), so a huge terminal
//     still works, showing the top-left MaxTermSize×MaxTermSize.
const (
	MaxTermSize = 1000
	DefaultCols = 80
	DefaultRows = 24
)

// ValidSize reports whether cols×rows is a size a pane may have.
func ValidSize(cols, rows int) bool {
	return cols >= 1 && cols <= MaxTermSize && rows >= 1 && rows <= MaxTermSize
}

// CheckSize checks a size from a request: nil when it is valid or 0×0
// (unknown), else a CodeInvalid error naming the size and the range.
func CheckSize(cols, rows int) error {
	if (cols == 0 && rows == 0) || ValidSize(cols, rows) {
		return nil
	}
	return Errorf(CodeInvalid, "terminal size %dx%d is out of range: columns and rows must be 1–%d", cols, rows, MaxTermSize)
}

// ClampSize brings any size into range: a side that is zero or negative
// becomes the default, one over MaxTermSize becomes MaxTermSize.
func ClampSize(cols, rows int) (int, int) {
	return clamp(cols, DefaultCols), clamp(rows, DefaultRows)
}

func clamp(n, def int) int {
	switch {
	case n < 1:
		return def
	case n > MaxTermSize:
		return MaxTermSize
	}
	return n
}
