package transcript

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// DefaultMaxLine bounds one JSONL line. Real transcripts carry inline
// images and whole API requests on one line, so the bound is generous; a
// longer line is skipped (LineScanner.TooLong) rather than buffered.
const DefaultMaxLine = 64 << 20

// LineScanner reads newline-separated records without the 64 KiB limit of
// bufio.Scanner and without copying lines that fit in its read buffer.
type LineScanner struct {
	r       *bufio.Reader
	max     int
	line    []byte
	long    []byte
	n       int
	tooLong bool
	err     error
	done    bool
	// off counts the bytes read through the end of the current line;
	// terminated says that line ended with a newline.
	off        int64
	terminated bool
}

// NewLineScanner reads r; lines longer than max bytes (DefaultMaxLine when
// max <= 0) are reported with TooLong and an empty Bytes.
func NewLineScanner(r io.Reader, max int) *LineScanner {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &LineScanner{r: bufio.NewReaderSize(r, bufferSize(r)), max: max}
}

// maxBuffer is the read buffer for inputs of unknown or large size; lines
// longer than the buffer are still read whole, by copying.
const maxBuffer = 256 << 10

// bufferSize fits the read buffer to an input known to be smaller than
// maxBuffer (a regular file's size, a bytes.Reader's length), with room for
// an agent appending to the file meanwhile: most transcripts are small, and
// allocating and clearing 256 KiB for each made parsing them, and fuzzing
// the parsers, several times slower.
func bufferSize(r io.Reader) int {
	n := int64(-1)
	switch v := r.(type) {
	case *os.File:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() {
			n = fi.Size()
		}
	case interface{ Len() int }: // bytes.Reader, strings.Reader, bytes.Buffer
		n = int64(v.Len())
	}
	if n < 0 || n >= maxBuffer-4096 {
		return maxBuffer
	}
	return int(n) + 4096
}

// Scan advances to the next line, reporting false at the end of input or on
// a read error (see Err).
func (s *LineScanner) Scan() bool {
	if s.done {
		return false
	}
	s.tooLong = false
	s.long = s.long[:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		s.off += int64(len(chunk))
		s.terminated = err == nil
		switch {
		case err == nil:
			s.n++
			if len(s.long) > 0 || s.tooLong {
				s.appendLong(chunk)
				s.line = s.long
			} else {
				s.line = chunk
			}
			s.trim()
			return true
		case errors.Is(err, bufio.ErrBufferFull):
			s.appendLong(chunk)
			continue
		case errors.Is(err, io.EOF):
			s.done = true
			if len(chunk) == 0 && len(s.long) == 0 && !s.tooLong {
				return false
			}
			s.n++
			if len(s.long) > 0 || s.tooLong {
				s.appendLong(chunk)
				s.line = s.long
			} else {
				s.line = chunk
			}
			s.trim()
			return true
		default:
			s.done = true
			s.err = err
			return false
		}
	}
}

func (s *LineScanner) appendLong(chunk []byte) {
	if s.tooLong {
		return
	}
	if len(s.long)+len(chunk) > s.max+1 { // +1: the newline itself
		s.tooLong = true
		s.long = s.long[:0]
		return
	}
	s.long = append(s.long, chunk...)
}

func (s *LineScanner) trim() {
	if s.tooLong {
		s.line = nil
		return
	}
	s.line = bytes.TrimSuffix(s.line, []byte{'\n'})
	s.line = bytes.TrimSuffix(s.line, []byte{'\r'})
	if len(s.line) > s.max {
		s.tooLong = true
		s.line = nil
	}
}

// Bytes is the current line without its line ending; it is valid only until
// the next Scan.
func (s *LineScanner) Bytes() []byte { return s.line }

// Line is the 1-based number of the current line.
func (s *LineScanner) Line() int { return s.n }

// TooLong reports whether the current line exceeded the bound and was
// dropped.
func (s *LineScanner) TooLong() bool { return s.tooLong }

// Offset is the number of bytes read through the end of the current line,
// its line ending included.
func (s *LineScanner) Offset() int64 { return s.off }

// Terminated reports whether the current line ended with a newline: the
// last line of a file an agent is still writing may not have yet.
func (s *LineScanner) Terminated() bool { return s.terminated }

// Err is the read error that stopped Scan, if any.
func (s *LineScanner) Err() error { return s.err }

// FeedLines is the reading half of a Follow's Feed: it passes each
// newline-terminated line of r to line, numbered after *lines (which it
// advances), with tooLong for a line over DefaultMaxLine (then raw is
// empty), and returns the bytes of those lines; an unterminated last line
// is left for the next Feed. line must copy what it keeps of raw.
func FeedLines(ctx context.Context, r io.Reader, lines *int, line func(n int, raw []byte, tooLong bool)) (int64, error) {
	sc := NewLineScanner(r, 0)
	var consumed int64
	for sc.Scan() && sc.Terminated() {
		consumed = sc.Offset()
		*lines++
		if *lines%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return consumed, err
			}
		}
		line(*lines, sc.Bytes(), sc.TooLong())
	}
	return consumed, sc.Err()
}

// LineFollow is the Follow of a file of lines that is only appended to
// (Claude Code's, Muse's and Cursor's JSONL transcripts): the provider
// says what a line means (Line), records a line it skipped for its
// length (Skipped), and gives its parse so far (Snapshot).
type LineFollow struct {
	What     string // what the file is, for errors: "claude transcript"
	Line     func(n int, raw []byte)
	Skipped  func(n int)
	Snapshot func() []*Transcript
	lines    int
}

// Feed implements Follow.
func (f *LineFollow) Feed(ctx context.Context, r io.Reader) (int64, error) {
	n, err := FeedLines(ctx, r, &f.lines, func(n int, raw []byte, tooLong bool) {
		if tooLong {
			f.Skipped(n)
			return
		}
		f.Line(n, raw)
	})
	if err != nil {
		return n, fmt.Errorf("read %s: %w", f.What, err)
	}
	return n, nil
}

// Transcripts implements Follow.
func (f *LineFollow) Transcripts() []*Transcript { return f.Snapshot() }
