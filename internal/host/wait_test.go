package host

import (
	"testing"
	"time"
)

// TestBackoffIsBoundedAndJittered: each retry waits between half and all
// of its step, the steps double from First and stop at Max, and two
// clients do not draw the same waits.
func TestBackoffIsBoundedAndJittered(t *testing.T) {
	b := Backoff{First: 100 * time.Millisecond, Max: 5 * time.Second}
	for n := range 12 {
		step := min(b.First<<n, b.Max)
		for range 50 {
			if d := b.Delay(n); d < step/2 || d > step {
				t.Fatalf("Delay(%d) = %v, want within [%v, %v]", n, d, step/2, step)
			}
		}
	}
	same := 0
	for range 50 {
		if a, c := b.Delay(6), b.Delay(6); a == c {
			same++
		}
	}
	if same > 5 {
		t.Fatalf("%d of 50 pairs of delays were equal: no jitter", same)
	}
}
