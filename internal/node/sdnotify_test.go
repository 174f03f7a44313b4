package node_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/node"
	"github.com/ronhq/ron/internal/node/nodetest"
	"github.com/ronhq/ron/runtime/sdnotify"
)

// fakeSystemd is a notify socket (unixgram listener in a temp dir) and the
// environment systemd would give ron with it.
type fakeSystemd struct {
	conn *net.UnixConn
	env  map[string]string
}

func newFakeSystemd(t *testing.T) *fakeSystemd {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &fakeSystemd{conn: c, env: map[string]string{"NOTIFY_SOCKET": path}}
}

// next returns the next notification that is not a STATUS= line alone
// (those report progress and may come at any time before READY=1). It
// fails after 10 s: the messages come from events, not from timers.
func (f *fakeSystemd) next(t *testing.T) string {
	t.Helper()
	buf := make([]byte, 4096)
	for {
		_ = f.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _, err := f.conn.ReadFromUnix(buf)
		if err != nil {
			t.Fatalf("no notification: %v", err)
		}
		if msg := string(buf[:n]); !strings.HasPrefix(msg, "STATUS=") {
			return msg
		}
	}
}

// none checks that nothing more was sent.
func (f *fakeSystemd) none(t *testing.T) {
	t.Helper()
	_ = f.conn.SetReadDeadline(time.Now())
	buf := make([]byte, 4096)
	if n, _, err := f.conn.ReadFromUnix(buf); err == nil {
		t.Fatalf("unexpected notification %q", buf[:n])
	}
}

// fourRoleConfig is an ephemeral config for the registry, index, storage
// and gateway roles (amnesia, free ports).
func fourRoleConfig(t *testing.T) node.Config {
	cfg := node.EphemeralConfig(t.TempDir())
	cfg.Roles = []string{"registry", "index", "storage", "gateway"}
	return cfg
}

// runNode builds a node from cfg (reloads yield cfg again), lets prepare
// adjust it, and runs it; Run's result arrives on the channel.
func runNode(t *testing.T, cfg node.Config, prepare func(*node.Node)) (*node.Node, <-chan error) {
	t.Helper()
	reloaded := cfg
	n, err := node.NewNode(&cfg, func() (*node.Config, error) { c := reloaded; return &c, nil }, os.Stderr, "test")
	if err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(n)
	}
	done := make(chan error, 1)
	go func() { done <- n.Run(context.Background()) }()
	return n, done
}

// runNotifyingNode runs a node told about sd as `ron serve` would be.
func runNotifyingNode(t *testing.T, sd *fakeSystemd) (*node.Node, <-chan error) {
	t.Helper()
	env, err := sdnotify.FromEnv(func(k string) string { return sd.env[k] }, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return runNode(t, fourRoleConfig(t), func(n *node.Node) { n.NotifySystemd(env) })
}

// TestSystemdNotifyProtocol drives a real node against a fake NOTIFY_SOCKET:
// READY=1 once the node is ready, RELOADING=1 (with MONOTONIC_USEC) and
// READY=1 around every reload, accepted or refused, STOPPING=1 first at
// shutdown and nothing after.
func TestSystemdNotifyProtocol(t *testing.T) {
	sd := newFakeSystemd(t)
	n, done := runNotifyingNode(t, sd)
	if msg := sd.next(t); msg != "READY=1\nSTATUS=ready" {
		t.Fatalf("first notification %q, want READY=1", msg)
	}
	<-n.Running() // orders the admin listener's start before AdminAddr (the socket does not)
	var rd node.ReadyzReply
	if code := nodetest.GetJSON(t, "GET", "http://"+n.AdminAddr()+"/readyz", "", &rd); code != 200 || !rd.Ready {
		t.Fatalf("READY=1 sent while /readyz = %d %+v", code, rd)
	}

	if _, err := n.Reload(); err != nil {
		t.Fatal(err)
	}
	expectReloading(t, sd.next(t))
	if msg := sd.next(t); msg != "READY=1\nSTATUS=ready; config v2 loaded" {
		t.Fatalf("after reload: %q", msg)
	}
	node.SetReloadSource(n, func() (*node.Config, error) { return nil, errors.New("config file: bad TOML") })
	if _, err := n.Reload(); err == nil {
		t.Fatal("broken config reloaded")
	}
	expectReloading(t, sd.next(t))
	if msg := sd.next(t); msg != "READY=1\nSTATUS=ready; reload refused: config file: bad TOML" {
		t.Fatalf("after refused reload: %q", msg)
	}

	n.Shutdown("test")
	if msg := sd.next(t); msg != "STOPPING=1\nSTATUS=shutting down: draining" {
		t.Fatalf("first notification at shutdown %q, want STOPPING=1", msg)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sd.none(t)
}

func expectReloading(t *testing.T, msg string) {
	t.Helper()
	lines := strings.Split(msg, "\n")
	if len(lines) != 3 || lines[0] != "RELOADING=1" || !strings.HasPrefix(lines[1], "MONOTONIC_USEC=") ||
		lines[2] != "STATUS=reloading configuration" {
		t.Fatalf("reload began with %q", msg)
	}
	if usec, err := strconv.ParseUint(strings.TrimPrefix(lines[1], "MONOTONIC_USEC="), 10, 64); err != nil || usec == 0 {
		t.Fatalf("MONOTONIC_USEC: %q", lines[1])
	}
}

// TestSystemdNotifyEnvironment: a watchdog meant for another process
// (WATCHDOG_PID) sends no keep-alives; without NOTIFY_SOCKET nothing is sent.
func TestSystemdNotifyEnvironment(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"WATCHDOG_USEC": "1000", "WATCHDOG_PID": "1"}[k] }
	env, err := sdnotify.FromEnv(getenv, os.Getpid())
	if err != nil || env.Sender != nil || env.Watchdog != 0 {
		t.Fatalf("env %+v err %v", env, err)
	}
	sd := newFakeSystemd(t)
	delete(sd.env, "NOTIFY_SOCKET")
	n, done := runNotifyingNode(t, sd)
	<-n.Running()
	if _, err := n.Reload(); err != nil {
		t.Fatal(err)
	}
	n.Shutdown("test")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sd.none(t)
}
