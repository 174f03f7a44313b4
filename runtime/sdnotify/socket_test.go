package sdnotify

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFromEnv(t *testing.T) {
	const pid = 4242
	for _, tc := range []struct {
		name     string
		env      map[string]string
		socket   string // "" = no Sender
		watchdog time.Duration
		err      string
	}{
		{name: "nothing set", env: map[string]string{}},
		{name: "path socket", env: map[string]string{"NOTIFY_SOCKET": "/run/systemd/notify"}, socket: "/run/systemd/notify"},
		{name: "abstract socket", env: map[string]string{"NOTIFY_SOCKET": "@sd-notify"}, socket: "@sd-notify"},
		{name: "relative socket", env: map[string]string{"NOTIFY_SOCKET": "notify"}, err: "neither an absolute path"},
		{name: "vsock socket", env: map[string]string{"NOTIFY_SOCKET": "vsock:2:1234"}, err: "neither an absolute path"},
		{name: "bare at", env: map[string]string{"NOTIFY_SOCKET": "@"}, err: "neither an absolute path"},
		{name: "watchdog for us", env: map[string]string{"NOTIFY_SOCKET": "/n", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "4242"},
			socket: "/n", watchdog: 30 * time.Second},
		{name: "watchdog without pid", env: map[string]string{"WATCHDOG_USEC": "500000"}, watchdog: 500 * time.Millisecond},
		{name: "watchdog for another pid", env: map[string]string{"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}},
		{name: "watchdog zero", env: map[string]string{"WATCHDOG_USEC": "0"}, err: "WATCHDOG_USEC"},
		{name: "watchdog negative", env: map[string]string{"WATCHDOG_USEC": "-5"}, err: "WATCHDOG_USEC"},
		{name: "watchdog text", env: map[string]string{"WATCHDOG_USEC": "30s"}, err: "WATCHDOG_USEC"},
		{name: "watchdog huge", env: map[string]string{"WATCHDOG_USEC": "99999999999999999999"}, err: "WATCHDOG_USEC"},
		{name: "bad watchdog pid", env: map[string]string{"WATCHDOG_USEC": "1000", "WATCHDOG_PID": "x"}, err: "WATCHDOG_PID"},
		{name: "bad watchdog keeps socket", env: map[string]string{"NOTIFY_SOCKET": "/n", "WATCHDOG_USEC": "x"}, socket: "/n", err: "WATCHDOG_USEC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, err := FromEnv(func(k string) string { return tc.env[k] }, pid)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			got := ""
			if s, ok := env.Sender.(*Socket); ok {
				got = s.Addr()
			}
			if got != tc.socket || env.Watchdog != tc.watchdog {
				t.Fatalf("got socket %q watchdog %s, want %q %s", got, env.Watchdog, tc.socket, tc.watchdog)
			}
		})
	}
}

// listen opens a fake notify socket; its name is a short path in a temp
// dir, or an abstract name when abstract is set.
func listen(t *testing.T, abstract bool) (*net.UnixConn, string) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "n.sock")
	if abstract {
		name = fmt.Sprintf("@ron-sdnotify-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	}
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, name
}

// read returns the next datagram on c (failing after 10 s).
func read(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	buf := make([]byte, 4096)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, _, err := c.ReadFromUnix(buf)
	if err != nil {
		t.Fatalf("no notification: %v", err)
	}
	return string(buf[:n])
}

func TestSocketSend(t *testing.T) {
	for _, abstract := range []bool{false, true} {
		t.Run(fmt.Sprintf("abstract=%t", abstract), func(t *testing.T) {
			c, name := listen(t, abstract)
			env, err := FromEnv(envMap{"NOTIFY_SOCKET": name}.get, 1)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for _, msg := range []string{MsgReady + "\nSTATUS=ready", MsgWatchdog} {
				if err := env.Sender.Send(ctx, msg); err != nil {
					t.Fatal(err)
				}
				if got := read(t, c); got != msg {
					t.Fatalf("got %q, want %q", got, msg)
				}
			}
		})
	}
}

func TestSocketSendNoListener(t *testing.T) {
	s, err := NewSocket(filepath.Join(t.TempDir(), "absent.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Send(ctx, MsgReady); err == nil {
		t.Fatal("send to a missing socket succeeded")
	}
}

type envMap map[string]string

func (m envMap) get(k string) string { return m[k] }
