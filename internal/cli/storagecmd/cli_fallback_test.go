package storagecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/spf13/cobra"

	"github.com/ronhq/ron/internal/cli"
	"github.com/ronhq/ron/store"
	"github.com/ronhq/ron/store/storetest"
	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

// fbIndex is a fake index: GET /providers/{b3} lists addrs in order, 404
// for any other id.
func fbIndex(t *testing.T, id string, addrs ...string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/providers/"+id {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"no providers"}}`))
			return
		}
		type rec struct {
			Node string `json:"node"`
			Addr string `json:"addr"`
		}
		out := struct {
			B3        string `json:"b3"`
			Providers []rec  `json:"providers"`
		}{B3: id, Providers: []rec{}}
		for i, a := range addrs {
			out.Providers = append(out.Providers, rec{Node: "n" + strconv.Itoa(i), Addr: a})
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// fbBad is a fake storage serving o: its outboard (404 when it has none,
// as a ron before verified streaming) and its body under o.ID, HEAD
// included. It counts its requests.
type fbBad struct {
	*httptest.Server
	mu    sync.Mutex
	calls int
}

func newFBBad(t *testing.T, o vfetchtest.Object) *fbBad {
	t.Helper()
	b := &fbBad{}
	id := o.ID.String()
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.calls++
		b.mu.Unlock()
		switch {
		case r.URL.Path == "/o/"+id+"/outboard" && o.Outboard != nil:
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(o.Outboard)
		case r.URL.Path == "/o/"+id:
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(o.Data))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"no such object"}}`))
		}
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *fbBad) requests() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

// fbProxy fronts a real storage role and records the Range of each GET.
type fbProxy struct {
	*httptest.Server
	mu     sync.Mutex
	ranges []string
}

func newFBProxy(t *testing.T, tr *storageNode) *fbProxy {
	t.Helper()
	u, err := url.Parse(tr.base)
	if err != nil {
		t.Fatal(err)
	}
	p := &fbProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/outboard") && r.Method == http.MethodGet {
			p.mu.Lock()
			p.ranges = append(p.ranges, r.Header.Get("Range"))
			p.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *fbProxy) gets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.ranges...)
}

// fbRun runs `ron args…` with the storage commands mounted and no token
// available, mapping the error to an exit code as main does.
func fbRun(t *testing.T, env cli.Env, args ...string) (code int, stdout []byte, err error) {
	t.Helper()
	root := &cobra.Command{Use: "ron", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(Commands(env, func(string) string { return "" })...)
	var out, errw bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errw)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	var ee *cli.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.Code
	case err != nil:
		code = cli.ExitFailure
	}
	return code, out.Bytes(), err
}

// fbEnv is a node without a root key whose admin plane is down (so no
// token) and whose index listener is index ("" none).
func fbEnv(t *testing.T, index string) cli.Env {
	listen := map[string]string{}
	if index != "" {
		listen["index"] = strings.TrimPrefix(index, "http://")
	}
	admin := fbClosedAddr(t)
	dir := t.TempDir()
	return cli.Env{Node: func() (cli.Node, error) {
		return cli.Node{DataDir: dir, AdminListen: admin, Listen: listen}, nil
	}}
}

func fbClosedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// fbWorld is a storage without the object (the --server), a storage
// holding it behind a recording proxy, and the object.
type fbWorld struct {
	primary *storageNode
	holder  *fbProxy
	body    []byte
	id      string
}

func newFBWorld(t *testing.T, body []byte) *fbWorld {
	t.Helper()
	primary, holder := startStorage(t), startStorage(t)
	id := holder.put(body, "application/octet-stream")
	return &fbWorld{primary: primary, holder: newFBProxy(t, holder), body: body, id: id}
}

// TestGetFallbackResumes: the first provider serves a bad group 1, so the
// verified group 0 stays written and the holder is asked for the rest with
// a Range; to a file and to stdout alike, nothing wrong is ever written.
func TestGetFallbackResumes(t *testing.T) {
	w := newFBWorld(t, bigBody())
	for _, mode := range []string{"out", "cat"} {
		t.Run(mode, func(t *testing.T) {
			bad := newFBBad(t, vfetchtest.Corrupt(w.body, store.ChunkSize+100))
			idx := fbIndex(t, w.id, bad.URL, w.holder.URL)
			before := len(w.holder.gets())
			args := []string{"get", w.id, "--server", w.primary.base, "--index", idx.URL}
			file := filepath.Join(t.TempDir(), "obj")
			if mode == "out" {
				args = append(args, "--out", file)
			} else {
				args = []string{"cat", w.id, "--server", w.primary.base, "--index", idx.URL}
			}
			code, stdout, err := fbRun(t, fbEnv(t, ""), args...)
			if code != 0 {
				t.Fatalf("exit %d: %v", code, err)
			}
			got := stdout
			if mode == "out" {
				if got, err = os.ReadFile(file); err != nil {
					t.Fatal(err)
				}
				fbNoFile(t, file+".part")
			}
			if !bytes.Equal(got, w.body) {
				t.Fatalf("got %d bytes, not the object", len(got))
			}
			if gets := w.holder.gets()[before:]; len(gets) != 1 || gets[0] != "bytes=65536-" {
				t.Fatalf("holder GETs %q, want one from byte 65536", gets)
			}
			if n := bad.requests(); n != 2 {
				t.Fatalf("bad provider got %d requests, want outboard + GET", n)
			}
		})
	}
}

// TestGetFallbackDefaultIndex: without --index the configured local index
// listener is asked; the empty object needs no body at all.
func TestGetFallbackDefaultIndex(t *testing.T) {
	w := newFBWorld(t, []byte{})
	idx := fbIndex(t, w.id, w.holder.URL)
	code, stdout, err := fbRun(t, fbEnv(t, idx.URL), "cat", w.id, "--server", w.primary.base)
	if code != 0 || len(stdout) != 0 || w.id != emptyID {
		t.Fatalf("exit %d (%v), stdout %q, id %s", code, err, stdout, w.id)
	}
}

// TestGetFallbackPastNegativeCache: an index whose cache still says "not
// found" (a lookup from before the copies were announced) is asked once
// more with Cache-Control: no-cache, and that answer is used.
func TestGetFallbackPastNegativeCache(t *testing.T) {
	w := newFBWorld(t, bigBody())
	fresh := fbIndex(t, w.id, w.holder.URL)
	var (
		mu    sync.Mutex
		asked []string
	)
	idx := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		cc := r.Header.Get("Cache-Control")
		mu.Lock()
		asked = append(asked, cc)
		mu.Unlock()
		if cc != "no-cache" {
			rw.WriteHeader(http.StatusNotFound)
			_, _ = rw.Write([]byte(`{"error":{"code":"not_found","message":"no providers"}}`))
			return
		}
		fresh.Config.Handler.ServeHTTP(rw, r)
	}))
	t.Cleanup(idx.Close)
	code, stdout, err := fbRun(t, fbEnv(t, ""), "cat", w.id, "--server", w.primary.base, "--index", idx.URL)
	if code != 0 || !bytes.Equal(stdout, w.body) {
		t.Fatalf("exit %d (%v), %d bytes", code, err, len(stdout))
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(asked, []string{"", "no-cache"}) {
		t.Fatalf("index asked with Cache-Control %q", asked)
	}
}

// TestGetFallbackFailures: every way the fallback can fail exits 1 (never
// 2: the server answered) and leaves no file behind.
func TestGetFallbackFailures(t *testing.T) {
	w := newFBWorld(t, bigBody())
	badGroup0 := newFBBad(t, vfetchtest.Corrupt(w.body, 10))
	short := vfetchtest.Honest(w.body)
	short.Data = short.Data[:store.ChunkSize+10]
	for _, tc := range []struct {
		name  string
		index string // "" = no --index and none configured
		want  string
	}{
		{"no index", "", "not_found"},
		{"index knows none", fbIndex(t, "b3:other").URL, "the index knows no provider"},
		{"empty list", fbIndex(t, w.id).URL, "0 provider(s) tried"},
		{"all providers fail", fbIndex(t, w.id, badGroup0.URL, newFBBad(t, short).URL, w.primary.base, "http://"+fbClosedAddr(t)).URL,
			"4 provider(s) tried"},
		{"an old provider", fbIndex(t, w.id, newFBBad(t, vfetchtest.V1(w.body)).URL).URL, "upgrade it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "obj")
			args := []string{"get", w.id, "--server", w.primary.base, "--out", file}
			if tc.index != "" {
				args = append(args, "--index", tc.index)
			}
			code, _, err := fbRun(t, fbEnv(t, ""), args...)
			if code != cli.ExitFailure || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("exit %d (%v), want 1 mentioning %q", code, err, tc.want)
			}
			fbNoFile(t, file)
			fbNoFile(t, file+".part")
		})
	}
}

// TestGetFallbackLiars: the lying sources of every reader's table
// (docs/storage.md §4) as the first provider, the holder second: to a file
// and to stdout alike, the result is exactly the object — the liar's
// verified groups kept, the holder asked from the first unwritten group —
// and, with the liar alone, the command fails having written only the
// object's own bytes (stdout) or no file at all.
func TestGetFallbackLiars(t *testing.T) {
	body := storetest.Pattern(5*store.ChunkSize + 1234)
	w := newFBWorld(t, body)
	for _, l := range vfetchtest.Liars(body) {
		t.Run(l.Name, func(t *testing.T) {
			liar := newFBBad(t, l.Object)
			for _, mode := range []string{"out", "cat"} {
				code, got, err := fbGet(t, w, mode, fbIndex(t, w.id, liar.URL, w.holder.URL).URL)
				if code != 0 || !bytes.Equal(got, body) {
					t.Fatalf("%s, then the holder: exit %d (%v), %d bytes", mode, code, err, len(got))
				}
				code, got, err = fbGet(t, w, mode, fbIndex(t, w.id, liar.URL).URL)
				want, _ := l.Delivers(body, 0, int64(len(body))-1)
				if mode == "out" {
					want = nil // a failed get leaves no file
				}
				if code != cli.ExitFailure || !bytes.Equal(got, want) {
					t.Fatalf("%s, the liar alone: exit %d (%v), %d bytes; want exit 1 after %d bytes", mode, code, err, len(got), len(want))
				}
			}
		})
	}
}

// fbGet runs `ron get --out FILE` (mode "out"; the file's bytes, nil when
// there is none) or `ron cat` (stdout) for w's object with the index at
// index.
func fbGet(t *testing.T, w *fbWorld, mode, index string) (int, []byte, error) {
	t.Helper()
	if mode == "cat" {
		return fbRun(t, fbEnv(t, ""), "cat", w.id, "--server", w.primary.base, "--index", index)
	}
	file := filepath.Join(t.TempDir(), "obj")
	code, _, err := fbRun(t, fbEnv(t, ""), "get", w.id, "--server", w.primary.base, "--index", index, "--out", file)
	got, rerr := os.ReadFile(file)
	if rerr != nil {
		got = nil
	}
	fbNoFile(t, file+".part")
	return code, got, err
}

// TestGetFallbackIndexUnreachable: an index that refuses connections is a
// failure (exit 1, not 2: the server answered); its retries wait on the
// bubble's clock.
func TestGetFallbackIndexUnreachable(t *testing.T) {
	primary := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		// No keep-alive: the bubble must not keep an idle connection.
		w.Header().Set("Connection", "close")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"not found"}}`))
	}))
	defer primary.Close()
	env, dead := fbEnv(t, ""), "http://"+fbClosedAddr(t)
	synctest.Test(t, func(t *testing.T) {
		code, _, err := fbRun(t, env, "cat", helloID, "--server", primary.URL, "--index", dead)
		if code != cli.ExitFailure || err == nil || !strings.Contains(err.Error(), "asking the index failed") {
			t.Fatalf("exit %d (%v), want 1", code, err)
		}
	})
}

// TestGetNoFallbackWhenFound: an object on the server is served by it; the
// index (down here: asking it would fail) is never asked.
func TestGetNoFallbackWhenFound(t *testing.T) {
	tr := startStorage(t)
	id := tr.put([]byte("hello world"), "text/plain")
	code, stdout, err := fbRun(t, fbEnv(t, ""), "cat", id, "--server", tr.base, "--index", "http://"+fbClosedAddr(t))
	if code != 0 || string(stdout) != "hello world" {
		t.Fatalf("exit %d (%v) stdout %q", code, err, stdout)
	}
}

func fbNoFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("%s exists (%v)", path, err)
	}
}
