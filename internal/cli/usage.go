package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// usageError marks flag and argument mistakes (exit 2). Mistakes cobra
// finds itself become usageErrors at the source, never by their text:
// flag errors through the root's flag error func, argument errors through
// typeArgErrors.
type usageError struct{ error }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// typeArgErrors wraps the Args validator of cmd and of every command below
// it, so that a wrong number of arguments or an unknown subcommand is a
// usageError. A validator that already returns a typed error (a
// *UserError, as `hook capture` does to keep its exit status off 2) is
// left as it is.
func typeArgErrors(cmd *cobra.Command) {
	if validate := cmd.Args; validate != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			err := validate(c, args)
			if err == nil {
				return nil
			}
			if _, ok := errors.AsType[*UserError](err); ok {
				return err
			}
			if _, ok := errors.AsType[usageError](err); ok {
				return err
			}
			return usageError{err}
		}
	}
	for _, c := range cmd.Commands() {
		typeArgErrors(c)
	}
}
