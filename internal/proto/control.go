package proto

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ControlVersion is bumped when control.sock changes incompatibly.
const ControlVersion = 1

// MaxControlRequest bounds one JSON request line on control.sock.
const MaxControlRequest = 1 << 20

// Request is one JSON line on control.sock. Most ops get one Response and the
// connection may carry further requests; "attach" switches the connection to
// binary frames and "wait"/"watch" stream Responses until done.
type Request struct {
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Response answers a Request.
type Response struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Error is a failure the CLI can show as-is: a stable code and a one-line
// message, with an optional hint saying what to do.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Stable control error codes.
const (
	CodeBadRequest  = "bad_request"
	CodeNotFound    = "not_found"
	CodeConflict    = "conflict"
	CodeInvalid     = "invalid"
	CodeInternal    = "internal"
	CodeUnsupported = "unsupported"
	CodeExited      = "exited"
	// CodeForbidden refuses a request because of who sent it: a process
	// inside a Muster pane asked to drive another pane, to stop the
	// daemon, to acknowledge every attention item, to resume or to
	// attach. Run the command from a terminal outside Muster.
	CodeForbidden = "forbidden"
	// CodeUnauthorized refuses a request that needs a pane's event
	// capability (native_capture) and did not carry the right one.
	CodeUnauthorized = "unauthorized"
	// CodeBusy means the daemon holds as many control connections as it
	// allows and none of them could be dropped; retry shortly.
	CodeBusy = "busy"
)

// Errorf builds an *Error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Attach frames. After a successful attach Response, both directions carry
// frames: a type byte, a big-endian uint32 length, then the payload. PTY bytes
// travel raw, never inside JSON.
const (
	FrameInput    byte = 1 // client → daemon: keystrokes
	FrameResize   byte = 2 // client → daemon: uint16 cols, uint16 rows
	FrameDetach   byte = 3 // client → daemon: leaving
	FrameOutput   byte = 16
	FrameSnapshot byte = 17 // daemon → client: full repaint; replaces the screen
	FrameExit     byte = 18 // daemon → client: JSON {"exit_code":N}; pane closed
)

// MaxFrame bounds a frame payload; larger frames are a protocol error.
const MaxFrame = 4 << 20

// ErrFrameTooLarge is returned for a frame over MaxFrame.
var ErrFrameTooLarge = errors.New("frame too large")

// WriteFrame writes one frame.
func WriteFrame(w io.Writer, typ byte, payload []byte) error {
	var hdr [5]byte
	hdr[0] = typ
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(payload)))
	if len(payload) <= 4096 {
		// Small frames (keystrokes) go out in one write.
		var small [5 + 4096]byte
		n := copy(small[:], hdr[:])
		n += copy(small[n:], payload)
		_, err := w.Write(small[:n])
		return err
	}
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// ReadFrame reads one frame, reusing buf when it is large enough.
func ReadFrame(r io.Reader, buf []byte) (typ byte, payload []byte, err error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > MaxFrame {
		return 0, nil, ErrFrameTooLarge
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return 0, nil, err
	}
	return hdr[0], buf, nil
}

// ResizePayload encodes a size for FrameResize.
func ResizePayload(cols, rows int) []byte {
	var p [4]byte
	binary.BigEndian.PutUint16(p[0:], uint16(cols))
	binary.BigEndian.PutUint16(p[2:], uint16(rows))
	return p[:]
}

// ParseResize decodes a FrameResize payload.
func ParseResize(p []byte) (cols, rows int, err error) {
	if len(p) != 4 {
		return 0, 0, errors.New("resize frame must be 4 bytes")
	}
	return int(binary.BigEndian.Uint16(p[0:])), int(binary.BigEndian.Uint16(p[2:])), nil
}

// NewArgs are the arguments of op "new".
type NewArgs struct {
	Name      string            `json:"name,omitempty"`
	Provider  string            `json:"provider,omitempty"`
	Dir       string            `json:"dir"`
	Cmd       string            `json:"cmd,omitempty"`        // shell command (--cmd)
	ResumeCmd string            `json:"resume_cmd,omitempty"` // custom resume template
	Args      []string          `json:"args,omitempty"`       // after --
	Env       map[string]string `json:"env,omitempty"`        // the caller's environment (SHELL, PATH, …)
	Cols      int               `json:"cols,omitempty"`
	Rows      int               `json:"rows,omitempty"`
}

// Target names a session for ops that act on one.
type Target struct {
	Name string `json:"name"`
}

// SendArgs are the arguments of op "send".
type SendArgs struct {
	Name  string `json:"name"`
	Text  string `json:"text"`
	Enter bool   `json:"enter,omitempty"`
}

// CaptureArgs are the arguments of op "capture".
type CaptureArgs struct {
	Name       string `json:"name"`
	ANSI       bool   `json:"ansi,omitempty"`
	Scrollback int    `json:"scrollback,omitempty"`
}

// CaptureResult carries the screen text.
type CaptureResult struct {
	Text string `json:"text"`
}

// RenameArgs are the arguments of op "rename".
type RenameArgs struct {
	Name    string `json:"name"`
	NewName string `json:"new_name"`
}

// AttachArgs are the arguments of op "attach".
type AttachArgs struct {
	Name     string `json:"name"`
	Cols     int    `json:"cols"`
	Rows     int    `json:"rows"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// SessionInfo is one row of `muster ls --json`. Fields are only ever added.
type SessionInfo struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Provider  string `json:"provider"`
	State     string `json:"state"` // running | exited | restorable
	PID       int    `json:"pid"`
	CWD       string `json:"cwd"`
	ExitCode  *int   `json:"exit_code"`
	CreatedAt string `json:"created_at"`
	Command   string `json:"command"`
	SurfaceID string `json:"surface_id"`
	Title     string `json:"title,omitempty"`
	Reason    string `json:"reason,omitempty"`

	NativeSessionID string  `json:"native_session_id"`
	NativeConfirmed bool    `json:"native_confirmed"`
	RunState        *string `json:"run_state"`
	RunID           *string `json:"run_id"`
	Attention       int     `json:"attention"`
	LastEventAt     *string `json:"last_event_at"`

	// Activity is what the terminal says the program is doing (seed 000):
	// working | waiting | attention, or "" when it says nothing.
	Activity         string  `json:"activity"`
	ActivitySince    *string `json:"activity_since"`
	ActivityEvidence string  `json:"activity_evidence,omitempty"`
}

// DaemonStatus answers op "status".
type DaemonStatus struct {
	PID       int    `json:"pid"`
	Version   string `json:"version"`
	StartedAt string `json:"started_at"`
	Home      string `json:"home"`
	Sessions  int    `json:"sessions"`
	Panes     int    `json:"panes"`
}
