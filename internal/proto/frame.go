package proto

import (
	"encoding/binary"
	"errors"
	"io"
)

// Attach frames. After a successful attach Response, both directions carry
// frames: a type byte, a big-endian uint32 length, then the payload. PTY bytes
// travel raw, never inside JSON.
const (
	FrameInput    byte = 1 // client → daemon: keystrokes
	FrameResize   byte = 2 // client → daemon: uint16 cols, uint16 rows
	FrameDetach   byte = 3 // client → daemon: leaving
	FrameResume   byte = 4 // client → daemon: take the passed terminal back after HandbackOpen; payload: what went wrong, if anything
	FrameOutput   byte = 16
	FrameSnapshot byte = 17 // daemon → client: full repaint; replaces the screen
	FrameExit     byte = 18 // daemon → client: JSON {"exit_code":N}; pane closed
	FrameHandback byte = 19 // daemon → client: JSON Handback; the terminal is the client's again
	FrameNotice   byte = 20 // daemon → client: JSON Notice; another session's new attention item
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
