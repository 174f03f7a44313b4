package vfetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

// Requests carry only Accept-Encoding, the User-Agent, Range and what
// Prepare adds.
func TestRequestHeaders(t *testing.T) {
	data, id := pattern(3*cs + 5)
	n := &fakeNet{answer: source(data, "text/plain")}
	r := n.requester()
	r.Prepare = func(req *http.Request) { req.Header.Set("Authorization", "Bearer tok") }
	tr, err := r.Outboard(t.Context(), "http://s.test", id)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Open(t.Context(), "http://s.test", tr, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	reqs := n.requests()
	if len(reqs) != 2 || reqs[0].URL.Path != "/o/"+id.String()+"/outboard" || reqs[1].Header.Get("Range") != "bytes=65536-131071" {
		t.Fatalf("%d requests: %v", len(reqs), reqs)
	}
	for _, req := range reqs {
		var keys []string
		for k := range req.Header {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		want := []string{"Accept-Encoding", "Authorization", "User-Agent"}
		if req.Header.Get("Range") != "" {
			want = []string{"Accept-Encoding", "Authorization", "Range", "User-Agent"}
		}
		if !slices.Equal(keys, want) || req.Header.Get("Accept-Encoding") != "identity" || req.Header.Get("User-Agent") != "test" {
			t.Errorf("%s carried %v", req.URL.Path, req.Header)
		}
	}
}

// OnStatus sees every request: its status, "error" or "timeout".
func TestOnStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var codes []string
		var timeouts int
		answers := []*http.Response{answer(http.StatusTeapot, bytes.NewReader(nil), 0), nil, stallHeaders}
		n := &fakeNet{answer: func(*http.Request) *http.Response {
			a := answers[0]
			answers = answers[1:]
			return a
		}}
		r := n.requester()
		r.OnStatus = func(c string) { codes = append(codes, c) }
		r.OnTimeout = func() { timeouts++ }
		c, err := r.Do(t.Context(), http.MethodGet, "http://s.test/x", "")
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		if _, err := r.Do(t.Context(), http.MethodGet, "http://s.test/x", ""); err == nil || errors.Is(err, ErrTimeout) {
			t.Fatalf("refused connection: %v", err)
		}
		t0 := time.Now()
		if _, err := r.Do(t.Context(), http.MethodGet, "http://s.test/x", ""); !errors.Is(err, ErrTimeout) || time.Since(t0) != DefaultTimeout {
			t.Fatalf("stalled headers: %v after %v", err, time.Since(t0))
		}
		if !slices.Equal(codes, []string{"418", CodeError, CodeTimeout}) || timeouts != 1 {
			t.Fatalf("codes %v, %d timeouts", codes, timeouts)
		}
	})
}

// Each group has its own Timeout: a body that keeps coming is read whole,
// one that stalls ends in ErrTimeout one Timeout after its last group.
func TestGroupTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(4 * cs)
		l := source(data, "")
		var stallAfter int
		n := &fakeNet{answer: func(r *http.Request) *http.Response {
			if r.URL.Path != "/o/"+id.String() {
				return l(r)
			}
			return answer(http.StatusOK, &vfetchtest.Paced{Ctx: r.Context(), Data: data, Pause: 4 * time.Second, StallAfter: stallAfter},
				int64(len(data)))
		}}
		timeouts := 0
		r := n.requester()
		r.OnTimeout = func() { timeouts++ }
		for _, row := range []struct {
			stallAfter int
			want       error
			after      time.Duration
		}{{len(data), io.EOF, 16 * time.Second}, {2 * cs, ErrTimeout, 8*time.Second + DefaultTimeout}} {
			stallAfter = row.stallAfter
			tr, err := r.Outboard(t.Context(), "http://s.test", id)
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			b, err := r.Open(t.Context(), "http://s.test", tr, 0, tr.Count()-1)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := drain(b)
			b.Close()
			if !errors.Is(err, row.want) || time.Since(t0) != row.after || !bytes.Equal(got, data[:len(got)]) {
				t.Fatalf("stall after %d: %v after %v, %d bytes", row.stallAfter, err, time.Since(t0), len(got))
			}
		}
		if timeouts != 1 {
			t.Fatalf("%d timeouts counted", timeouts)
		}
	})
}

// An unexpected answer whose body stalls cannot hold Expect longer than
// Timeout.
func TestExpectStalledErrorBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &fakeNet{answer: func(r *http.Request) *http.Response {
			return answer(http.StatusNotFound, &stalling{ctx: r.Context(), head: bytes.NewReader([]byte("gone"))}, -1)
		}}
		timeouts := 0
		r := n.requester()
		r.OnTimeout = func() { timeouts++ }
		t0 := time.Now()
		_, _, err := r.Head(t.Context(), "http://s.test", [32]byte{})
		var se *StatusError
		if !errors.As(err, &se) || se.Code != http.StatusNotFound || time.Since(t0) != DefaultTimeout || timeouts != 1 {
			t.Fatalf("%v after %v, %d timeouts", err, time.Since(t0), timeouts)
		}
	})
}

// The caller's context bounds everything: a cancelled read is not a
// timeout.
func TestCallerCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &fakeNet{answer: func(*http.Request) *http.Response { return stallHeaders }}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		r := n.requester()
		if _, err := r.Do(ctx, http.MethodGet, "http://s.test/x", ""); err == nil || errors.Is(err, ErrTimeout) {
			t.Fatalf("%v", err)
		}
	})
}
