package host

import (
	"errors"
	"testing"

	"github.com/musterhq/muster/internal/proto"
)

// TestHostDownRoundTrip: a host's failure crosses host.call and comes
// back as the *Error the command would have met over ssh, so host ls and
// ls show the same state, reason and command.
func TestHostDownRoundTrip(t *testing.T) {
	for _, e := range []*Error{
		{Host: "h1", State: Unreachable, Reason: "connect to host 127.0.0.1 port 9: Connection refused"},
		{Host: "h1", State: Connecting, Reason: "no answer yet"},
		{Host: "gpu-2", State: NeedsAttention, Reason: "Host key verification failed.", Command: "ssh -o 'ControlPath=/r/ssh/gpu-2' -- gpu-2 true"},
		{Host: "h1", State: Unreachable, Reason: "a reason: with colons; and a semicolon"},
	} {
		pe := downError(e)
		if pe.Code != proto.CodeHostDown {
			t.Fatalf("%v: code %s", e, pe.Code)
		}
		got := hostError(e.Host, pe)
		if *got != *e {
			t.Errorf("round trip of %#v gave %#v", e, got)
		}
		st, reason, cmd := stateOf(got)
		if st != e.State || reason != e.Reason || cmd != e.Command {
			t.Errorf("stateOf(%v) = %s, %s, %s", got, st, reason, cmd)
		}
	}
}

// TestRelayFailureFallsBackForSkew: a host without relay, or in version
// skew, is answered with CodeNoRelay, which sends the command over ssh
// (where skew is reported in full); an ssh failure is CodeHostDown.
func TestRelayFailureFallsBackForSkew(t *testing.T) {
	l := Link{}
	l.Host.Name = "h1"
	if pe := relayFailure(l, errors.Join(ErrNoRelay)); pe.Code != proto.CodeNoRelay {
		t.Errorf("no relay: %s", pe.Code)
	}
	if pe := relayFailure(l, &SkewError{Host: "h1", DaemonProtocol: 2, MusterProtocol: 4}); pe.Code != proto.CodeNoRelay {
		t.Errorf("skew: %s", pe.Code)
	}
	if pe := relayFailure(l, &Error{Host: "h1", State: Unreachable, Reason: "down"}); pe.Code != proto.CodeHostDown || hostError("h1", pe).Reason != "down" {
		t.Errorf("ssh failure: %#v", pe)
	}
}
