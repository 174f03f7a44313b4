package edgecache

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ronhq/ron/roles/edge/httpcache"
	"github.com/ronhq/ron/runtime"
	"github.com/ronhq/ron/store"
)

// TestMemoryWritesNothing: with Dir "" no file is created anywhere a
// relative or default path could land (cwd, HOME, TMPDIR).
func TestMemoryWritesNothing(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	t.Chdir(dirs[0])
	t.Setenv("HOME", dirs[1])
	t.Setenv("TMPDIR", dirs[2])
	e := newEnv(t, mode{"memory", false}, 1<<20)
	id := e.putObject(body(1, 100_000), "x")
	e.putAsset(keyN(1), stored("a"), body(2, 50_000))
	f, _ := e.c.NewFill(-1)
	r := f.Follow()
	f.Write(body(3, 10))
	f.Abort(nil)
	r.Close()
	e.c.Invalidate(keyN(1))
	e.c.SetLimits(1000, 1)
	if err := e.c.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.wantNoObject(id)
	if err := e.c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if n := countFiles(t, d); n != 0 {
			t.Fatalf("%s has %d files", d, n)
		}
	}
	if !e.c.Memory() {
		t.Fatal("Memory() false")
	}
}

func TestStoredRoundTrip(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	h := http.Header{}
	h.Add("Set-Cookie", "a=1")
	h.Add("Set-Cookie", "b=2")
	h.Add("Link", "</x>; rel=preload")
	h.Add("Link", "</y>; rel=preload")
	h["Empty"] = []string{""}
	cases := []*httpcache.Stored{
		{Status: 200, Header: h, BodyLen: 12, RequestTime: time.Date(2024, 5, 6, 7, 8, 9, 1, loc), ResponseTime: time.Date(2024, 5, 6, 7, 8, 10, 999, loc),
			Selecting: []httpcache.Selected{
				{Name: "Accept-Encoding", Value: "gzip, br", Raw: []string{"gzip", "br"}, Present: true},
				{Name: "Origin", Present: false},
			}, Invalidated: true},
		{Status: 404, Header: http.Header{}, BodyLen: 0},
	}
	for i, st := range cases {
		b, err := marshalStored(st)
		if err != nil {
			t.Fatal(err)
		}
		got, err := unmarshalStored(b)
		if err != nil {
			t.Fatal(err)
		}
		if !got.RequestTime.Equal(st.RequestTime) || !got.ResponseTime.Equal(st.ResponseTime) {
			t.Fatalf("case %d: times %v %v", i, got.RequestTime, got.ResponseTime)
		}
		got.RequestTime, got.ResponseTime = st.RequestTime, st.ResponseTime
		if !reflect.DeepEqual(got, st) {
			t.Fatalf("case %d:\n got %+v\nwant %+v\njson %s", i, got, st, b)
		}
	}
	if _, err := unmarshalStored([]byte("{")); err == nil {
		t.Fatal("bad JSON accepted")
	}
}

func TestMetrics(t *testing.T) {
	m := runtime.NewMetrics(nil)
	c := mustOpen(t, Options{MaxBytes: 2500, Metrics: m})
	defer c.Close()
	for i := range 3 {
		b := body(i, 1000)
		f, _ := c.NewFill(-1)
		f.Write(b)
		if err := f.CommitObject(store.Sum(b), "ab"); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	m.Set().WritePrometheus(&out)
	for _, want := range []string{
		`ron_edge_cache_bytes{role="edge"} 2004`,
		`ron_edge_cache_entries{role="edge"} 2`,
		`ron_edge_cache_evictions_total{role="edge"} 1`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("missing %s in\n%s", want, out.String())
		}
	}
}

func TestChunkedData(t *testing.T) {
	for _, hint := range []int64{-1, 0, 5, 100_000, 5 << 20} {
		var d chunkedData
		want := body(int(hint&7), 3_000_001)
		n := int64(0)
		for n < int64(len(want)) {
			k := copy(d.room(n, hint), want[n:min(n+77_777, int64(len(want)))])
			n += int64(k)
		}
		for _, v := range []*chunkedData{d.snapshot(n), d.final(n)} {
			for _, off := range []int64{0, 1, minChunk - 1, minChunk, 1 << 20, n - 1} {
				p := make([]byte, 100_000)
				k := v.readAt(p, off, n)
				if wantK := min(int64(len(p)), n-off); int64(k) != wantK || string(p[:k]) != string(want[off:off+wantK]) {
					t.Fatalf("hint %d: readAt(%d) = %d", hint, off, k)
				}
			}
		}
		if _, err := (&memBlob{d: d.final(n), size: n}).ReadAt(make([]byte, 1), -1); err == nil {
			t.Fatal("negative offset")
		}
	}
}

func TestDefaults(t *testing.T) {
	c := mustOpen(t, Options{MaxBytes: 100, MaxVariants: -1})
	defer c.Close()
	if c.maxVariants != DefaultMaxVariants {
		t.Fatalf("max variants %d", c.maxVariants)
	}
	c.SetLimits(100, 0)
	if c.maxVariants != DefaultMaxVariants {
		t.Fatalf("after SetLimits %d", c.maxVariants)
	}
	if f, err := c.NewFill(-7); err != nil || f.hint != -1 {
		t.Fatalf("NewFill(-7): %v", err)
	}
}
