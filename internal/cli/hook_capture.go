package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/nativeid"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/provider"
	"github.com/musterhq/muster/internal/provider/all"
)

// newHookCaptureCmd builds `muster hook capture`, the seed-000 contract: the
// provider's session id on stdin, recorded for the pane's Muster session.
// Silent on success; outside Muster (no MUSTER_AGENT_SESSION_ID) a no-op;
// silent too, exit 0, when the daemon cannot be reached (a line goes to
// hook.log in the state dir), because a hook must never break its agent.
// Bad input and refusals record nothing and exit 1, never 2, which agents
// read as "block".
func newHookCaptureCmd(f *Factory) *cobra.Command {
	var prov string
	var pid, ppid int
	cmd := &cobra.Command{
		Use:   "capture --provider P --process-id PID [--parent-process-id PPID]",
		Short: "Record the provider's native session id for this pane's session",
		Long: "Reads {\"version\":1,\"event\":\"session_started\",\"session_id\":\"…\"} (or, for built-in\n" +
			"providers, their native hook payload with session_id/sessionId) on stdin and records\n" +
			"the id for the Muster session in MUSTER_AGENT_SESSION_ID. Outside Muster, or when the\n" +
			"daemon is down, it does nothing and exits 0.",
		// Like a flag mistake, an argument must not exit 2 either.
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &UserError{Err: fmt.Errorf("capture: unexpected argument %q", args[0]), Code: ExitError}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			sid, ok := nativeid.MusterSessionID(f.Getenv)
			if !ok {
				return nil
			}
			fail := func(err error) error {
				return &UserError{Err: fmt.Errorf("capture: %w", err), Code: ExitError}
			}
			if prov == "" {
				return fail(errors.New("--provider is required"))
			}
			if pid <= 0 {
				return fail(errors.New("--process-id is required"))
			}
			data, err := io.ReadAll(io.LimitReader(f.IO.In, nativeid.MaxPayload+1))
			if err != nil {
				return fail(err)
			}
			claim, err := nativeid.Decode(prov, data)
			if err != nil {
				return fail(err)
			}
			cl, err := f.RunningClient(cmd.Context())
			if err != nil {
				f.hookLog("capture: daemon unreachable, %s id not recorded for session %s: %v", claim.Provider, sid, err)
				return nil
			}
			defer cl.Close()
			err = cl.Call(cmd.Context(), proto.OpNativeCapture, proto.NativeCaptureArgs{
				SessionID: sid, Capability: f.Getenv("MUSTER_EVENT_CAPABILITY"),
				Provider: claim.Provider, NativeID: claim.SessionID,
				PID: pid, PPID: ppid, Event: claim.Event, Source: claim.Source,
			}, nil)
			if _, refused := errors.AsType[*proto.Error](err); err != nil && !refused {
				// The daemon went away mid-request.
				f.hookLog("capture: daemon unreachable, %s id not recorded for session %s: %v", claim.Provider, sid, err)
				return nil
			}
			if err != nil {
				return fail(err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&prov, "provider", "", "provider of the calling agent ("+strings.Join(append(all.LaunchNames(), provider.Custom), ", ")+")")
	cmd.Flags().IntVar(&pid, "process-id", 0, `the provider process ("$PPID" in a shell hook)`)
	cmd.Flags().IntVar(&ppid, "parent-process-id", 0, "the provider process's parent")
	// A usage mistake must not exit 2 either: agents treat 2 as "block".
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &UserError{Err: fmt.Errorf("capture: %w", err), Code: ExitError}
	})
	return cmd
}

// maxHookLog bounds hook.log; past it the file starts over.
const maxHookLog = 256 << 10

// hookLog appends one line to hook.log in the state dir, for hook commands
// that must stay silent. It gives up quietly: a hook never fails on its log.
func (f *Factory) hookLog(format string, args ...any) {
	dirs, err := f.Dirs()
	if err != nil || dirs.EnsureState() != nil {
		return
	}
	path := filepath.Join(dirs.State, "hook.log")
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if st, err := os.Stat(path); err == nil && st.Size() > maxHookLog {
		flags |= os.O_TRUNC
	}
	lf, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return
	}
	defer lf.Close()
	fmt.Fprintf(lf, "%s %s\n", f.now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
}
