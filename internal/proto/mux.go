package proto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
)

// Mux is control.sock's one dispatcher: it routes a request to the handler
// registered for its op, decoding the arguments and encoding the result by
// one rule. The daemon registers its ops and the event engine its own into
// the same Mux. It does no I/O; the connection loop writes the Response.
type Mux struct {
	h map[string]func(context.Context, json.RawMessage) (any, error)
}

// NewMux returns a Mux with no handlers.
func NewMux() *Mux {
	return &Mux{h: map[string]func(context.Context, json.RawMessage) (any, error){}}
}

// Handle registers fn as the handler of op. It panics when op is not in
// Ops, is answered by the connection itself (hello, attach, preview, watch), already has a
// handler, or when A or R differ from the op's declared types: mistakes
// that show the first time a daemon starts.
func Handle[A, R any](m *Mux, op string, fn func(ctx context.Context, args A) (R, error)) {
	o, ok := Lookup(op)
	switch {
	case !ok:
		panic(fmt.Sprintf("proto: handler for op %q, which is not in Ops", op))
	case o.Flow == Frames || o.Flow == Stream || o.Flow == Handshake:
		panic(fmt.Sprintf("proto: op %q is answered by the connection, not a handler", op))
	case m.h[op] != nil:
		panic(fmt.Sprintf("proto: op %q registered twice", op))
	case reflect.TypeFor[A]() != o.Args || reflect.TypeFor[R]() != o.Result:
		panic(fmt.Sprintf("proto: op %q handler takes %v → %v; Ops says %v → %v",
			op, reflect.TypeFor[A](), reflect.TypeFor[R](), o.Args, o.Result))
	}
	none := o.Result == reflect.TypeFor[None]()
	m.h[op] = func(ctx context.Context, raw json.RawMessage) (any, error) {
		var a A
		if o.Args != reflect.TypeFor[None]() {
			if err := DecodeArgs(raw, &a); err != nil {
				return nil, err
			}
		}
		r, err := fn(ctx, a)
		if err != nil || none {
			return nil, err
		}
		return r, nil
	}
}

// Missing lists the ops of Ops that need a handler and have none.
func (m *Mux) Missing() []string {
	var out []string
	for _, o := range Ops {
		if o.Flow != Frames && o.Flow != Stream && o.Flow != Handshake && m.h[o.Name] == nil {
			out = append(out, o.Name)
		}
	}
	return out
}

// Has reports whether op has a handler.
func (m *Mux) Has(op string) bool { return m.h[op] != nil }

// Ops lists the ops with a handler, sorted.
func (m *Mux) Ops() []string {
	out := make([]string, 0, len(m.h))
	for op := range m.h {
		out = append(out, op)
	}
	slices.Sort(out)
	return out
}

// Serve runs req's handler and builds its response. Errors that are not an
// *Error become CodeInternal.
func (m *Mux) Serve(ctx context.Context, req Request) Response {
	result, err := m.call(ctx, req)
	if err != nil {
		pe, ok := errors.AsType[*Error](err)
		if !ok {
			pe = Errorf(CodeInternal, "%s: %v", req.Op, err)
		}
		return Response{Error: pe}
	}
	resp := Response{OK: true}
	if result != nil {
		raw, err := json.Marshal(result)
		if err != nil {
			return Response{Error: Errorf(CodeInternal, "%s: %v", req.Op, err)}
		}
		resp.Result = raw
	}
	return resp
}

func (m *Mux) call(ctx context.Context, req Request) (any, error) {
	if req.Op == "" {
		return nil, Errorf(CodeBadRequest, "request has no op")
	}
	h := m.h[req.Op]
	if h == nil {
		return nil, UnknownOp(req.Op)
	}
	return h(ctx, req.Args)
}

// UnknownOp is the answer to an op that is not in Ops.
func UnknownOp(op string) *Error {
	return Errorf(CodeUnsupported, "unknown op %q", op)
}

// DecodeArgs decodes an op's arguments into v. The rule is the same for
// every op: absent or null arguments leave v at its zero value, unknown
// fields are ignored (a newer client may send more), and anything that
// does not fit v is CodeBadRequest.
func DecodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return Errorf(CodeBadRequest, "malformed arguments: %v", err)
	}
	return nil
}
