// Package pipenet is an in-memory network for tests: a net.Listener whose
// connections are net.Pipe pairs, so that an HTTP server and Go's HTTP
// client run inside a testing/synctest bubble (no real sockets, fake time).
package pipenet

import (
	"context"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// Listener is an in-memory listener. Dial it with DialContext (an
// http.Transport's DialContext). Safe for concurrent use.
type Listener struct {
	addr  string
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once

	mu      sync.Mutex
	servers []net.Conn  // server ends handed out
	refuse  bool        // dials fail while set
	dials   []time.Time // when each dial was attempted
}

// New returns a listener whose Addr is addr (e.g. "upstream.test:80").
func New(addr string) *Listener {
	return &Listener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for the next dialled connection.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and makes later dials fail; it is idempotent.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is the address given to New.
func (l *Listener) Addr() net.Addr { return addr(l.addr) }

// DialContext connects a new pipe to the listener. While SetRefuse(true)
// holds, or after Close, it fails like a host refusing connections
// (ECONNREFUSED); when ctx ends first it returns ctx's error.
func (l *Listener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	l.mu.Lock()
	l.dials = append(l.dials, time.Now())
	refuse := l.refuse
	l.mu.Unlock()
	if refuse {
		return nil, refused()
	}
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		l.mu.Lock()
		l.servers = append(l.servers, server)
		l.mu.Unlock()
		return client, nil
	case <-l.done:
	case <-ctx.Done():
	}
	server.Close()
	client.Close()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, refused()
}

// SetRefuse makes dials fail (true) or succeed again (false).
func (l *Listener) SetRefuse(on bool) {
	l.mu.Lock()
	l.refuse = on
	l.mu.Unlock()
}

// DialTimes returns when each dial was attempted.
func (l *Listener) DialTimes() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.dials...)
}

// DropAll closes the server end of every connection made so far.
func (l *Listener) DropAll() {
	l.mu.Lock()
	servers := l.servers
	l.servers = nil
	l.mu.Unlock()
	for _, c := range servers {
		c.Close()
	}
}

func refused() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

type addr string

func (addr) Network() string  { return "pipe" }
func (a addr) String() string { return string(a) }
