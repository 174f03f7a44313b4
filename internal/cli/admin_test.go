package cli

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/httpx/auth"
)

// TestAdminCall: a 2xx answer is decoded (the body and token sent as
// given), an error answer exits 1 with its message, a bad answer exits 1,
// an unreachable listener exits 2.
func TestAdminCall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("Content-Type") != "application/json" {
				w.WriteHeader(http.StatusTeapot)
				return
			}
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"state":"queued"}`))
		case "/bad":
			_, _ = w.Write([]byte(`not json`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"cluster mode is off"}}`))
		}
	}))
	defer srv.Close()
	admin := strings.TrimPrefix(srv.URL, "http://")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	var out struct{ State string }
	raw, err := AdminCall(context.Background(), time.Second, admin, "tok", http.MethodPost, "/ok", map[string]int{"n": 1}, &out)
	if err != nil || out.State != "queued" || !strings.Contains(string(raw), "queued") {
		t.Fatalf("ok call: %q %+v %v", raw, out, err)
	}
	for _, tc := range []struct {
		name, admin, path, msg string
		code                   int
	}{
		{"error answer", admin, "/off", "cluster mode is off", ExitFailure},
		{"invalid answer", admin, "/bad", "invalid answer", ExitFailure},
		{"unreachable", closed, "/ok", "unreachable", ExitUnreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := AdminCall(context.Background(), time.Second, tc.admin, "", http.MethodGet, tc.path, nil, &out)
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != tc.code || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err %v, want exit %d mentioning %q", err, tc.code, tc.msg)
			}
		})
	}
}

// TestAdminTarget: flags win, then RON_TOKEN, then a token minted from the
// node's root key; the node's admin.listen is the default listener.
func TestAdminTarget(t *testing.T) {
	dir := t.TempDir()
	keys, err := auth.LoadOrCreateRootKey(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	env := envFor(dir, "127.0.0.1:8080")
	if a, tok, _ := AdminTarget(env, noEnv, "h:1", "given"); a != "h:1" || tok != "given" {
		t.Fatalf("flags: %s %s", a, tok)
	}
	if _, tok, _ := AdminTarget(env, func(string) string { return "fromenv" }, "h:1", ""); tok != "fromenv" {
		t.Fatalf("RON_TOKEN: %s", tok)
	}
	a, tok, err := AdminTarget(env, noEnv, "", "")
	if err != nil || a != "127.0.0.1:8080" {
		t.Fatalf("default admin %q %v", a, err)
	}
	if c, err := keys.Verify(tok, time.Now()); err != nil || !c.Allows("admin") {
		t.Fatalf("minted token: %+v %v", c, err)
	}
}
