package registryapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/runtime"
)

// Watch tuning of docs/registry.md §9.
const (
	// watchIdle reconnects a stream that sent nothing, not even a
	// heartbeat (at most 60 s apart), for this long.
	watchIdle = 75 * time.Second
	// maxSSELine bounds one SSE line.
	maxSSELine = 64 << 10
)

// WatchBuffer is the capacity of the channel every Client.Watch
// implementation returns.
const WatchBuffer = 64

// watchBackoff paces reconnections: 100 ms doubling to 5 s, ±20 % jitter.
var watchBackoff = runtime.Backoff{Base: 100 * time.Millisecond, Max: 5 * time.Second, Factor: 2, Jitter: 0.2}

// Watch implements Client with GET /registry/stream. The first connection
// is made before Watch returns (its failure is returned); afterwards a
// dropped stream is reopened with Last-Event-ID set to the last version
// delivered, backing off from 100 ms to 5 s with jitter, until ctx ends.
// One goroutine (registry-watch) per call owns the stream; it closes the
// channel when ctx ends.
func (h *HTTPClient) Watch(ctx context.Context, since *uint64) (<-chan Update, error) {
	w := &watcher{h: h}
	if since != nil {
		v := *since
		w.last = &v
	}
	conn, err := w.connect(ctx)
	if err != nil {
		return nil, err
	}
	out := make(chan Update, WatchBuffer)
	go w.run(ctx, conn, out) // registry-watch: owned by ctx, ends with it
	return out, nil
}

// watcher is one Watch call's state, owned by its goroutine.
type watcher struct {
	h    *HTTPClient
	last *uint64 // last version delivered
}

// watchConn is one open stream.
type watchConn struct {
	resp   *http.Response
	cancel context.CancelFunc
}

// connect opens a stream resuming after w.last.
func (w *watcher) connect(ctx context.Context) (*watchConn, error) {
	cctx, cancel := context.WithCancel(ctx)
	req := &client.Request{Path: "/registry/stream", Op: "GET " + RouteStream, Retry: client.RetryNever,
		Header: http.Header{"Accept": {MediaTypeSSE}}}
	if w.last != nil {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(*w.last, 10))
	}
	resp, err := w.h.c.Do(cctx, req)
	if err != nil {
		cancel()
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != MediaTypeSSE {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("registry client: stream answered %q, want %s", mt, MediaTypeSSE)
	}
	return &watchConn{resp: resp, cancel: cancel}, nil
}

// run delivers conn's events, then reconnects with backoff until ctx ends.
func (w *watcher) run(ctx context.Context, conn *watchConn, out chan Update) {
	defer close(out)
	attempt := 0
	for {
		if conn != nil {
			attempt = 0
			w.read(conn, out)
			conn.resp.Body.Close()
			conn.cancel()
		}
		if !runtime.Sleep(ctx, watchBackoff.Delay(attempt, nil)) {
			return
		}
		attempt++
		conn, _ = w.connect(ctx) // a failure backs off and retries
	}
}

// read parses SSE frames from conn until it fails or goes idle for
// watchIdle, delivering each new version.
func (w *watcher) read(conn *watchConn, out chan Update) {
	idle := time.AfterFunc(watchIdle, conn.cancel)
	defer idle.Stop()
	sc := bufio.NewScanner(conn.resp.Body)
	sc.Buffer(make([]byte, 4096), maxSSELine)
	var f sseFrame
	for sc.Scan() {
		idle.Reset(watchIdle)
		if u, ok := f.line(sc.Bytes()); ok {
			w.deliver(u, out)
		}
	}
}

// deliver pushes u unless it is not newer than the last delivered version.
func (w *watcher) deliver(u Update, out chan Update) {
	if w.last != nil && u.Version <= *w.last {
		return
	}
	v := u.Version
	w.last = &v
	PushLatest(out, u)
}

// PushLatest sends u to out, dropping the oldest queued updates while out is
// full (drop-to-latest; order is kept): how every Client.Watch
// implementation delivers an update.
func PushLatest(out chan Update, u Update) {
	for {
		select {
		case out <- u:
			return
		default:
		}
		select {
		case <-out:
		default:
		}
	}
}

// sseFrame accumulates the fields of one SSE event.
type sseFrame struct {
	event string
	data  []byte
}

// line consumes one line; at a blank line it completes the frame and
// returns its update when it is a well-formed registry.update.
func (f *sseFrame) line(l []byte) (Update, bool) {
	if len(l) == 0 {
		ev, data := f.event, f.data
		*f = sseFrame{}
		var u Update
		ok := ev == EventUpdate && json.Unmarshal(data, &u) == nil
		return u, ok
	}
	if l[0] == ':' {
		return Update{}, false // comment: heartbeat or skipped range
	}
	name, value, _ := bytes.Cut(l, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "event":
		f.event = string(value)
	case "data":
		if f.data != nil {
			f.data = append(f.data, '\n')
		}
		f.data = append(f.data, value...)
	}
	return Update{}, false
}
