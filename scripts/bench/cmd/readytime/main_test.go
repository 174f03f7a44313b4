package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

// childEnv makes the test binary act as the measured server (serveChild).
const childEnv = "READYTIME_TEST_CHILD_ADDR"

func TestMain(m *testing.M) {
	if addr := os.Getenv(childEnv); addr != "" {
		os.Exit(serveChild(addr))
	}
	goleak.VerifyTestMain(m)
}

// serveChild answers 200 on /readyz at addr until SIGTERM, then exits 0.
func serveChild(addr string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return 3
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }() // ends at Close below
	<-ctx.Done()
	_ = srv.Close()
	return 0
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestMeasureRealProcess: the test binary as the server: measure starts
// it, sees /readyz 200, stops it with SIGTERM, and its output goes to -log.
func TestMeasureRealProcess(t *testing.T) {
	addr := freeAddr(t)
	t.Setenv(childEnv, addr)
	log := filepath.Join(t.TempDir(), "child.log")
	cfg, err := parseArgs([]string{"-url", "http://" + addr + "/readyz", "-log", log, "--", os.Args[0], "-test.run=^$"})
	if err != nil {
		t.Fatal(err)
	}
	took, err := measure(cfg)
	if err != nil || took <= 0 || took > cfg.timeout {
		t.Fatalf("measure = %s, %v; want a positive time within %s", took, err, cfg.timeout)
	}
	if _, err := os.Stat(log); err != nil {
		t.Errorf("-log file: %v", err)
	}
}

// TestMeasureProcessExits: a command that exits at once is an error.
func TestMeasureProcessExits(t *testing.T) {
	cfg, err := parseArgs([]string{"-url", "http://" + freeAddr(t) + "/readyz", "--", "false"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := measure(cfg); err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
		t.Fatalf("measure = %v, want an exit before ready", err)
	}
}

// TestWaitReady: the time is from start to the first successful probe,
// polled every `every`; an exit or the timeout ends the wait with an error.
func TestWaitReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		probe := func(context.Context) bool { calls++; return calls == 3 }
		took, err := waitReady(probe, time.Now(), make(chan error, 1), 2*time.Millisecond, time.Second)
		if err != nil || took != 4*time.Millisecond {
			t.Errorf("ready on the third probe: %s, %v; want 4ms", took, err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		exited := make(chan error, 1)
		go func() { time.Sleep(10 * time.Millisecond); exited <- errors.New("exit status 1") }()
		_, err := waitReady(func(context.Context) bool { return false }, time.Now(), exited, time.Millisecond, time.Second)
		if err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
			t.Errorf("exit before ready: %v", err)
		}
		if len(exited) != 1 {
			t.Errorf("the exit was not put back for stop")
		}
	})
	synctest.Test(t, func(t *testing.T) {
		_, err := waitReady(func(context.Context) bool { return false }, time.Now(), make(chan error, 1), time.Millisecond, 50*time.Millisecond)
		if err == nil || !strings.Contains(err.Error(), "not ready after 50ms") {
			t.Errorf("timeout: %v", err)
		}
	})
}

// TestStop: a process that exits on SIGTERM is not an error; one that
// ignores it is killed after the limit, and that is an error.
func TestStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exited := make(chan error, 1)
		p := process{signal: func(os.Signal) error { exited <- nil; return nil }, kill: func() error { t.Error("killed"); return nil }, exited: exited}
		if err := p.stop(time.Second); err != nil {
			t.Errorf("stop of a process that exits on SIGTERM: %v", err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		exited := make(chan error, 1)
		start := time.Now()
		p := process{signal: func(os.Signal) error { return nil }, kill: func() error { exited <- errors.New("killed"); return nil }, exited: exited}
		if err := p.stop(time.Second); err == nil || !strings.Contains(err.Error(), "killed") {
			t.Errorf("stop of a process that ignores SIGTERM: %v", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("killed after %s, want 1s", d)
		}
	})
}

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no command", []string{"-url", "http://x/readyz"}},
		{"no url", []string{"--", "true"}},
		{"every too small", []string{"-url", "http://x/", "-every", "1us", "--", "true"}},
		{"every too large", []string{"-url", "http://x/", "-every", "2s", "--", "true"}},
		{"zero timeout", []string{"-url", "http://x/", "-timeout", "0s", "--", "true"}},
		{"zero stop", []string{"-url", "http://x/", "-stop", "0s", "--", "true"}},
		{"unknown flag", []string{"-nope", "--", "true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseArgs(tc.args); err == nil {
				t.Fatalf("parseArgs(%q) succeeded", tc.args)
			}
		})
	}
}
