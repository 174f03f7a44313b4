package objects

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

// TestLiars: the lying sources of every reader's table (docs/storage.md
// §4) as the only source, read whole and in ranges on and off group
// boundaries, through a fill (the object is stored) and through a stream
// (it is too large to store): a client receives only the object's own
// bytes, never a complete answer once the range reaches a group that does
// not verify, and nothing is stored.
func TestLiars(t *testing.T) {
	data, _ := pattern(50, 5*cs+1234)
	size := int64(len(data))
	for _, mode := range []struct {
		name string
		lim  Limits
	}{{"fill", Limits{}}, {"stream", Limits{FillMaxBytes: 2 * cs}}} {
		for _, l := range vfetchtest.Liars(data) {
			t.Run(mode.name+"/"+l.Name, func(t *testing.T) {
				n, _ := storageHolding(l.ID, servingObj(l.Object))
				e := newEnv(t, envOptions{storage: httpSource(n, "storage.test"), lim: mode.lim})
				for i, r := range append(vfetchtest.Ranges(size), vfetchtest.Range{Start: 0, End: size - 1}) {
					hdr := []string{"Range", r.Header()}
					if i == len(vfetchtest.Ranges(size)) {
						hdr = nil // the whole object, no Range: 200
					}
					res := e.get(t.Context(), http.MethodGet, l.ID.String(), hdr...)
					checkLiar(t, l, data, r, res, mode.name == "stream")
				}
				if _, _, ok := e.cache.Object(l.ID); ok {
					t.Fatal("a lying source's object was stored")
				}
			})
		}
	}
}

// checkLiar checks what the client of range r got from liar l. A stream
// fetches the range's own groups (and the last group first, proving the
// size, when the range ends before it), so what it delivers is exactly what
// DeliversProven allows; a fill reads the whole object in order and fails
// at the first bad group, so a range's bytes past it never arrive and bytes
// before it may still be cut by the failed fill (or refused by the failed
// proof of the size).
func checkLiar(t *testing.T, l vfetchtest.Liar, data []byte, r vfetchtest.Range, res result, stream bool) {
	t.Helper()
	want, complete := l.DeliversProven(data, r.Start, r.End)
	if !stream {
		lie := min(int64(l.Bad[0])*cs, r.End+1)
		want, complete = data[r.Start:max(r.Start, lie)], r.End < lie
	}
	switch {
	case res.status == http.StatusBadGateway:
		if stream && len(want) != 0 {
			t.Fatalf("%s: 502 %s, want the range's first %d bytes first", r.Header(), res.body, len(want))
		}
	case res.status/100 != 2 || !bytes.HasPrefix(want, res.body):
		t.Fatalf("%s: %d, %d bytes (%v): not a prefix of the range's own %d bytes", r.Header(), res.status, len(res.body), res.err, len(want))
	case !complete && res.err == nil:
		t.Fatalf("%s: a complete %d answer of %d bytes from a lying source", r.Header(), res.status, len(res.body))
	case stream && complete && (res.err != nil || len(res.body) != len(want)):
		t.Fatalf("%s: %d bytes, %v; want the range", r.Header(), len(res.body), res.err)
	}
}

// TestV1Source: a storage source running a ron from before verified
// streaming (no /outboard) is passed over for the providers, its body never
// read; alone it is a 502 (not a hash mismatch).
func TestV1Source(t *testing.T) {
	data, id := pattern(51, 2*cs+5)
	n := memNet{}
	s, p := newFakeStore(), newFakeStore()
	s.put(id, servingObj(vfetchtest.V1(data)))
	p.put(id, honestObj(data))
	n["storage.test"], n["p.test"] = s, p
	e := newEnv(t, envOptions{storage: httpSource(n, "storage.test"), net: n, providers: []string{"http://p.test"},
		lim: Limits{MaxProviders: 1}})
	wantBody(t, "from the provider", e.get(t.Context(), http.MethodGet, id.String()), data)
	if s.gets.Load() != 0 {
		t.Fatal("the old storage's unverifiable body was read")
	}
	alone := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
	r := alone.get(t.Context(), http.MethodGet, id.String())
	if r.status != http.StatusBadGateway || errCode(r) != "upstream_unavailable" || errReason(r) == "etag_invalid" {
		t.Fatalf("old storage alone: %d %s", r.status, r.body)
	}
}
