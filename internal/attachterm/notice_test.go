package attachterm

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/musterhq/muster/internal/proto"
)

func TestNotice(t *testing.T) {
	n := proto.Notice{Session: "cx", Title: "cx needs approval", Body: "Run rm -rf build?\x1b]0;evil\a"}
	line := Notice(proto.AttachNotice{Line: true}, n, 40, 24)
	if !strings.HasPrefix(line, "\x1b7\x1b[24;1H") || !strings.HasSuffix(line, "\x1b8") {
		t.Fatalf("line %q: want it drawn on row 24 with the cursor saved and restored", line)
	}
	if strings.Contains(line, "evil") || strings.Contains(line, "\a") {
		t.Fatalf("line %q: the item's control sequences must not reach the terminal", line)
	}
	text := line[strings.Index(line, "\x1b[2K")+4 : strings.LastIndex(line, "\x1b[0m")]
	if w := ansi.StringWidth(text); w > 40 {
		t.Fatalf("line %q is %d cells wide, more than the terminal's 40", text, w)
	}
	if !strings.Contains(text, "cx needs approval") {
		t.Fatalf("line %q does not say what happened", text)
	}

	if got := Notice(proto.AttachNotice{Bell: true}, n, 40, 24); got != "\a" {
		t.Fatalf("bell only = %q, want a lone BEL", got)
	}
	if got := Notice(proto.AttachNotice{}, n, 40, 24); got != "" {
		t.Fatalf("everything off = %q, want nothing", got)
	}
	osc9 := Notice(proto.AttachNotice{Terminal: "osc9"}, n, 40, 24)
	if !strings.HasPrefix(osc9, "\x1b]9;Muster: cx needs approval: Run rm -rf build?") || strings.Count(osc9, "\a") != 1 || !strings.HasSuffix(osc9, "\a") {
		t.Fatalf("osc9 = %q", osc9)
	}
	n.Title = "a;b needs input"
	osc777 := Notice(proto.AttachNotice{Terminal: "osc777"}, n, 40, 24)
	if !strings.HasPrefix(osc777, "\x1b]777;notify;Muster: a,b needs input;Run rm") || strings.Count(osc777, "\a") != 1 {
		t.Fatalf("osc777 = %q", osc777)
	}
}
