package keyname

import (
	"strings"
	"testing"
)

func TestEncode(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"C-c"}, "\x03"},
		{[]string{"Enter", "Escape", "Tab", "BSpace", "Space"}, "\r\x1b\t\x7f "},
		{[]string{"Up", "Down", "Right", "Left"}, "\x1b[A\x1b[B\x1b[C\x1b[D"},
		{[]string{"up", "ENTER"}, "\x1b[A\r"}, // names are case-insensitive, as in tmux
		{[]string{"S-Up", "C-Left", "C-M-Right"}, "\x1b[1;2A\x1b[1;5D\x1b[1;7C"},
		{[]string{"Home", "End", "C-End"}, "\x1b[H\x1b[F\x1b[1;5F"},
		{[]string{"PageUp", "PgDn", "NPage", "DC", "IC", "C-Delete"}, "\x1b[5~\x1b[6~\x1b[6~\x1b[3~\x1b[2~\x1b[3;5~"},
		{[]string{"F1", "F5", "F12", "S-F1", "C-F5"}, "\x1bOP\x1b[15~\x1b[24~\x1b[1;2P\x1b[15;5~"},
		{[]string{"M-x", "M-Enter", "C-M-a", "M-Escape"}, "\x1bx\x1b\r\x1b\x01\x1b\x1b"},
		{[]string{"S-Tab", "BTab", "C-Space", "C-@", "^C", "C-\\", "C-[", "C-?"}, "\x1b[Z\x1b[Z\x00\x00\x03\x1c\x1b\x7f"},
		{[]string{"a", "S-a", "-", "é"}, "aA-é"},
	} {
		got, err := Encode(tc.names)
		if err != nil || string(got) != tc.want {
			t.Errorf("Encode(%q) = %q, %v; want %q", tc.names, got, err, tc.want)
		}
	}
}

func TestEncodeRefusesUnknownNames(t *testing.T) {
	for _, tc := range []struct {
		names []string
		msg   string
	}{
		{[]string{"Enter", "Bogus"}, `unknown key name "Bogus"`},
		{[]string{"hello"}, `unknown key name "hello"`},
		{[]string{"X-a"}, `unknown modifier "X-"`},
		{[]string{"C-1"}, "has no control code"},
		{[]string{"C-Escape"}, "no terminal sends"},
		{[]string{""}, "unknown key name"},
		{[]string{"C-"}, "unknown key name"},
	} {
		got, err := Encode(tc.names)
		if err == nil || !strings.Contains(err.Error(), tc.msg) || got != nil {
			t.Errorf("Encode(%q) = %q, %v; want an error with %q", tc.names, got, err, tc.msg)
		}
	}
}
