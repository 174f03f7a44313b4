package root

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/internal/node"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// watchRun runs watchStatus on a node with a hand-fed tick. Each send on
// the returned channel returns once the frame before it is drawn.
func watchRun(t *testing.T, admin, output string) (chan<- time.Time, *syncBuffer, func() error) {
	t.Helper()
	tick := make(chan time.Time) // unbuffered: a send completes when the loop waits again
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- watchStatus(ctx, out, watchOptions{admin: admin, output: output, interval: 2 * time.Second, tick: tick})
	}()
	stop := func() error { cancel(); return <-done }
	t.Cleanup(func() { cancel() })
	return tick, out, stop
}

// TestStatusWatch redraws the table on every tick, shows the node going
// away, and exits with the last probe's code.
func TestStatusWatch(t *testing.T) {
	n, shutdown := startStoppableNode(t)
	tick, out, stop := watchRun(t, n.AdminAddr(), "text")
	tick <- time.Time{} // frame 1 drawn
	tick <- time.Time{} // frame 2 drawn
	shutdown()
	tick <- time.Time{} // frame 3 drawn (it may have started before the shutdown)
	tick <- time.Time{} // frame 4 drawn, after the shutdown
	err := stop()
	frames := strings.Split(out.String(), "ron status "+n.AdminAddr()+"  every 2s  ")[1:]
	if len(frames) < 4 {
		t.Fatalf("%d frames:\n%s", len(frames), out)
	}
	for _, f := range frames[:2] {
		if !strings.Contains(f, "ready=true") || !strings.Contains(f, "ROLE") || !strings.Contains(f, "storage") {
			t.Fatalf("frame of a ready node:\n%s", f)
		}
	}
	if !strings.Contains(frames[3], "unreachable: ") {
		t.Fatalf("frame after shutdown:\n%s", frames[3])
	}
	var ee *cli.ExitError
	if !errors.As(err, &ee) || ee.Code != cli.ExitUnreachable {
		t.Fatalf("watch ended with %v, want exit 2 (last probe unreachable)", err)
	}
}

func TestStatusWatchJSON(t *testing.T) {
	n, _ := startNode(t, nil)
	tick, out, stop := watchRun(t, n.AdminAddr(), "json")
	tick <- time.Time{}
	tick <- time.Time{}
	if err := stop(); err != nil {
		t.Fatalf("ready node: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("%d lines: %s", len(lines), out)
	}
	for _, l := range lines {
		var st node.Status
		if err := json.Unmarshal([]byte(l), &st); err != nil || !st.Ready || len(st.Roles) == 0 {
			t.Fatalf("line %q: %v %+v", l, err, st)
		}
	}
	tick2, out2, stop2 := watchRun(t, "127.0.0.1:1", "json")
	tick2 <- time.Time{}
	_ = stop2()
	var e map[string]string
	if err := json.Unmarshal([]byte(strings.Split(out2.String(), "\n")[0]), &e); err != nil || e["error"] == "" {
		t.Fatalf("unreachable frame %q: %v", out2, err)
	}
}
