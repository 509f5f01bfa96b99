package host

import (
	"testing"

	"github.com/musterhq/muster/internal/proto"
)

// TestSkewParsesTheMismatchLine: the line a host's muster prints when its
// daemon speaks another protocol (proto.VersionMismatch, as reportError
// prints it) is read back with both versions, in each of its wordings, and
// the advice names the host instead of `muster daemon restart`.
func TestSkewParsesTheMismatchLine(t *testing.T) {
	for _, c := range []struct {
		dv        string
		dp        int
		mv        string
		mp        int
		upgrade   bool
		wantDaemV string
	}{
		{"0.1.0", 2, "0.2.0", 3, true, "0.1.0"},
		{"", 1, "0.2.0", 3, true, ""},
		{"0.4.0", 4, "0.2.0", 3, false, "0.4.0"},
	} {
		line := "muster: " + proto.VersionMismatch(c.dv, c.dp, c.mv, c.mp).Message + "\n"
		se := ParseSkew("gpu", line)
		if se == nil {
			t.Fatalf("ParseSkew(%q) = nil", line)
		}
		if se.Host != "gpu" || se.DaemonVersion != c.wantDaemV || se.DaemonProtocol != c.dp || se.MusterVersion != c.mv || se.MusterProtocol != c.mp {
			t.Fatalf("ParseSkew(%q) = %+v", line, se)
		}
		_, reason, command := stateOf(se)
		if c.upgrade && command != "muster host upgrade gpu" {
			t.Fatalf("an older daemon's command = %q, want muster host upgrade gpu", command)
		}
		if !c.upgrade && (command != "" || se.Advice() == "") {
			t.Fatalf("a newer daemon's command = %q (advice %q): upgrading the host would downgrade it", command, se.Advice())
		}
		if reason == "" || se.Error() == "" {
			t.Fatal("no reason")
		}
	}
	if se := ParseSkew("gpu", "muster: no session \"x\"\n"); se != nil {
		t.Fatalf("an unrelated error read as skew: %+v", se)
	}
}
