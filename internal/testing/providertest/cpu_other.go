//go:build !unix

package providertest

import "time"

// CPUTime is zero where the process's CPU time is not read: BenchParse then
// reports no MB/cpu-s.
func CPUTime() time.Duration { return 0 }
