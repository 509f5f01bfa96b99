package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/config"
	"github.com/musterhq/muster/internal/host"
)

// hostListTimeout bounds each host's answer to a listing (host ls, ls):
// a host that is down or far never holds up the others or the local rows.
const hostListTimeout = 8 * time.Second

func newHostCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "host",
		Short: "Machines whose sessions Muster shows and drives over your own ssh",
		Long: "Hosts are other machines reached with the system ssh and your ~/.ssh/config. Each runs\n" +
			"its own muster daemon (its hooks stay there); name a session on one as HOST:NAME in\n" +
			"attach, send, capture, kill, rename, resume, wait, explain, show and ack, start one with\n" +
			"`muster new --host HOST`, and `muster ls` lists every host's sessions; `muster host upgrade`\n" +
			"brings a host to this muster without stopping its agents. A host may not be\n" +
			"named like a provider: `muster show PROVIDER:ID` always means this machine's conversation\n" +
			"(a host's is `muster show HOST:PROVIDER:ID`).",
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newHostAddCmd(f), newHostLsCmd(f), newHostRmCmd(f), newHostUpgradeCmd(f))
	return cmd
}

func (f *Factory) config() (config.Config, error) {
	cfg, err := f.Config()
	if err != nil {
		return cfg, Userf("%v", err)
	}
	return cfg, nil
}

// hostError turns a host that could not be used into what the user does next.
func hostError(err error) error {
	if se, ok := errors.AsType[*host.SkewError](err); ok {
		return &UserError{Err: se, Hint: se.Advice(), Code: ExitError}
	}
	if he, ok := errors.AsType[*host.Error](err); ok {
		ue := &UserError{Err: fmt.Errorf("host %s: %s: %s", he.Host, he.State, he.Reason), Code: ExitUnreachable}
		if he.Command != "" {
			ue.Hint = "run this once by hand, then try again: " + he.Command
		}
		return ue
	}
	return err
}
