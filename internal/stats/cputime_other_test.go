//go:build !unix

package stats

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
