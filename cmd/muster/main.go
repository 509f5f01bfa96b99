// Command muster is a terminal workspace for coding agents.
package main

import (
	"context"
	"os"

	"github.com/musterhq/muster/internal/cli"
)

func main() { os.Exit(cli.Main(context.Background(), os.Args[1:])) }
