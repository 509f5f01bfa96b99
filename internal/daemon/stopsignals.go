package daemon

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// handleSignals gives the daemon tmux's server's answer to the signals a
// terminal or a user sends it: SIGTERM, SIGINT and SIGQUIT stop it the
// clean way (every pane closed, the store committed), SIGHUP, SIGUSR1
// and SIGUSR2 are logged and ignored. Left to Go's defaults, SIGHUP and
// SIGUSR1 killed it and SIGQUIT dumped its goroutines and exited, with no
// pane shut down. They are caught rather than set to SIG_IGN because an
// ignored signal stays ignored across exec, in every pane's program.
func handleSignals(ctx context.Context, logger *slog.Logger) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-ch:
				switch sig {
				case syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2:
					logger.Info("signal ignored", "signal", sig.String())
				default:
					logger.Info("stopping on signal", "signal", sig.String())
					cancel()
				}
			}
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}
