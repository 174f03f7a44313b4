package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// clockWarn is the clock offset beyond which the clock check warns.
const clockWarn = 2 * time.Second

// maxProbeBody caps what a probe reads of an answer.
const maxProbeBody = 64 << 10

// get GETs url under sys.Timeout and reads (a bounded part of) the body.
func get(ctx context.Context, sys System, url string) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, sys.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := sys.HTTP.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProbeBody))
	return resp, body, err
}

// healthURL is base's /healthz.
func healthURL(base string) string { return strings.TrimRight(base, "/") + "/healthz" }

// checkDependencies asks every dependency URL for /healthz.
func checkDependencies(ctx context.Context, n Node, sys System) []Result {
	if len(n.Dependencies) == 0 {
		return []Result{{Check: "dependencies", Level: Skip, Message: "no role dependency URL is configured (dependencies run in this process)"}}
	}
	out := make([]Result, 0, len(n.Dependencies))
	for _, d := range n.Dependencies {
		check := "dependency:" + d.Key
		resp, _, err := get(ctx, sys, healthURL(d.URL))
		if err == nil && resp.StatusCode == http.StatusOK {
			out = append(out, Result{Check: check, Level: OK, Message: d.URL + " answers /healthz"})
			continue
		}
		if err == nil {
			err = fmt.Errorf("/healthz answered %d", resp.StatusCode)
		}
		lvl := Fail
		if d.Optional {
			lvl = Warn
		}
		out = append(out, Result{Check: check, Level: lvl, Message: fmt.Sprintf("%s unreachable: %v", d.URL, err),
			Fix: fmt.Sprintf("start the node at %s, open the network path to it, or correct %s", d.URL, d.Key)})
	}
	return out
}

// checkClock compares the local clock with the Date header of the first
// dependency URL (the registry's or a peer's when set).
func checkClock(ctx context.Context, n Node, sys System) Result {
	if len(n.Dependencies) == 0 {
		return Result{Check: "clock", Level: Skip, Message: "skipped: no peer, registry or upstream URL is configured to compare with"}
	}
	ref := n.Dependencies[0]
	before := sys.Now()
	resp, _, err := get(ctx, sys, healthURL(ref.URL))
	after := sys.Now()
	if err != nil {
		return Result{Check: "clock", Level: Skip, Message: fmt.Sprintf("skipped: %s (%s) did not answer: %v", ref.URL, ref.Key, err)}
	}
	date, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return Result{Check: "clock", Level: Skip, Message: fmt.Sprintf("skipped: %s sent no valid Date header", ref.URL)}
	}
	// Date is truncated to the second: the remote time was in [date, date+1s)
	// at some instant between before and after.
	rtt := after.Sub(before)
	off := before.Add(rtt / 2).Sub(date.Add(500 * time.Millisecond))
	beyond := max(off.Abs()-500*time.Millisecond-rtt/2, 0).Round(time.Second)
	maxSkew := n.MaxClockSkew
	if maxSkew <= 0 {
		maxSkew = DefaultMaxClockSkew
	}
	fix := "synchronise the clocks with NTP (systemd-timesyncd or chrony) on this host and on " + ref.URL
	switch {
	case beyond > maxSkew:
		return Result{Check: "clock", Level: Fail, Message: fmt.Sprintf("clock is at least %s off from %s (more than %s: registry timestamps and token expiries break)", beyond, ref.URL, maxSkew), Fix: fix}
	case beyond > clockWarn:
		return Result{Check: "clock", Level: Warn, Message: fmt.Sprintf("clock is at least %s off from %s", beyond, ref.URL), Fix: fix}
	}
	return Result{Check: "clock", Level: OK, Message: fmt.Sprintf("within %s of %s", clockWarn, ref.URL)}
}

// checkPorts checks every listener.
func checkPorts(ctx context.Context, n Node, sys System) []Result {
	out := make([]Result, 0, len(n.Listeners))
	for _, l := range n.Listeners {
		out = append(out, checkPort(ctx, l, sys))
	}
	return out
}

// checkPort binds l's address; a busy port is fine when a ron answers on it.
func checkPort(ctx context.Context, l Listener, sys System) Result {
	check := "port:" + l.Key
	host, port, err := net.SplitHostPort(l.Addr)
	if err != nil {
		return Result{Check: check, Level: Fail, Message: fmt.Sprintf("%q is not host:port", l.Addr), Fix: "correct " + l.Key}
	}
	if port == "0" {
		return Result{Check: check, Level: Skip, Message: l.Addr + ": port 0, the kernel picks a free port"}
	}
	ln, err := net.Listen("tcp", l.Addr)
	if err == nil {
		_ = ln.Close()
		return Result{Check: check, Level: OK, Message: l.Addr + " is free"}
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return Result{Check: check, Level: Fail, Message: fmt.Sprintf("cannot bind %s: %v", l.Addr, err), Fix: bindFix(err, l.Key)}
	}
	if v, ok := ronAt(ctx, sys, net.JoinHostPort(probeHost(host), port)); ok {
		return Result{Check: check, Level: OK, Message: fmt.Sprintf("%s is in use by a running ron (%s)", l.Addr, v)}
	}
	return Result{Check: check, Level: Fail, Message: l.Addr + " is in use by another program",
		Fix: fmt.Sprintf("stop it (ss -ltnp 'sport = :%s' names it) or change %s", port, l.Key)}
}

// bindFix says what to do about a bind error other than "in use".
func bindFix(err error, key string) string {
	switch {
	case errors.Is(err, syscall.EACCES):
		return "ports below 1024 need CAP_NET_BIND_SERVICE (AmbientCapabilities= in the unit), or use a higher port in " + key
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return "use an address of this host (or 0.0.0.0 with an advertise_url) in " + key
	}
	return "correct " + key
}

// probeHost is where to reach a listener bound to host.
func probeHost(host string) string {
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return "127.0.0.1"
	}
	return host
}

// ronAt reports whether a ron listener answers at addr: /healthz is
// {"status":"ok"} and /version names a version.
func ronAt(ctx context.Context, sys System, addr string) (string, bool) {
	resp, body, err := get(ctx, sys, "http://"+addr+"/healthz")
	var h struct{ Status string }
	if err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal(body, &h) != nil || h.Status != "ok" {
		return "", false
	}
	resp, body, err = get(ctx, sys, "http://"+addr+"/version")
	var v struct{ Version string }
	if err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal(body, &v) != nil || v.Version == "" {
		return "", false
	}
	return "version " + v.Version, true
}
