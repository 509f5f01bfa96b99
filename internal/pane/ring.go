package pane

// ring keeps the last len(buf) bytes of pane output. It is the source of
// truth the emulator is rebuilt from when it falls behind.
type ring struct {
	buf  []byte
	head int // next write position
	full bool
}

func newRing(size int) *ring { return &ring{buf: make([]byte, size)} }

func (r *ring) Write(p []byte) {
	if len(p) >= len(r.buf) {
		copy(r.buf, p[len(p)-len(r.buf):])
		r.head, r.full = 0, true
		return
	}
	n := copy(r.buf[r.head:], p)
	if n < len(p) {
		copy(r.buf, p[n:])
		r.head = len(p) - n
		r.full = true
	} else {
		r.head += n
		if r.head == len(r.buf) {
			r.head, r.full = 0, true
		}
	}
}

// Tail returns a copy of the last n bytes (or fewer if not yet written).
func (r *ring) Tail(n int) []byte {
	size := r.head
	if r.full {
		size = len(r.buf)
	}
	n = min(n, size)
	out := make([]byte, n)
	start := r.head - n
	if start >= 0 {
		copy(out, r.buf[start:r.head])
		return out
	}
	k := copy(out, r.buf[len(r.buf)+start:])
	copy(out[k:], r.buf[:r.head])
	return out
}
