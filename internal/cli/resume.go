package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

func newResumeCmd(f *Factory) *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "resume NAME...|--all",
		Short: "Relaunch sessions whose process died with the daemon, in the same conversation",
		Long: "Relaunch sessions in their original directory with the provider's resume command and\n" +
			"the captured native id (or the original new-session command while the id is provisional).",
		RunE: func(cmd *cobra.Command, args []string) error {
			if !all && len(args) == 0 {
				return usagef("name a session to resume, or pass --all")
			}
			env := map[string]string{}
			for _, kv := range os.Environ() {
				if k, v, ok := strings.Cut(kv, "="); ok {
					env[k] = v
				}
			}
			var out []proto.ResumeOutcome
			var err error
			if all && len(args) == 0 && !asJSON {
				out, err = resumeStreaming(cmd.Context(), f, env)
			} else {
				out, err = resumeAtOnce(cmd.Context(), f, proto.ResumeArgs{Names: args, All: all, Env: env}, asJSON)
			}
			if err != nil {
				return err
			}
			failed := 0
			for _, o := range out {
				if !o.Resumed {
					failed++
				}
			}
			if failed > 0 {
				return &UserError{Err: fmt.Errorf("%d of %d sessions not resumed", failed, len(out)), Code: ExitError}
			}
			return nil
		},
		ValidArgsFunction: completeSessions(f),
	}
	cmd.Flags().BoolVar(&all, "all", false, "resume every restorable session")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// resumeAtOnce resumes in one request and prints the outcomes when it
// answers (named sessions, and --json).
func resumeAtOnce(ctx context.Context, f *Factory, args proto.ResumeArgs, asJSON bool) ([]proto.ResumeOutcome, error) {
	c, err := f.Client(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var out []proto.ResumeOutcome
	if err := c.Call(ctx, proto.OpResume, args, &out); err != nil {
		return nil, err
	}
	if out == nil {
		out = []proto.ResumeOutcome{}
	}
	if asJSON {
		writeJSON(f.IO.Out, out)
		return out, nil
	}
	if len(out) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "nothing to resume")
	}
	for _, o := range out {
		printOutcome(f.IO.Out, o)
	}
	return out, nil
}

// resumeParallel bounds the resume requests --all has in flight; the
// daemon bounds its own launches too.
const resumeParallel = 8

// resumeStreaming is --all: it lists the restorable sessions, oldest
// first, and resumes each in a request of its own, a few at a time,
// printing each outcome as it comes back (issue 22 item 10: 100
// sessions took 150 s with nothing printed until the end). --all's rules
// still apply: the daemon skips a session that failed too often or too
// recently.
func resumeStreaming(ctx context.Context, f *Factory, env map[string]string) ([]proto.ResumeOutcome, error) {
	c, err := f.Client(ctx)
	if err != nil {
		return nil, err
	}
	var list []proto.SessionInfo
	err = c.Call(ctx, proto.OpList, proto.None{}, &list)
	c.Close()
	if err != nil {
		return nil, err
	}
	var names []string
	slices.SortStableFunc(list, func(a, b proto.SessionInfo) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.Name, b.Name))
	})
	for _, s := range list {
		if s.State == proto.PaneRestorable {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "nothing to resume")
		return nil, nil
	}
	var (
		mu  sync.Mutex
		out []proto.ResumeOutcome
		wg  sync.WaitGroup
	)
	next := make(chan string)
	for range min(resumeParallel, len(names)) {
		wg.Go(func() {
			var c *client.Client
			defer func() {
				if c != nil {
					c.Close()
				}
			}()
			for name := range next {
				o := resumeOneName(ctx, f, &c, name, env)
				mu.Lock()
				out = append(out, o)
				printOutcome(f.IO.Out, o)
				mu.Unlock()
			}
		})
	}
	for _, n := range names {
		select {
		case next <- n:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(next)
	wg.Wait()
	return out, ctx.Err()
}

// resumeOneName resumes one session on *c, dialling it when it is nil;
// a failed call is that session's outcome (and drops the connection).
func resumeOneName(ctx context.Context, f *Factory, c **client.Client, name string, env map[string]string) proto.ResumeOutcome {
	fail := func(err error) proto.ResumeOutcome {
		if *c != nil {
			(*c).Close()
			*c = nil
		}
		return proto.ResumeOutcome{Name: name, Reason: err.Error()}
	}
	if *c == nil {
		var err error
		if *c, err = f.Client(ctx); err != nil {
			return fail(err)
		}
	}
	var out []proto.ResumeOutcome
	if err := (*c).Call(ctx, proto.OpResume, proto.ResumeArgs{Names: []string{name}, SkipFailing: true, Env: env}, &out); err != nil {
		return fail(err)
	}
	if len(out) != 1 {
		return proto.ResumeOutcome{Name: name, Reason: fmt.Sprintf("the daemon answered %d outcomes for one session", len(out))}
	}
	return out[0]
}

func printOutcome(w io.Writer, o proto.ResumeOutcome) {
	switch {
	case o.Resumed && o.NewConversation:
		fmt.Fprintf(w, "%s: resumed as a new conversation: no id was captured\n", termtext.Line(o.Name))
	case o.Resumed:
		fmt.Fprintf(w, "%s: resumed\n", termtext.Line(o.Name))
	default:
		fmt.Fprintf(w, "%s: not resumed: %s\n", termtext.Line(o.Name), termtext.Line(o.Reason))
	}
}
