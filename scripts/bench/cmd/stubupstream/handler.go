package main

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Handler answers:
//   - GET and HEAD /o/{id} (any non-empty id without '/'): after delay, 200
//     with Content-Type application/octet-stream, Content-Length size and
//     (GET only) size bytes; a client that leaves during the delay gets
//     nothing;
//   - GET and HEAD /healthz and /readyz: 200 "ok" at once;
//   - another method on those paths: 405 with Allow; any other path: 404.
func Handler(size int, delay time.Duration) http.Handler {
	body := bytes.Repeat([]byte{'x'}, size)
	n := strconv.Itoa(size)
	mux := http.NewServeMux()
	mux.HandleFunc("/o/{id}", func(w http.ResponseWriter, r *http.Request) {
		if !readMethod(w, r) {
			return
		}
		if strings.Contains(r.PathValue("id"), "/") {
			http.NotFound(w, r)
			return
		}
		if !wait(r, delay) {
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Length", n)
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(body)
	})
	ok := func(w http.ResponseWriter, r *http.Request) {
		if !readMethod(w, r) {
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte("ok\n"))
		}
	}
	mux.HandleFunc("/healthz", ok)
	mux.HandleFunc("/readyz", ok)
	return mux
}

// readMethod answers 405 unless r is a GET or HEAD, and reports whether it
// is one.
func readMethod(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}

// wait holds the request for d; false when its client left first.
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return false
	case <-t.C:
		return true
	}
}
