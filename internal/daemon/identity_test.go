package daemon

import (
	"testing"
	"time"
)

func TestResumeBackoffGrowsAndIsBounded(t *testing.T) {
	prev := time.Duration(0)
	for a := 1; a <= 20; a++ {
		b := resumeBackoff(a)
		if b < prev || b > 1024*time.Second {
			t.Fatalf("resumeBackoff(%d) = %v after %v", a, b, prev)
		}
		prev = b
	}
	if resumeBackoff(1) != 2*time.Second {
		t.Errorf("first backoff = %v, want 2s", resumeBackoff(1))
	}
}
