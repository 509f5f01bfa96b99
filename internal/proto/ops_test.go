package proto

import (
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestOpTable checks that every op declares its types, its access rule,
// its flow and only known error codes, and that every Op constant is in
// the table.
func TestOpTable(t *testing.T) {
	known := map[string]bool{}
	for _, c := range codeConstants(t) {
		known[c] = true
	}
	seen := map[string]bool{}
	for _, o := range Ops {
		if o.Name == "" || seen[o.Name] {
			t.Errorf("op %q: empty or listed twice", o.Name)
		}
		seen[o.Name] = true
		if o.Args == nil || o.Result == nil {
			t.Errorf("op %q: no argument or result type", o.Name)
		}
		if o.Access < ReadOnly || o.Access > Outside {
			t.Errorf("op %q: no access rule", o.Name)
		}
		if o.Flow < Reply || o.Flow > Handshake {
			t.Errorf("op %q: no flow", o.Name)
		}
		for _, c := range o.Codes {
			if !known[c] {
				t.Errorf("op %q: code %q is not a Code constant", o.Name, c)
			}
			if slices.Contains(CommonCodes, c) {
				t.Errorf("op %q: code %q is common to every op", o.Name, c)
			}
		}
		if got, ok := Lookup(o.Name); !ok || got.Name != o.Name {
			t.Errorf("Lookup(%q) = %v, %v", o.Name, got, ok)
		}
	}
	for name, value := range opConstants(t) {
		if !seen[value] {
			t.Errorf("%s = %q is not in Ops", name, value)
		}
	}
	if len(opConstants(t)) != len(Ops) {
		t.Errorf("%d Op constants for %d ops", len(opConstants(t)), len(Ops))
	}
	var frozen []string
	for _, o := range Ops {
		if o.Frozen {
			frozen = append(frozen, o.Name)
		}
	}
	if want := []string{OpHello, OpStatus, OpStop, OpRestart}; !slices.Equal(frozen, want) {
		t.Errorf("frozen ops = %v, want %v", frozen, want)
	}
}

// TestFrozenShapes pins the fields that every protocol version reads from
// the frozen ops: an old daemon's status tells a new client its version.
func TestFrozenShapes(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want []string
	}{
		{Hello{}, []string{"protocol", "version"}},
		{HelloResult{}, []string{"protocol", "version", "pid"}},
		{DaemonStatus{}, []string{"pid", "version", "started_at", "home", "sessions", "panes"}},
	} {
		typ := reflect.TypeOf(tc.v)
		var got []string
		for f := range typ.Fields() {
			got = append(got, strings.Split(f.Tag.Get("json"), ",")[0])
		}
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%v lost field %q (has %v)", typ, w, got)
			}
		}
	}
}

// opConstants and codeConstants read control.go's constant blocks.
func opConstants(t *testing.T) map[string]string { return constants(t, "Op") }

func codeConstants(t *testing.T) []string {
	var out []string
	for _, v := range constants(t, "Code") {
		out = append(out, v)
	}
	return out
}

func constants(t *testing.T, prefix string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "control.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, prefix) || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					out[n.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
	return out
}

func TestMayReturn(t *testing.T) {
	ls, _ := Lookup(OpList)
	kill, _ := Lookup(OpKill)
	for _, tc := range []struct {
		op   Op
		code string
		want bool
	}{
		{ls, CodeBadRequest, true},
		{ls, CodeVersion, true},
		{ls, CodeForbidden, false},
		{ls, CodeNotFound, false},
		{kill, CodeForbidden, true},
		{kill, CodeNotFound, true},
		{kill, CodeUnauthorized, false},
	} {
		if got := tc.op.MayReturn(tc.code); got != tc.want {
			t.Errorf("%s.MayReturn(%s) = %v", tc.op.Name, tc.code, got)
		}
	}
}

func TestMux(t *testing.T) {
	m := NewMux()
	Handle(m, OpKill, func(ctx context.Context, a Target) (None, error) {
		if a.Name == "" {
			return None{}, Errorf(CodeBadRequest, "no session name given")
		}
		if a.Name == "boom" {
			return None{}, errors.New("disk on fire")
		}
		return None{}, nil
	})
	Handle(m, OpCapture, func(ctx context.Context, a CaptureArgs) (CaptureResult, error) {
		return CaptureResult{Text: a.Name}, nil
	})
	Handle(m, OpStatus, func(ctx context.Context, _ None) (DaemonStatus, error) {
		return DaemonStatus{PID: 7}, nil
	})
	serve := func(op, args string) Response {
		return m.Serve(t.Context(), Request{Op: op, Args: json.RawMessage(args)})
	}
	for _, tc := range []struct {
		op, args, code, result string
	}{
		{op: OpKill, args: `{"name":"a"}`},
		// One rule for every op: absent or null arguments are the zero value.
		{op: OpKill, args: ``, code: CodeBadRequest},
		{op: OpKill, args: `null`, code: CodeBadRequest},
		{op: OpKill, args: `{"name":5}`, code: CodeBadRequest},
		{op: OpKill, args: `[1]`, code: CodeBadRequest},
		{op: OpKill, args: `{"name":"a","later":true}`},
		{op: OpKill, args: `{"name":"boom"}`, code: CodeInternal},
		{op: OpCapture, args: `{"name":"x"}`, result: `{"text":"x"}`},
		{op: OpCapture, args: ``, result: `{"text":""}`},
		// An op that takes nothing ignores what it is sent.
		{op: OpStatus, args: `5`, result: `{"pid":7,"version":"","started_at":"","home":"","sessions":0,"panes":0}`},
		{op: OpSend, args: `{}`, code: CodeUnsupported},
		{op: "nosuch", code: CodeUnsupported},
		{op: "", code: CodeBadRequest},
	} {
		r := serve(tc.op, tc.args)
		switch {
		case tc.code != "" && (r.OK || r.Error == nil || r.Error.Code != tc.code):
			t.Errorf("%s %s: %+v, want code %s", tc.op, tc.args, r, tc.code)
		case tc.code == "" && !r.OK:
			t.Errorf("%s %s: %+v", tc.op, tc.args, r.Error)
		case tc.code == "" && string(r.Result) != tc.result:
			t.Errorf("%s %s: result %s, want %s", tc.op, tc.args, r.Result, tc.result)
		}
	}
	if got := m.Ops(); !slices.Equal(got, []string{OpCapture, OpKill, OpStatus}) {
		t.Errorf("Ops() = %v", got)
	}
	if missing := m.Missing(); slices.Contains(missing, OpKill) || !slices.Contains(missing, OpList) || slices.Contains(missing, OpHello) || slices.Contains(missing, OpAttach) {
		t.Errorf("Missing() = %v", missing)
	}
}

func TestHandleRefusesMistakes(t *testing.T) {
	for name, register := range map[string]func(m *Mux){
		"unknown op": func(m *Mux) { Handle(m, "nosuch", func(context.Context, None) (None, error) { return None{}, nil }) },
		"wrong args": func(m *Mux) { Handle(m, OpKill, func(context.Context, SendArgs) (None, error) { return None{}, nil }) },
		"wrong result": func(m *Mux) {
			Handle(m, OpList, func(context.Context, None) (SessionInfo, error) { return SessionInfo{}, nil })
		},
		"connection op": func(m *Mux) {
			Handle(m, OpHello, func(context.Context, Hello) (HelloResult, error) { return HelloResult{}, nil })
		},
		"twice": func(m *Mux) {
			Handle(m, OpStop, func(context.Context, None) (None, error) { return None{}, nil })
			Handle(m, OpStop, func(context.Context, None) (None, error) { return None{}, nil })
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Handle did not panic", name)
				}
			}()
			register(NewMux())
		}()
	}
}

func TestVersionMismatch(t *testing.T) {
	e := VersionMismatch("0.1.0", 1, "0.2.0", 2)
	want := "the running daemon is version 0.1.0 (control protocol 1), this client is version 0.2.0 (control protocol 2); run `muster daemon restart` to replace it, keeping every pane"
	if e.Code != CodeVersion || e.Message != want || e.Hint != "" {
		t.Errorf("VersionMismatch = %+v", e)
	}
	e = VersionMismatch("0.2.0", 2, "", 1)
	want = "the running daemon is version 0.2.0 (control protocol 2), this client is older (control protocol 1); run `muster daemon restart` to replace it, keeping every pane"
	if e.Message != want {
		t.Errorf("VersionMismatch without the client's version = %q", e.Message)
	}
}
