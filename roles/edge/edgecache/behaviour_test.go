package edgecache

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/ronhq/ron/store"
)

// behaviours run in memory and on disk alike.
var behaviours = []struct {
	name string
	run  func(t *testing.T, e *env)
}{
	{"object round trip", testObjectRoundTrip},
	{"object miss", testObjectMiss},
	{"object stored once", testObjectTwice},
	{"empty object", testEmptyObject},
	{"commit mismatch", testCommitMismatch},
	{"proven fill", testProvenFill},
	{"abort", testAbort},
	{"size hint", testSizeHint},
	{"write after commit", testWriteAfterCommit},
	{"asset variants", testAssetVariants},
	{"asset replace equal selecting", testAssetReplace},
	{"identical bodies stored once", testAssetDedup},
	{"update asset", testUpdateAsset},
	{"invalidate", testInvalidate},
	{"remove variant", testRemoveVariant},
	{"max variants", testMaxVariants},
	{"eviction order and accounting", testEvictionOrder},
	{"entry larger than budget", testTooLarge},
	{"shrink", testShrink},
	{"open blob survives eviction", testBlobSurvivesEviction},
	{"follow after commit", testFollowAfterCommit},
	{"store limit", testStoreLimit},
	{"closed", testClosed},
}

func TestBehaviours(t *testing.T) {
	for _, m := range modes {
		for _, b := range behaviours {
			t.Run(m.name+"/"+b.name, func(t *testing.T) {
				b.run(t, newEnv(t, m, 1<<20))
			})
		}
	}
}

func testObjectRoundTrip(t *testing.T, e *env) {
	b := body(1, 200_000)
	id := e.putObject(b, "image/png")
	e.wantObject(id, b, "image/png")
	blob, _, _ := e.c.Object(id)
	defer blob.Close()
	cases := []struct {
		off, n  int64
		wantN   int
		wantEOF bool
	}{
		{0, 10, 10, false},
		{199_990, 10, 10, false},
		{199_995, 10, 5, true},
		{200_000, 10, 0, true},
		{300_000, 1, 0, true},
	}
	for _, c := range cases {
		p := make([]byte, c.n)
		n, err := blob.ReadAt(p, c.off)
		if n != c.wantN || (err == io.EOF) != c.wantEOF || (err != nil && err != io.EOF) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v", c.off, c.n, n, err)
		}
		if n > 0 && !bytes.Equal(p[:n], b[c.off:c.off+int64(n)]) {
			t.Fatalf("ReadAt(%d) wrong bytes", c.off)
		}
	}
	if _, err := blob.ReadAt(make([]byte, 1), -1); err == nil {
		t.Fatal("negative offset accepted")
	}
	if s := e.c.Stats(); s.Entries != 1 || s.Blobs != 1 || s.Bytes != 200_000+int64(len("image/png")) {
		t.Fatalf("stats %+v", s)
	}
}

func testObjectMiss(t *testing.T, e *env) {
	e.wantNoObject(store.Sum([]byte("nothing")))
}

func testObjectTwice(t *testing.T, e *env) {
	b := body(2, 5000)
	id := e.putObject(b, "a/b")
	e.putObject(b, "c/d")
	e.wantObject(id, b, "a/b")
	if s := e.c.Stats(); s.Entries != 1 || s.Blobs != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func testEmptyObject(t *testing.T, e *env) {
	id := e.putObject(nil, "text/plain")
	e.wantObject(id, nil, "text/plain")
}

// testProvenFill: a proven fill (its writer proved every byte against the
// id) is stored under that id without a hash of its own, reads back whole,
// keeps its size check, and cannot become an asset.
func testProvenFill(t *testing.T, e *env) {
	b := body(7, 150_000)
	id := store.Sum(b)
	f, err := e.c.NewProvenFill(int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.CommitObject(id, "a/b"); err != nil {
		t.Fatal(err)
	}
	e.wantObject(id, b, "a/b")
	short, err := e.c.NewProvenFill(int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := short.Write(b[:100]); err != nil {
		t.Fatal(err)
	}
	if err := short.CommitObject(store.Sum(b[:100]), "a/b"); !errors.Is(err, ErrSize) {
		t.Fatalf("proven fill shorter than its size: %v, want ErrSize", err)
	}
	asset, err := e.c.NewProvenFill(-1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := asset.Write(b[:10]); err != nil {
		t.Fatal(err)
	}
	if err := asset.CommitAsset("k", nil); !errors.Is(err, ErrUnhashed) {
		t.Fatalf("CommitAsset of a proven fill: %v, want ErrUnhashed", err)
	}
}

func testCommitMismatch(t *testing.T, e *env) {
	f, err := e.c.NewFill(-1)
	if err != nil {
		t.Fatal(err)
	}
	r := f.Follow()
	defer r.Close()
	f.Write(body(3, 1000))
	want := store.Sum([]byte("other"))
	if err := f.CommitObject(want, "x/y"); !errors.Is(err, ErrMismatch) {
		t.Fatalf("commit = %v, want ErrMismatch", err)
	}
	if _, err := readFollower(context.Background(), r); !errors.Is(err, ErrMismatch) {
		t.Fatalf("follower = %v", err)
	}
	e.wantNoObject(want)
	e.wantNoObject(store.Sum(body(3, 1000)))
	if s := e.c.Stats(); s != (Stats{}) {
		t.Fatalf("stats %+v", s)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, ErrMismatch) {
		t.Fatalf("write after mismatch = %v", err)
	}
}

func testAbort(t *testing.T, e *env) {
	f, err := e.c.NewFill(10_000)
	if err != nil {
		t.Fatal(err)
	}
	r := f.Follow()
	defer r.Close()
	f.Write(body(4, 4000))
	boom := errors.New("upstream reset")
	f.Abort(boom)
	f.Abort(nil) // no-op
	got, err := readFollower(context.Background(), r)
	if !errors.Is(err, boom) || len(got) != 0 {
		t.Fatalf("follower = %d bytes, %v", len(got), err)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, boom) {
		t.Fatalf("write after abort = %v", err)
	}
	if err := f.CommitObject(store.Sum(body(4, 4000)), ""); !errors.Is(err, boom) {
		t.Fatalf("commit after abort = %v", err)
	}
	f2, _ := e.c.NewFill(-1)
	r2 := f2.Follow()
	f2.Abort(nil)
	if _, err := r2.ReadAt(context.Background(), make([]byte, 1), 0); !errors.Is(err, ErrAborted) {
		t.Fatalf("nil abort = %v", err)
	}
	r2.Close()
	if s := e.c.Stats(); s != (Stats{}) {
		t.Fatalf("stats %+v", s)
	}
}

func testSizeHint(t *testing.T, e *env) {
	b := body(5, 100)
	long, _ := e.c.NewFill(50)
	if _, err := long.Write(b); !errors.Is(err, ErrSize) {
		t.Fatalf("write past hint = %v", err)
	}
	short, _ := e.c.NewFill(200)
	short.Write(b)
	if err := short.CommitObject(store.Sum(b), ""); !errors.Is(err, ErrSize) {
		t.Fatalf("short commit = %v", err)
	}
	ok, _ := e.c.NewFill(100)
	r := ok.Follow()
	defer r.Close()
	if n, err := r.Size(context.Background()); n != 100 || err != nil {
		t.Fatalf("Size = %d, %v", n, err)
	}
	ok.Write(b)
	if err := ok.CommitObject(store.Sum(b), ""); err != nil {
		t.Fatal(err)
	}
	if ok.Written() != 100 {
		t.Fatalf("Written = %d", ok.Written())
	}
}

func testWriteAfterCommit(t *testing.T, e *env) {
	f, _ := e.c.NewFill(-1)
	f.Write([]byte("abc"))
	if err := f.CommitObject(store.Sum([]byte("abc")), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("d")); !errors.Is(err, ErrFinished) {
		t.Fatalf("write after commit = %v", err)
	}
	if err := f.CommitObject(store.Sum([]byte("abc")), ""); !errors.Is(err, ErrFinished) {
		t.Fatalf("second commit = %v", err)
	}
	f.Abort(nil) // no-op after commit
	e.wantObject(store.Sum([]byte("abc")), []byte("abc"), "")
}

func testAssetVariants(t *testing.T, e *env) {
	key := keyN(1)
	e.putAsset(key, stored("text/html"), body(6, 3000))
	e.clk.Add(1)
	e.putAsset(key, stored("application/json"), body(7, 2000))
	vs := e.c.Variants(key)
	if len(vs) != 2 || vs[0].Stored.Selecting[0].Value != "application/json" {
		t.Fatalf("variants %+v", vs)
	}
	if vs[0].Stored.BodyLen != 2000 || vs[0].Blob != store.Sum(body(7, 2000)) {
		t.Fatalf("body len %d", vs[0].Stored.BodyLen)
	}
	b, ok := e.c.OpenAsset(vs[1])
	if !ok || !bytes.Equal(readBlob(t, b), body(6, 3000)) {
		t.Fatal("OpenAsset html")
	}
	if vs := e.c.Variants(key); vs[0].Stored.Selecting[0].Value != "text/html" {
		t.Fatal("OpenAsset did not touch")
	}
	if len(e.c.Variants(keyN(2))) != 0 {
		t.Fatal("variants of unknown key")
	}
}

func testAssetReplace(t *testing.T, e *env) {
	key := keyN(1)
	e.putAsset(key, stored("a"), body(8, 3000))
	e.putAsset(key, stored("a"), body(9, 1000))
	vs := e.c.Variants(key)
	if len(vs) != 1 || vs[0].Stored.BodyLen != 1000 {
		t.Fatalf("variants %+v", vs)
	}
	want := 1000 + metaBytes(key, vs[0].Stored)
	if s := e.c.Stats(); s.Bytes != want || s.Blobs != 1 || s.Entries != 1 {
		t.Fatalf("stats %+v, want %d bytes", s, want)
	}
	// the same body again: the blob is shared by old and new entry
	e.putAsset(key, stored("a"), body(9, 1000))
	if s := e.c.Stats(); s.Bytes != want || s.Blobs != 1 {
		t.Fatalf("after same body: %+v", s)
	}
	b, ok := e.c.OpenAsset(e.c.Variants(key)[0])
	if !ok || !bytes.Equal(readBlob(t, b), body(9, 1000)) {
		t.Fatal("body after same-body replace")
	}
}

func testAssetDedup(t *testing.T, e *env) {
	b := body(10, 5000)
	e.putAsset(keyN(1), stored(""), b)
	e.putAsset(keyN(2), stored(""), b)
	id := e.putObject(b, "")
	s := e.c.Stats()
	want := 5000 + 2*metaBytes(keyN(1), stored(""))
	if s.Blobs != 1 || s.Entries != 3 || s.Bytes != want {
		t.Fatalf("stats %+v, want %d", s, want)
	}
	e.c.RemoveVariant(keyN(1), e.c.Variants(keyN(1))[0].Stored)
	e.c.RemoveVariant(keyN(2), e.c.Variants(keyN(2))[0].Stored)
	e.wantObject(id, b, "")
	if s := e.c.Stats(); s.Blobs != 1 || s.Bytes != 5000 {
		t.Fatalf("after removal %+v", s)
	}
}

func testUpdateAsset(t *testing.T, e *env) {
	key := keyN(1)
	e.putAsset(key, stored("a"), body(11, 100))
	old := e.c.Variants(key)[0].Stored
	upd := old.Clone()
	upd.Header.Set("Etag", `"v2"`)
	upd.BodyLen = 5 // ignored: kept from old
	if !e.c.UpdateAsset(key, old, upd) {
		t.Fatal("UpdateAsset false")
	}
	got := e.c.Variants(key)[0].Stored
	if got != upd || got.BodyLen != 100 || got.Header.Get("Etag") != `"v2"` {
		t.Fatalf("after update %+v", got)
	}
	if e.c.UpdateAsset(key, old, upd.Clone()) {
		t.Fatal("update of a replaced Stored succeeded")
	}
	if e.c.UpdateAsset(keyN(9), upd, upd.Clone()) {
		t.Fatal("update under another key succeeded")
	}
	if s := e.c.Stats(); s.Bytes != 100+metaBytes(key, upd) {
		t.Fatalf("bytes %d", s.Bytes)
	}
	b, ok := e.c.OpenAsset(Asset{Stored: old, Blob: store.Sum(body(11, 100))})
	if !ok {
		t.Fatal("body of a replaced Stored not opened")
	}
	b.Close()
}

func testInvalidate(t *testing.T, e *env) {
	key := keyN(1)
	e.putAsset(key, stored("a"), body(12, 100))
	e.putAsset(key, stored("b"), body(13, 100))
	before := e.c.Variants(key)
	e.c.Invalidate(key)
	e.c.Invalidate(keyN(7)) // unknown: no-op
	after := e.c.Variants(key)
	for i, a := range after {
		if !a.Stored.Invalidated || before[i].Stored.Invalidated {
			t.Fatalf("variant %d: %v / %v", i, a.Stored.Invalidated, before[i].Stored.Invalidated)
		}
	}
}

func testRemoveVariant(t *testing.T, e *env) {
	key := keyN(1)
	e.putAsset(key, stored("a"), body(14, 100))
	e.putAsset(key, stored("b"), body(15, 100))
	vs := e.c.Variants(key)
	e.c.RemoveVariant(keyN(2), vs[0].Stored) // wrong key: no-op
	e.c.RemoveVariant(key, vs[0].Stored)
	if got := e.c.Variants(key); len(got) != 1 || got[0].Stored != vs[1].Stored {
		t.Fatalf("variants %+v", got)
	}
	if _, ok := e.c.OpenAsset(vs[0]); ok {
		t.Fatal("removed variant's blob still opens")
	}
	e.c.RemoveVariant(key, vs[1].Stored)
	if s := e.c.Stats(); s != (Stats{}) {
		t.Fatalf("stats %+v", s)
	}
}

func testMaxVariants(t *testing.T, e *env) { // MaxVariants is 4 in newEnv
	key := keyN(1)
	for _, v := range []string{"a", "b", "c", "d"} {
		e.putAsset(key, stored(v), body(int(v[0]), 100))
		e.clk.Add(1)
	}
	a := e.c.Variants(key)[3]
	b, _ := e.c.OpenAsset(a) // "a" becomes most recent; "b" is now the oldest
	b.Close()
	e.putAsset(key, stored("e"), body(int('e'), 100))
	var got []string
	for _, v := range e.c.Variants(key) {
		got = append(got, v.Stored.Selecting[0].Value)
	}
	if want := "e a d c"; joinWords(got) != want {
		t.Fatalf("variants %q, want %q", got, want)
	}
	e.c.SetLimits(1<<20, 2)
	if n := len(e.c.Variants(key)); n != 2 {
		t.Fatalf("after SetLimits: %d variants", n)
	}
}

func testEvictionOrder(t *testing.T, e *env) {
	e.c.SetLimits(10_000, 0)
	ids := make([]store.ID, 4)
	for i := range ids {
		ids[i] = e.putObject(body(20+i, 3000), "t")
	}
	// 4 × 3001 > 10 000: the oldest (0) was evicted
	e.wantNoObject(ids[0])
	e.wantObject(ids[1], body(21, 3000), "t") // touch 1: now 2 is the oldest
	e.putObject(body(30, 3000), "t")
	e.wantNoObject(ids[2])
	e.wantObject(ids[1], body(21, 3000), "t")
	e.wantObject(ids[3], body(23, 3000), "t")
	if s := e.c.Stats(); s.Bytes != 3*3001 || s.Entries != 3 || s.Blobs != 3 {
		t.Fatalf("stats %+v", s)
	}
	if n := e.c.evictions.Get(); n != 2 {
		t.Fatalf("evictions %d", n)
	}
}

func testTooLarge(t *testing.T, e *env) {
	e.c.SetLimits(1000, 0)
	f, _ := e.c.NewFill(-1)
	r := f.Follow()
	defer r.Close()
	b := body(40, 5000)
	f.Write(b)
	if err := f.CommitObject(store.Sum(b), ""); err != nil {
		t.Fatal(err)
	}
	e.wantNoObject(store.Sum(b))
	if got, err := readFollower(context.Background(), r); err != nil || !bytes.Equal(got, b) {
		t.Fatalf("follower of an entry evicted at once: %d bytes, %v", len(got), err)
	}
}

func testShrink(t *testing.T, e *env) {
	var ids []store.ID
	for i := range 5 {
		ids = append(ids, e.putObject(body(50+i, 10_000), ""))
		e.clk.Add(1)
	}
	e.c.SetLimits(25_000, 0)
	if s := e.c.Stats(); s.Bytes != 20_000 || s.Entries != 2 {
		t.Fatalf("after shrink %+v", s)
	}
	e.wantObject(ids[3], body(53, 10_000), "")
	e.wantObject(ids[4], body(54, 10_000), "")
	e.c.SetLimits(0, 0)
	if s := e.c.Stats(); s != (Stats{}) {
		t.Fatalf("after shrink to 0 %+v", s)
	}
}

func testBlobSurvivesEviction(t *testing.T, e *env) {
	b := body(60, 50_000)
	id := e.putObject(b, "")
	blob, _, ok := e.c.Object(id)
	if !ok {
		t.Fatal("miss")
	}
	e.c.SetLimits(0, 0)
	e.wantNoObject(id)
	if got := readBlob(t, blob); !bytes.Equal(got, b) {
		t.Fatal("evicted blob unreadable")
	}
}

func testFollowAfterCommit(t *testing.T, e *env) {
	b := body(61, 70_000)
	f, _ := e.c.NewFill(-1)
	f.Write(b)
	if err := f.CommitObject(store.Sum(b), ""); err != nil {
		t.Fatal(err)
	}
	r := f.Follow()
	defer r.Close()
	if got, err := readFollower(context.Background(), r); err != nil || !bytes.Equal(got, b) {
		t.Fatalf("late follower: %d bytes, %v", len(got), err)
	}
	if n, err := r.Size(context.Background()); n != 70_000 || err != nil {
		t.Fatalf("Size = %d, %v", n, err)
	}
	if n, err := r.ReadAt(context.Background(), nil, 0); n != 0 || err != nil {
		t.Fatalf("empty read = %d, %v", n, err)
	}
	r.Close() // idempotent
}

func testStoreLimit(t *testing.T, e *env) {
	want := int64(64 << 20)
	if e.c.Memory() {
		want = (1 << 20) / 16
	}
	if got := e.c.StoreLimit(64 << 20); got != want {
		t.Fatalf("StoreLimit = %d, want %d", got, want)
	}
	if got := e.c.StoreLimit(10); got != 10 {
		t.Fatalf("StoreLimit(10) = %d", got)
	}
}

func testClosed(t *testing.T, e *env) {
	id := e.putObject([]byte("x"), "")
	open, _ := e.c.NewFill(-1)
	open.Write([]byte("late"))
	if err := e.c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if _, err := e.c.NewFill(-1); !errors.Is(err, ErrClosed) {
		t.Fatalf("NewFill after Close = %v", err)
	}
	if err := open.CommitObject(store.Sum([]byte("late")), ""); !errors.Is(err, ErrClosed) {
		t.Fatalf("commit after Close = %v", err)
	}
	e.wantNoObject(id)
	if e.c.Variants("k") != nil {
		t.Fatal("variants after Close")
	}
}

func joinWords(s []string) string {
	out := ""
	for i, w := range s {
		if i > 0 {
			out += " "
		}
		out += w
	}
	return out
}
