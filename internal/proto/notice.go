package proto

// AttachNotice is how an attached client shows another session's new
// attention item (config.Notify): a line over the bottom row for Seconds,
// the outer terminal's bell, and a desktop notification through the outer
// terminal (Terminal: "osc9", "osc777" or "" for none). The daemon draws
// it itself on a terminal it holds, and repaints the row when the time is
// up, for a client that relays too.
type AttachNotice struct {
	Line     bool   `json:"line,omitempty"`
	Seconds  int    `json:"seconds,omitempty"`
	Bell     bool   `json:"bell,omitempty"`
	Terminal string `json:"terminal,omitempty"`
}

// MaxNoticeSeconds bounds AttachNotice.Seconds.
const MaxNoticeSeconds = 60

// Notice is a FrameNotice's payload: an attention item of a session other
// than the attached one has opened. Title and Body are safe to print
// (termtext.Line).
type Notice struct {
	ItemID  int64  `json:"item_id"`
	Session string `json:"session"`
	Reason  string `json:"reason"`
	Title   string `json:"title"` // "codex-1 needs approval"
	Body    string `json:"body"`  // the item's message
}
