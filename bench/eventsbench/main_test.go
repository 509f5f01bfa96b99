package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
)

// The helper side of TestEveryExitReapsChildren: it starts a child the way
// the benchmark starts its helpers, prints the child's pid, and then
// leaves by the path named in REAP_HELPER.
func TestReapHelper(t *testing.T) {
	how := os.Getenv("REAP_HELPER")
	if how == "" {
		t.Skip("run by TestEveryExitReapsChildren")
	}
	reapOnSignal()
	child := exec.Command("sleep", "1000")
	startChild(child)
	os.Stdout.WriteString(strconv.Itoa(child.Process.Pid) + "\n")
	switch how {
	case "fail":
		fail("the benchmark failed")
	case "exit":
		exit(1)
	case "signal":
		select {} // until the parent's SIGTERM
	}
}

// TestEveryExitReapsChildren: whichever way the benchmark exits (fail, an
// exit code at the end, a signal), the processes it started are gone, not
// left running under init.
func TestEveryExitReapsChildren(t *testing.T) {
	for _, tc := range []struct {
		how  string
		code int
	}{{"fail", 1}, {"exit", 1}, {"signal", 130}} {
		t.Run(tc.how, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestReapHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "REAP_HELPER="+tc.how)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(out)
			if !sc.Scan() {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatal("the helper printed no child pid")
			}
			pid, err := strconv.Atoi(sc.Text())
			if err != nil {
				t.Fatal(err)
			}
			// Whatever happens, the child does not outlive the test.
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			if tc.how == "signal" {
				cmd.Process.Signal(syscall.SIGTERM)
			}
			for sc.Scan() {
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
				t.Fatalf("helper exited with %v, want code %d", err, tc.code)
			}
			// startChild waited for the child, so it is reaped: no such
			// process. A leaked one would be alive under init.
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("child %d still exists after the benchmark exited by %s (kill 0: %v)", pid, tc.how, err)
			}
		})
	}
}
