// Package sdnotify speaks systemd's service notification protocol
// (sd_notify(3)) over the plain notify socket, without libsystemd: a
// Type=notify unit learns from ron when it is ready (READY=1), reloading
// (RELOADING=1 … READY=1), stopping (STOPPING=1) and still alive
// (WATCHDOG=1), with a human-readable STATUS= line beside each.
//
// FromEnv reads what systemd passes in the environment ($NOTIFY_SOCKET,
// $WATCHDOG_USEC, $WATCHDOG_PID); an Agent turns a node's lifecycle into
// messages. Without $NOTIFY_SOCKET nothing is sent.
package sdnotify

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Sender delivers one notification: newline-separated KEY=VALUE
// assignments in a single datagram. Send must respect ctx's deadline.
type Sender interface {
	Send(ctx context.Context, msg string) error
}

// Socket is the Sender for systemd's notify socket: a unix datagram socket
// named by a filesystem path or, with a leading '@', an abstract name.
type Socket struct {
	addr *net.UnixAddr
}

// NewSocket returns a Socket for a $NOTIFY_SOCKET value: an absolute path
// or an abstract name starting with '@'. Other forms (vsock: …) are refused.
func NewSocket(name string) (*Socket, error) {
	if len(name) < 2 || (name[0] != '/' && name[0] != '@') {
		return nil, fmt.Errorf("sdnotify: NOTIFY_SOCKET %q is neither an absolute path nor an abstract @name", name)
	}
	// Go's net package maps a leading '@' to the abstract namespace.
	return &Socket{addr: &net.UnixAddr{Name: name, Net: "unixgram"}}, nil
}

// Addr is the socket's name as given to NewSocket.
func (s *Socket) Addr() string { return s.addr.Name }

// Send writes msg as one datagram. Each call uses its own short-lived
// connection, so a Socket is safe for concurrent use and holds nothing open.
func (s *Socket) Send(ctx context.Context, msg string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unixgram", s.addr.String())
	if err != nil {
		return fmt.Errorf("sdnotify: %w", err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		if err := c.SetWriteDeadline(dl); err != nil {
			return fmt.Errorf("sdnotify: %w", err)
		}
	}
	if _, err := c.Write([]byte(msg)); err != nil {
		return fmt.Errorf("sdnotify: %w", err)
	}
	return nil
}

// Env is what systemd tells a notify-type service through its environment.
type Env struct {
	// Sender is the notify socket; nil when $NOTIFY_SOCKET is unset (not
	// run by systemd as Type=notify): then nothing is to be sent.
	Sender Sender
	// Watchdog is $WATCHDOG_USEC when it is meant for this process
	// ($WATCHDOG_PID unset or equal to its pid), else 0. Keep-alives are
	// due every Watchdog/2.
	Watchdog time.Duration
}

// FromEnv reads $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID through
// getenv for the process pid. A malformed value is an error; the Env then
// still holds what could be read (a bad watchdog leaves Sender set).
func FromEnv(getenv func(string) string, pid int) (Env, error) {
	var env Env
	if name := getenv("NOTIFY_SOCKET"); name != "" {
		s, err := NewSocket(name)
		if err != nil {
			return env, err
		}
		env.Sender = s
	}
	d, err := watchdogFromEnv(getenv, pid)
	env.Watchdog = d
	return env, err
}

// watchdogFromEnv parses $WATCHDOG_USEC, honouring $WATCHDOG_PID.
func watchdogFromEnv(getenv func(string) string, pid int) (time.Duration, error) {
	usec := strings.TrimSpace(getenv("WATCHDOG_USEC"))
	if usec == "" {
		return 0, nil
	}
	if p := strings.TrimSpace(getenv("WATCHDOG_PID")); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("sdnotify: WATCHDOG_PID %q is not a pid", p)
		}
		if n != pid {
			return 0, nil // meant for another process
		}
	}
	n, err := strconv.ParseUint(usec, 10, 63)
	if err != nil || n == 0 || n > uint64(time.Duration(1<<62)/time.Microsecond) {
		return 0, fmt.Errorf("sdnotify: WATCHDOG_USEC %q is not a positive number of microseconds", usec)
	}
	return time.Duration(n) * time.Microsecond, nil
}
