package pipenet

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDialAcceptRefuseClose(t *testing.T) {
	l := New("x.test:80")
	accepted := make(chan net.Conn, 1)
	go func() { // the accepting side; ends after one connection
		c, err := l.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	c, err := l.DialContext(context.Background(), "tcp", "x.test:80")
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	go func() { _, _ = s.Write([]byte("hi")) }()
	buf := make([]byte, 2)
	if _, err := c.Read(buf); err != nil || string(buf) != "hi" {
		t.Fatalf("read %q, %v", buf, err)
	}
	l.DropAll()
	if _, err := c.Read(buf); err == nil {
		t.Fatal("read after DropAll succeeded")
	}
	c.Close()
	l.SetRefuse(true)
	if _, err := l.DialContext(context.Background(), "tcp", ""); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("refused dial: %v", err)
	}
	l.SetRefuse(false)
	l.Close()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("accept after close: %v", err)
	}
	if _, err := l.DialContext(context.Background(), "tcp", ""); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial after close: %v", err)
	}
	if n := len(l.DialTimes()); n != 3 || l.Addr().String() != "x.test:80" {
		t.Fatalf("%d dials, addr %s", n, l.Addr())
	}
}
