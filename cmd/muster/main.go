// Command muster is a terminal workspace for coding agents.
package main

import (
	"context"
	"os"

	"github.com/musterhq/muster/internal/cli"
	// `muster hook event …` runs and exits during package initialization,
	// before the heavy packages initialize: see package early.
	_ "github.com/musterhq/muster/internal/hookevent/early"
)

func main() { os.Exit(cli.Main(context.Background(), os.Args[1:])) }
