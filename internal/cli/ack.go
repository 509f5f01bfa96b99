package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/musterhq/muster/internal/proto"
)

type ackOptions struct {
	IDs  []int64
	All  bool
	JSON bool
}

func newAckCmd(f *Factory) *cobra.Command { return newAckCmdWith(f, nil) }

func newAckCmdWith(f *Factory, runF func(*ackOptions) error) *cobra.Command {
	var o ackOptions
	cmd := &cobra.Command{
		Use:   "ack ID... | --all",
		Short: "Acknowledge attention items",
		Long:  "Resolve attention items by id (as `muster attention` lists them), or every open item with --all.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.All == (len(args) > 0) {
				return usagef("ack needs item ids or --all")
			}
			for _, a := range f.sessionArgs(args) {
				id, err := strconv.ParseInt(strings.TrimPrefix(a, "#"), 10, 64)
				if err != nil || id <= 0 {
					return usagef("%q is not an attention item id", a)
				}
				o.IDs = append(o.IDs, id)
			}
			if runF != nil {
				return runF(&o)
			}
			c, err := f.sessionCaller(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			var res proto.AckResult
			if err := c.Call(cmd.Context(), proto.OpAck, proto.AckArgs{IDs: o.IDs, All: o.All}, &res); err != nil {
				return err
			}
			if o.JSON {
				return writeJSON(f.IO.Out, res)
			}
			for _, id := range res.Acknowledged {
				fmt.Fprintf(f.IO.Out, "acknowledged %d\n", id)
			}
			for _, id := range res.Already {
				fmt.Fprintf(f.IO.Out, "%d was already resolved\n", id)
			}
			if o.All && len(res.Acknowledged) == 0 {
				fmt.Fprintln(f.IO.Out, "Nothing was open.")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.All, "all", false, "acknowledge every open item")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the result as JSON")
	return cmd
}
