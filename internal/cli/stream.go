package cli

import (
	"context"
	"errors"
	"io"

	"github.com/musterhq/muster/internal/client"
)

// stream is a stream op (proto.Stream) on a connection of its own to a
// running daemon, closed when its context ends.
type stream[T any] struct {
	c    *client.Client
	stop func() bool
}

// openStream starts op on c, a connection of its own, and returns its
// first result. The connection closes when ctx ends or Close is called.
func openStream[T any](ctx context.Context, c *client.Client, op string, args any) (T, *stream[T], error) {
	var first T
	if err := c.Open(ctx, op, args, &first); err != nil {
		c.Close()
		return first, nil, err
	}
	return first, &stream[T]{c: c, stop: context.AfterFunc(ctx, func() { c.Close() })}, nil
}

// Next waits for the next result; io.EOF once the daemon ended the stream.
func (s *stream[T]) Next() (T, error) {
	var v T
	return v, s.c.Recv(&v)
}

func (s *stream[T]) Close() error {
	s.stop()
	return s.c.Close()
}

// follow calls push with the first result and each next one until ctx
// ends or the stream does; a stream the daemon ended is no error.
func follow[T any](first T, s *stream[T], push func(T)) error {
	defer s.Close()
	for v := first; ; {
		push(v)
		var err error
		if v, err = s.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
