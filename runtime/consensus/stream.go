package consensus

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// streamLayer is the Raft transport's TCP layer. Unlike raft's own, it
// keeps every connection it accepted or dialled and closes them all on
// Close, so a closed Group leaves no connection handler behind (raft's
// handlers of inbound connections otherwise end only when the peer hangs
// up).
type streamLayer struct {
	ln  net.Listener
	adv net.Addr

	mu     sync.Mutex
	conns  map[*trackedConn]struct{}
	closed bool
}

var _ raft.StreamLayer = (*streamLayer)(nil)

// listen binds bind; adv, when not nil, is the address peers dial. The
// address peers get must not be unspecified.
func listen(bind string, adv net.Addr) (*streamLayer, error) {
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, err
	}
	s := &streamLayer{ln: ln, adv: adv, conns: map[*trackedConn]struct{}{}}
	if a, ok := s.Addr().(*net.TCPAddr); !ok || a.IP == nil || a.IP.IsUnspecified() {
		_ = ln.Close()
		return nil, fmt.Errorf("address %s cannot be dialled by other servers: set an advertise address", s.Addr())
	}
	return s, nil
}

// Accept implements net.Listener.
func (s *streamLayer) Accept() (net.Conn, error) {
	c, err := s.ln.Accept()
	if err != nil {
		return nil, err
	}
	return s.track(c)
}

// Dial implements raft.StreamLayer.
func (s *streamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	c, err := (&net.Dialer{Timeout: timeout}).Dial("tcp", string(addr))
	if err != nil {
		return nil, err
	}
	return s.track(c)
}

// Addr implements net.Listener: the advertised address, else the bound one.
func (s *streamLayer) Addr() net.Addr {
	if s.adv != nil {
		return s.adv
	}
	return s.ln.Addr()
}

// Close implements net.Listener: it closes the listener and every open
// connection; later connections are refused.
func (s *streamLayer) Close() error {
	s.mu.Lock()
	s.closed = true
	conns := s.conns
	s.conns = map[*trackedConn]struct{}{}
	s.mu.Unlock()
	err := s.ln.Close()
	for c := range conns {
		_ = c.Conn.Close()
	}
	return err
}

// errLayerClosed refuses a connection made while the layer closes.
var errLayerClosed = errors.New("consensus: transport closed")

// track records c until it is closed.
func (s *streamLayer) track(c net.Conn) (net.Conn, error) {
	tc := &trackedConn{Conn: c, s: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = c.Close()
		return nil, errLayerClosed
	}
	s.conns[tc] = struct{}{}
	return tc, nil
}

// trackedConn forgets itself when closed.
type trackedConn struct {
	net.Conn
	s *streamLayer
}

func (c *trackedConn) Close() error {
	c.s.mu.Lock()
	delete(c.s.conns, c)
	c.s.mu.Unlock()
	return c.Conn.Close()
}
