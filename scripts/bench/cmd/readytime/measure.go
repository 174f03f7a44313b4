package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/ronhq/ron/httpx/client"
)

// measure starts cfg.argv, waits until cfg.url answers 200 and returns the
// time since just before the start; the process is stopped either way.
func measure(cfg config) (time.Duration, error) {
	out := io.Discard
	if cfg.log != "" {
		f, err := os.OpenFile(cfg.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		out = f
	}
	cmd := exec.Command(cfg.argv[0], cfg.argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps the process; ends when it exits
	tr := client.NewTransport(client.TransportOptions{Base: client.BaseBare, DisableKeepAlives: true})
	defer tr.CloseIdleConnections()
	probe := httpProbe(&http.Client{Transport: tr, Timeout: time.Second}, cfg.url)
	took, err := waitReady(probe, start, exited, cfg.every, cfg.timeout)
	if err != nil {
		err = fmt.Errorf("%s: %w", cfg.argv[0], err)
	}
	p := process{signal: cmd.Process.Signal, kill: cmd.Process.Kill, exited: exited}
	if stopErr := p.stop(cfg.stop); err == nil && stopErr != nil {
		err = fmt.Errorf("%s: %w", cfg.argv[0], stopErr)
	}
	return took, err
}

// httpProbe returns a probe that reports whether GET url answers 200.
func httpProbe(c *http.Client, url string) func(context.Context) bool {
	return func(ctx context.Context) bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false
		}
		resp, err := c.Do(req)
		if err != nil {
			return false
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}

// waitReady calls probe every `every` until it reports true, the process
// exits (a value on exited, which is put back for process.stop), or timeout
// passes; it returns the time from start to the successful probe.
func waitReady(probe func(context.Context) bool, start time.Time, exited chan error, every, timeout time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if probe(ctx) {
			return time.Since(start), nil
		}
		select {
		case err := <-exited:
			exited <- err
			return 0, fmt.Errorf("exited before it was ready (%v)", err)
		case <-ctx.Done():
			return 0, fmt.Errorf("not ready after %s", timeout)
		case <-tick.C:
		}
	}
}

// process is what stop needs of a started process.
type process struct {
	signal func(os.Signal) error
	kill   func() error
	exited chan error // receives the exit once
}

// stop sends SIGTERM, waits up to limit for the exit, then kills; how the
// process exits is not an error, needing the kill is.
func (p process) stop(limit time.Duration) error {
	_ = p.signal(syscall.SIGTERM)
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-p.exited:
		return nil
	case <-t.C:
		_ = p.kill()
		<-p.exited
		return fmt.Errorf("did not exit within %s of SIGTERM; killed", limit)
	}
}
