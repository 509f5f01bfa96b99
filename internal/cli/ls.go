package cli

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proccost"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/termtext"
)

func newLsCmd(f *Factory) *cobra.Command {
	var asJSON bool
	var onHost string
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List sessions",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cfg, err := f.config(); err != nil || len(cfg.Hosts) > 0 || onHost != "" {
				if err != nil {
					return err
				}
				return listAcrossHosts(cmd.Context(), f, cfg, onHost, asJSON)
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			var list []proto.SessionInfo
			if err := c.Call(cmd.Context(), proto.OpList, nil, &list); err != nil {
				return err
			}
			if list == nil {
				list = []proto.SessionInfo{}
			}
			ext, errs := externalRows(cmd.Context(), f, list)
			for _, err := range errs {
				fmt.Fprintf(f.IO.ErrOut, "muster: %s\n", err)
			}
			list = append(list, ext...)
			redactSessions(list)
			if asJSON {
				return writeJSON(f.IO.Out, list)
			}
			printSessions(f, list, f.now())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	cmd.Flags().StringVar(&onHost, "host", "", "only this host's sessions (see `muster host ls`)")
	return cmd
}

// redactSessions hides secrets in the agent-set or user-typed text of each
// row: a pane's title is whatever the agent printed (a prompt pasted with an
// sk-ant-… key becomes Claude's title), a command line may carry an API key,
// and a reason quotes paths and titles. `muster history` redacts titles the
// same way; ls must not be the way around it.
func redactSessions(list []proto.SessionInfo) {
	for i := range list {
		s := &list[i]
		s.Title = redactSecrets(s.Title)
		s.Command = redactSecrets(s.Command)
		s.Reason = redactSecrets(s.Reason)
	}
}

func printSessions(f *Factory, list []proto.SessionInfo, now time.Time) {
	if len(list) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "no sessions; start one with `muster new`")
		return
	}
	tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	// BRANCH shows only when a session runs in a worktree of its own.
	branches := slices.ContainsFunc(list, func(s proto.SessionInfo) bool { return s.Worktree != nil })
	header := "NAME\tID\tPROVIDER\tSTATUS\t!\tACTIVITY\tPID\tMEM\tCPU\tCWD\tAGE"
	if branches {
		header += "\tBRANCH"
	}
	fmt.Fprintln(tw, header)
	line := termtext.Line
	for _, s := range list {
		attn := "-"
		if s.Attention > 0 {
			attn = fmt.Sprintf("!%d", s.Attention)
		}
		pid := "-"
		if s.State == proto.PaneRunning || s.External != nil {
			pid = fmt.Sprint(s.PID)
		}
		status := s.StatusLabel()
		if x := s.External; x != nil {
			status = "external: " + x.Status + "/" + x.State
		}
		created, _ := time.Parse(time.RFC3339, s.CreatedAt)
		prov := line(s.Provider)
		if s.Control {
			prov += " (control)"
		}
		act := "-"
		if s.Activity != "" {
			act = line(s.Activity)
		}
		mem, cpu := costColumns(s)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", line(s.Name), short(line(s.ID)), prov, line(status), attn, act, pid,
			mem, cpu, line(tildePath(s.CWD)), age(now.Sub(created)))
		if branches {
			fmt.Fprintf(tw, "\t%s", branchCell(s.Worktree))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, s := range list {
		if s.Reason != "" {
			fmt.Fprintf(f.IO.Out, "%s: %s\n", line(s.Name), line(s.Reason))
		}
		if x := s.External; x != nil {
			fmt.Fprintf(f.IO.Out, "%s: run by %s, not muster; open it in a pane: muster new %s --cmd %s\n", line(s.Name), line(x.Supervisor), line(s.Provider), line(shellQuote(x.Attach)))
		}
		if s.LimitResetsAt != nil {
			then := ""
			if s.ContinueAfterLimit {
				then = "; muster continues it then"
			}
			fmt.Fprintf(f.IO.Out, "%s: at its usage limit until %s%s\n", line(s.Name), line(*s.LimitResetsAt), then)
		}
	}
}

// costColumns are a session's MEM (its process tree's RSS, with "!" when
// over its ceiling) and CPU (a share of one core) columns; "-" until the
// daemon has sampled it twice.
func costColumns(s proto.SessionInfo) (mem, cpu string) {
	mem, cpu = "-", "-"
	if s.RSSBytes != nil {
		mem = proccost.FormatBytes(*s.RSSBytes)
		if s.MemoryCeiling > 0 && *s.RSSBytes > s.MemoryCeiling {
			mem += "!"
		}
	}
	if s.CPUPercent != nil {
		cpu = fmt.Sprintf("%.0f%%", *s.CPUPercent)
	}
	return mem, cpu
}

// short cuts an id to its first 8 bytes, never inside a UTF-8 sequence.
func short(id string) string {
	for i := range id {
		if i >= 8 {
			return id[:i]
		}
	}
	return id
}

func tildePath(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "/" && strings.HasPrefix(p, home) {
		return "~" + strings.TrimPrefix(p, home)
	}
	return p
}

func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}
