package httpx

import (
	"log"
	"net"
	"net/http"
	"sync"

	"github.com/rs/zerolog"
)

// connTracker counts open connections per client IP for max_conns_per_ip.
type connTracker struct {
	mu    sync.RWMutex
	byIP  map[string]int
	conns map[net.Conn]string
}

func newConnTracker() *connTracker {
	return &connTracker{byIP: map[string]int{}, conns: map[net.Conn]string{}}
}

func (t *connTracker) track(c net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew, http.StateClosed, http.StateHijacked:
	default:
		return // active, idle: every request twice; nothing to count
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch state {
	case http.StateNew:
		ip := hostOf(c.RemoteAddr().String())
		t.conns[c] = ip
		t.byIP[ip]++
	case http.StateClosed, http.StateHijacked:
		ip, ok := t.conns[c]
		if !ok {
			return
		}
		delete(t.conns, c)
		if t.byIP[ip]--; t.byIP[ip] <= 0 {
			delete(t.byIP, ip)
		}
	}
}

func (t *connTracker) count(ip string) int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.byIP[ip]
}

func (t *connTracker) active() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.conns)
}

func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

// zerologStdLogger routes net/http's own error log (TLS noise, hijack
// warnings) into the structured logger at debug level.
func zerologStdLogger(l zerolog.Logger) *log.Logger {
	return log.New(debugWriter{l}, "", 0)
}

type debugWriter struct{ l zerolog.Logger }

func (w debugWriter) Write(p []byte) (int, error) {
	w.l.Debug().Str("component", "net/http").Msg(string(p))
	return len(p), nil
}
