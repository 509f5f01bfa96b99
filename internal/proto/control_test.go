package proto

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	big := bytes.Repeat([]byte("x"), 10000)
	for _, p := range [][]byte{nil, []byte("a"), big} {
		if err := WriteFrame(&buf, FrameOutput, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range [][]byte{nil, []byte("a"), big} {
		typ, got, err := ReadFrame(&buf, nil)
		if err != nil || typ != FrameOutput || !bytes.Equal(got, want) {
			t.Fatalf("ReadFrame = %d, %d bytes, %v", typ, len(got), err)
		}
	}
	huge := []byte{FrameInput, 0xff, 0xff, 0xff, 0xff}
	if _, _, err := ReadFrame(bytes.NewReader(huge), nil); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("oversized frame: %v", err)
	}
}

func FuzzReadFrame(f *testing.F) {
	var seed bytes.Buffer
	WriteFrame(&seed, FrameResize, ResizePayload(80, 24))
	WriteFrame(&seed, FrameInput, []byte("ls\r"))
	f.Add(seed.Bytes())
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		for {
			typ, p, err := ReadFrame(r, nil)
			if err != nil {
				return
			}
			if len(p) > MaxFrame {
				t.Fatalf("frame of %d bytes accepted", len(p))
			}
			if typ == FrameResize {
				ParseResize(p)
			}
			var out bytes.Buffer
			WriteFrame(&out, typ, p)
			typ2, p2, err := ReadFrame(&out, nil)
			if err != nil || typ2 != typ || !bytes.Equal(p, p2) {
				t.Fatalf("re-encoding changed the frame")
			}
		}
	})
}

func TestEscapeTime(t *testing.T) {
	for ms, want := range map[int]time.Duration{0: DefaultEscapeTime, -1: 0, 25: 25 * time.Millisecond, 100000: MaxEscapeTimeMS * time.Millisecond} {
		if got := EscapeTime(ms); got != want {
			t.Errorf("EscapeTime(%d) = %v, want %v", ms, got, want)
		}
	}
}
