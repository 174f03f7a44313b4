package httpx

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// net/http writes a response through a 4 KiB buffer in front of the
// connection: a response larger than that leaves in two write(2) calls or
// more (the buffer's first flush carries the headers and the start of the
// body, the rest follows), where a static file server sends one writev or
// sendfile. A coalescing connection holds that first flush back, for a
// response whose handler asked for it (CoalesceResponse), and sends it
// together with the next write in one writev.
//
// Every method that writes or flushes runs on the connection's serving
// goroutine (net/http's conn.serve and the handler it calls), so the held
// bytes need no lock: Write, SetWriteDeadline / SetDeadline, ReadFrom,
// CloseWrite and the server's ConnState hook for StateIdle and
// StateHijacked. The held bytes go out, under the write deadline in force
// when they were written, at the next of these:
//
//   - the next Write (one writev of both);
//   - SetWriteDeadline or SetDeadline (net/http clears the write deadline
//     right after it finished a response; the edge sets one per body chunk);
//   - ReadFrom (sendfile; before a body section with MSG_MORE, so that
//     headers and body share segments), CloseWrite;
//   - the StateIdle or StateHijacked hook.
//
// Close drops them: net/http closes a connection whose response it did not
// finish (a handler that aborted), where a short body is the intended
// outcome. A failed deferred send closes the connection, so the next read
// or write on it fails as a failed write would have made it.
//
// Only a response that is produced whole without waiting should be
// coalesced: a handler that flushes a partial body and then waits (a
// stream) must not call CoalesceResponse, or the client would see the held
// bytes only when the next write comes.

// coalesceHold is the largest write held back: one flush of net/http's
// connection buffer.
const coalesceHold = 4 << 10

var holdBufs = sync.Pool{New: func() any { return new([coalesceHold]byte) }}

// coalesceConn is a server connection that can hold one write back.
type coalesceConn struct {
	net.Conn
	armed bool                // the current response asked to be coalesced
	held  *[coalesceHold]byte // the held write (nil when none), from holdBufs
	n     int                 // bytes in held
}

// coalesceListener wraps every accepted connection in a coalesceConn.
type coalesceListener struct{ net.Listener }

// Accept implements net.Listener.
func (l coalesceListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &coalesceConn{Conn: c}, nil
}

// Write implements io.Writer: it holds a write of at most coalesceHold
// bytes while the response is armed and nothing is held, sends held bytes
// and p together in one writev, and otherwise writes p through.
func (c *coalesceConn) Write(p []byte) (int, error) {
	if c.n > 0 {
		return c.writeHeldWith(p)
	}
	if c.armed && len(p) > 0 && len(p) <= coalesceHold {
		c.held = holdBufs.Get().(*[coalesceHold]byte)
		c.n = copy(c.held[:], p)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// writeHeldWith sends the held bytes and p in one writev and returns how
// many of p's bytes went out.
func (c *coalesceConn) writeHeldWith(p []byte) (int, error) {
	held := c.n
	bufs := net.Buffers{c.held[:held], p}
	n, err := bufs.WriteTo(c.Conn)
	c.release()
	if n < int64(held) {
		if err == nil {
			err = io.ErrShortWrite
		}
		return 0, err
	}
	return int(n - int64(held)), err
}

// flush sends the held bytes, if any. A failure closes the connection:
// there is no caller to report it to.
func (c *coalesceConn) flush() {
	if err := c.sendHeld(); err != nil {
		_ = c.Conn.Close()
	}
}

// release returns the hold buffer.
func (c *coalesceConn) release() {
	holdBufs.Put(c.held)
	c.held, c.n = nil, 0
}

// SetWriteDeadline sends the held bytes under the deadline in force, then
// sets the new one.
func (c *coalesceConn) SetWriteDeadline(t time.Time) error {
	c.flush()
	return c.Conn.SetWriteDeadline(t)
}

// SetDeadline sends the held bytes under the write deadline in force, then
// sets the new deadlines.
func (c *coalesceConn) SetDeadline(t time.Time) error {
	c.flush()
	return c.Conn.SetDeadline(t)
}

// ReadFrom sends the held bytes, then copies r with the connection's own
// ReadFrom (sendfile for a file). When r is an *io.LimitedReader with bytes
// to give (a body section), the held bytes go with MSG_MORE, so headers and
// body leave together; should r give nothing after all, the held bytes are
// pushed out at once.
func (c *coalesceConn) ReadFrom(r io.Reader) (int64, error) {
	corked := false
	if lr, ok := r.(*io.LimitedReader); ok && lr.N > 0 && c.n > 0 {
		err := sendMore(c.Conn, c.held[:c.n])
		c.release()
		if err != nil {
			return 0, err
		}
		corked = true
	} else if err := c.sendHeld(); err != nil {
		return 0, err
	}
	var n int64
	var err error
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(writerOnly{c.Conn}, r)
	}
	if corked && n == 0 {
		push(c.Conn)
	}
	return n, err
}

// push sends what a MSG_MORE send left queued: setting TCP_NODELAY (again)
// makes the kernel send pending segments at once.
func push(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
}

// sendHeld sends the held bytes and reports the error.
func (c *coalesceConn) sendHeld() error {
	if c.n == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.held[:c.n])
	c.release()
	return err
}

// CloseWrite sends the held bytes, then half-closes a TCP connection.
func (c *coalesceConn) CloseWrite() error {
	if err := c.sendHeld(); err != nil {
		return err
	}
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// endResponse sends the held bytes and disarms: the response is complete
// (StateIdle) or the connection was taken over (StateHijacked).
func (c *coalesceConn) endResponse() {
	c.flush()
	c.armed = false
}

// writerOnly hides a writer's other methods (ReadFrom) from io.Copy.
type writerOnly struct{ io.Writer }

// connCtxKey keys the serving connection in request contexts.
type connCtxKey struct{}

// withConn is the server's ConnContext: it records a coalescing connection
// in the connection's context.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*coalesceConn); ok {
		return context.WithValue(ctx, connCtxKey{}, cc)
	}
	return ctx
}

// connStateHook ends the armed response of a coalescing connection when
// net/http reports the response complete or the connection hijacked.
func connStateHook(c net.Conn, state http.ConnState) {
	if state != http.StateIdle && state != http.StateHijacked {
		return
	}
	if cc, ok := c.(*coalesceConn); ok {
		cc.endResponse()
	}
}

// CoalesceResponse asks the connection serving r to send the response the
// handler is writing in as few write calls as possible: headers and body
// together in one writev, where net/http alone would write its 4 KiB buffer
// and then the rest. Call it from the handler, on its goroutine, before
// writing, and only for a response written whole without waiting between
// writes (a cached body); never for a stream that flushes part of a body
// and then waits for more. It applies to the current response only and
// does nothing for a request with a body (the handler may read it after an
// interim 100 Continue), or when r was not received by a Server's listener
// (httptest, in-process transports).
func CoalesceResponse(r *http.Request) {
	if r.Body != nil && r.Body != http.NoBody {
		return
	}
	if cc, ok := r.Context().Value(connCtxKey{}).(*coalesceConn); ok {
		cc.armed = true
	}
}
