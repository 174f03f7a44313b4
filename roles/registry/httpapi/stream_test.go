package httpapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/roles/registry/registryapi"
)

// frame is one SSE frame as a client reads it.
type frame struct {
	retry, comment, id, event string
	data                      registryapi.Update
}

// sseReader reads frames from an open stream response.
type sseReader struct {
	t    *testing.T
	resp *http.Response
	sc   *bufio.Scanner
}

// stream opens GET path (default /registry/stream) with headers and checks
// the 200 text/event-stream answer.
func (e *env) stream(path string, hdr ...string) *sseReader {
	e.t.Helper()
	if path == "" {
		path = "/registry/stream"
	}
	resp := e.open(http.MethodGet, path, nil, hdr...)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		resp.Body.Close()
		e.t.Fatalf("stream: %d %v", resp.StatusCode, resp.Header)
	}
	return &sseReader{t: e.t, resp: resp, sc: bufio.NewScanner(resp.Body)}
}

// next reads one frame; ok is false at the end of the stream.
func (r *sseReader) next() (frame, bool) {
	r.t.Helper()
	var f frame
	seen := false
	for r.sc.Scan() {
		line := r.sc.Text()
		if line == "" {
			if seen {
				return f, true
			}
			continue
		}
		seen = true
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "":
			f.comment = value
		case "retry":
			f.retry = value
		case "id":
			f.id = value
		case "event":
			f.event = value
		case "data":
			if err := json.Unmarshal([]byte(value), &f.data); err != nil {
				r.t.Fatalf("data %q: %v", value, err)
			}
		}
	}
	return f, false
}

// must reads one frame and fails at the end of the stream.
func (r *sseReader) must() frame {
	r.t.Helper()
	f, ok := r.next()
	if !ok {
		r.t.Fatal("stream ended")
	}
	return f
}

// event reads one frame that must be the event of version v.
func (r *sseReader) event(v uint64) frame {
	r.t.Helper()
	f := r.must()
	if f.event != registryapi.EventUpdate || f.id != fmt.Sprint(v) || f.data.Version != v {
		r.t.Fatalf("frame %+v, want the event of version %d", f, v)
	}
	return f
}

// start reads the retry frame every stream begins with.
func (r *sseReader) start() *sseReader {
	r.t.Helper()
	if f := r.must(); f.retry != "2000" {
		r.t.Fatalf("first frame %+v, want retry: 2000", f)
	}
	return r
}

func (r *sseReader) close() { r.resp.Body.Close() }

func TestStreamReplayAndLive(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		var cms []string
		for i := range 3 {
			cms = append(cms, e.cycle(fmt.Sprint("r", i)).PayloadB3)
		}
		s := e.stream("", "Last-Event-ID", "1").start()
		defer s.close()
		for v := uint64(2); v <= 3; v++ {
			f := s.event(v)
			rec, _ := e.log.Read(v)
			if f.data.PayloadB3 != cms[v-1] || f.data.CorrID != fmt.Sprint("corr-r", v-1) || rec.CorrID != f.data.CorrID ||
				f.data.CommittedAt == "" {
				t.Fatalf("replayed %+v", f.data)
			}
		}
		cm := e.cycle("live")
		if f := s.event(4); f.data != (registryapi.Update{Version: 4, PayloadB3: cm.PayloadB3, CommittedAt: cm.CommittedAt, CorrID: "corr-live"}) {
			t.Fatalf("live %+v", f.data)
		}
		if got := e.metric("registry_sse_clients"); got != 1 {
			t.Fatalf("sse_clients %v", got)
		}
	})
}

func TestStreamStart(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		e.commitN(3)
		cases := []struct {
			path  string
			hdr   []string
			first uint64
		}{
			{"/registry/stream?since=0", nil, 1},
			{"/registry/stream?since=1", []string{"Last-Event-ID", "2"}, 3},  // the header wins
			{"/registry/stream?since=1", []string{"Last-Event-ID", "x2"}, 2}, // an invalid header does not
			{"", nil, 3},                               // fresh: HEAD first
			{"", []string{"Last-Event-ID", "99"}, 3},   // beyond HEAD: fresh
			{"", []string{"Last-Event-ID", "-1"}, 3},   // not decimal: fresh
			{"/registry/stream?since=abc", nil, 3},     // not decimal: fresh
			{"", []string{"Last-Event-ID", "0002"}, 3}, // leading zeros are decimal
		}
		for _, c := range cases {
			s := e.stream(c.path, c.hdr...).start()
			s.event(c.first)
			s.close()
		}
		e.minIdx.Store(2)
		s := e.stream("", "Last-Event-ID", "0").start() // pruned start: the gap shows
		s.event(2)
		s.event(3)
		s.close()
		e.minIdx.Store(-1)
		s = e.stream("", "Last-Event-ID", "3").start() // at HEAD: nothing until the next commit
		e.cycle("next")
		s.event(4)
		s.close()
	})
}

func TestStreamHeartbeat(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		e.update(func(s *Settings) { s.StreamHeartbeat = 2 * time.Second })
		s := e.stream("").start()
		defer s.close()
		s.event(0)
		began := time.Now()
		if f := s.must(); f.comment != "hb" || time.Since(began) != 2*time.Second {
			t.Fatalf("frame %+v after %v, want : hb after 2s", f, time.Since(began))
		}
		time.Sleep(time.Second)
		e.cycle("x") // a write restarts the idle timer
		s.event(1)
		began = time.Now()
		if f := s.must(); f.comment != "hb" || time.Since(began) != 2*time.Second {
			t.Fatalf("frame %+v after %v", f, time.Since(began))
		}
	})
}

func TestStreamSlowConsumerSkips(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		e.update(func(s *Settings) { s.StreamMaxLag = 2 })
		s := e.stream("").start()
		defer s.close()
		s.event(0)
		e.cycle("1")
		synctest.Wait() // the stream is blocked writing version 1
		for i := 2; i <= 5; i++ {
			e.cycle(fmt.Sprint(i))
		}
		s.event(1)
		if f := s.must(); f.comment != "skipped 2-4" {
			t.Fatalf("frame %+v, want : skipped 2-4", f)
		}
		s.event(5)
		if got := e.metric("registry_sse_dropped_total"); got != 3 {
			t.Fatalf("sse_dropped_total %v", got)
		}
	})
}

func TestStreamReplayIsNotSkipped(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		e.update(func(s *Settings) { s.StreamMaxLag = 2 })
		e.commitN(6)
		s := e.stream("/registry/stream?since=0").start()
		defer s.close()
		for v := uint64(1); v <= 6; v++ {
			s.event(v)
		}
	})
}

func TestStreamWriteTimeout(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		s := e.stream("").start()
		defer s.close()
		s.event(0)
		e.cycle("blocked") // never read
		synctest.Wait()
		time.Sleep(streamWriteTimeout + time.Second)
		synctest.Wait()
		if got := e.metric("registry_sse_disconnects_total", "reason", "write_timeout"); got != 1 {
			t.Fatalf("write_timeout disconnects %v", got)
		}
		if got := e.metric("registry_sse_clients"); got != 0 {
			t.Fatalf("sse_clients %v after the timeout", got)
		}
	})
}

func TestStreamMaxClientsAndClose(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		e.update(func(s *Settings) { s.StreamMaxClients = 1 })
		s := e.stream("").start()
		resp, body := e.request(http.MethodGet, "/registry/stream", nil)
		checkResp(t, "second stream", resp, body, want{429, "busy", nil, 1})
		if got := e.metric("busy_rejections_total", "endpoint", "/registry/stream"); got != 1 {
			t.Fatalf("busy_rejections %v", got)
		}
		s.close()
		synctest.Wait()
		if got := e.metric("registry_sse_disconnects_total", "reason", "client"); got != 1 {
			t.Fatalf("client disconnects %v", got)
		}
		s = e.stream("").start() // the slot is free again
		s.event(0)
		e.a.Hub().Close()
		if _, ok := s.next(); ok {
			t.Fatal("stream still open after the hub closed")
		}
		s.close()
		synctest.Wait()
		if got := e.metric("registry_sse_disconnects_total", "reason", "shutdown"); got != 1 {
			t.Fatalf("shutdown disconnects %v", got)
		}
		resp, body = e.request(http.MethodGet, "/registry/stream", nil)
		checkResp(t, "after close", resp, body, want{503, "draining", nil, 5})
	})
}

func TestStreamHead(t *testing.T) {
	run(t, func(t *testing.T, e *env) {
		resp, body := e.request(http.MethodHead, "/registry/stream", nil)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || len(body) != 0 {
			t.Fatalf("HEAD stream: %d %v %q", resp.StatusCode, resp.Header, body)
		}
		synctest.Wait()
		if got := e.metric("registry_sse_clients"); got != 0 {
			t.Fatalf("sse_clients %v", got)
		}
	})
}
