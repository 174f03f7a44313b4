package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/auth"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func envFor(dir, admin string) Env {
	return Env{Node: func() (Node, error) { return Node{DataDir: dir, AdminListen: admin}, nil }}
}

func noEnv(string) string { return "" }

func TestTokenSourcePrecedence(t *testing.T) {
	ctx := context.Background()
	f := Flags{Token: "explicit"}
	if tok, _ := f.TokenSource(envFor(t.TempDir(), ""), func(string) string { return "fromenv" }, "storage:write")(ctx); tok != "explicit" {
		t.Fatalf("--token must win, got %q", tok)
	}
	f = Flags{}
	if tok, _ := f.TokenSource(envFor(t.TempDir(), ""), func(string) string { return "fromenv" }, "storage:write")(ctx); tok != "fromenv" {
		t.Fatalf("RON_TOKEN must come next, got %q", tok)
	}
	dir := t.TempDir()
	keys, err := auth.LoadOrCreateRootKey(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := f.TokenSource(envFor(dir, ""), noEnv, "storage:write")(ctx)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := keys.Verify(tok, time.Now())
	if err != nil || !claims.Allows("storage:write") || claims.Allows("storage:admin") {
		t.Fatalf("locally minted token: %+v %v", claims, err)
	}
	if ttl := time.Until(claims.Expires); ttl <= 0 || ttl > localTokenTTL {
		t.Fatalf("token lifetime %s, want ≤ %s", ttl, localTokenTTL)
	}
}

// TestTokenFromRootKeyFile: a node with cluster.root_key_file mints from
// that file, not from a key left in its data dir.
func TestTokenFromRootKeyFile(t *testing.T) {
	dataDir, shared := t.TempDir(), t.TempDir()
	if _, err := auth.LoadOrCreateRootKey(dataDir, false); err != nil {
		t.Fatal(err)
	}
	keys, err := auth.LoadOrCreateRootKey(shared, false)
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Node: func() (Node, error) { return Node{DataDir: dataDir, RootKeyFile: auth.KeyPath(shared)}, nil }}
	tok, err := (&Flags{}).TokenSource(env, noEnv, "storage:write")(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Verify(tok, time.Now()); err != nil {
		t.Fatalf("token not minted from root_key_file: %v", err)
	}
	missing := Node{DataDir: dataDir, RootKeyFile: auth.KeyPath(t.TempDir())}
	if _, err := missing.RootKey(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing root_key_file: %v", err)
	}
}

func TestTokenFromAdminPlane(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Scopes []string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		asked = append(asked, req.Scopes...)
		fmt.Fprint(w, `{"token":"from-admin"}`)
	}))
	defer srv.Close()
	f := Flags{}
	admin := strings.TrimPrefix(srv.URL, "http://")
	tok, err := f.TokenSource(envFor(t.TempDir(), admin), noEnv, "storage:write")(context.Background())
	if err != nil || tok != "from-admin" || len(asked) != 1 || asked[0] != "storage:write" {
		t.Fatalf("token %q err %v asked %v", tok, err, asked)
	}
}

func TestAdminTokenErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		httpx.WriteError(w, "c", httpx.NewError(http.StatusForbidden, httpx.CodeForbidden, "no"))
	}))
	defer srv.Close()
	_, err := AdminToken(context.Background(), strings.TrimPrefix(srv.URL, "http://"), "admin")
	if httpx.AsError(err).Code != httpx.CodeForbidden {
		t.Fatalf("got %v", err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	if _, err := AdminToken(context.Background(), addr, "admin"); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("closed port: %v", err)
	}
}

func TestClassify(t *testing.T) {
	var ee *ExitError
	if !errors.As(Classify(errors.New("x")), &ee) || ee.Code != ExitFailure {
		t.Fatal("plain errors exit 1")
	}
	if !errors.As(Classify(Exit(ExitUnreachable, errors.New("x"))), &ee) || ee.Code != ExitUnreachable {
		t.Fatal("explicit exit codes are kept")
	}
	if Classify(nil) != nil || Exit(3, nil) != nil {
		t.Fatal("nil must stay nil")
	}
	f := Flags{Output: "yaml"}
	if f.CheckOutput() == nil {
		t.Fatal("-o yaml accepted")
	}
}

// TestOnceToken: the source is asked once; an optional token that cannot be
// had is no token, a required one is the error.
func TestOnceToken(t *testing.T) {
	ctx := context.Background()
	asked := 0
	env := Env{Node: func() (Node, error) { asked++; return Node{}, errors.New("no config") }}
	var f Flags
	opt := f.OnceToken(env, noEnv, "index:read", true)
	for range 3 {
		if tok, err := opt(ctx); tok != "" || err != nil {
			t.Fatalf("optional token: %q %v", tok, err)
		}
	}
	if asked != 1 {
		t.Fatalf("source asked %d times, want once", asked)
	}
	if _, err := f.OnceToken(env, noEnv, "index:write", false)(ctx); err == nil {
		t.Fatal("a required token that cannot be had must fail")
	}
	f.Token = "explicit"
	if tok, _ := f.OnceToken(env, noEnv, "index:write", false)(ctx); tok != "explicit" {
		t.Fatalf("--token: %q", tok)
	}
}

func TestBytes(t *testing.T) {
	for in, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536 << 20: "1.5 GiB", 3 << 40: "3.0 TiB", 5 << 50: "5.0 PiB"} {
		if got := Bytes(in); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", in, got, want)
		}
	}
}
