//go:build unix

package providertest

import (
	"syscall"
	"time"
)

// CPUTime is the process's user and system CPU time: benchmarks report
// throughput per CPU second too, which a loaded machine does not skew.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
