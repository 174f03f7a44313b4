package objects

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/ronhq/ron/store/verified"
	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

// total is the Content-Range total of r ("" without one).
func total(r result) string {
	cr := r.header.Get("Content-Range")
	return cr[strings.LastIndexByte(cr, '/')+1:]
}

// TestSizeLiars: a storage source lying about the size only (its outboard
// states another size but proves the groups the two trees share), through
// a fill and through a stream. Alone, no client gets a 206 or a 416 stating
// its size complete: an answer that would state it before reading the
// stated last group is a clean 502 etag_invalid after the failed proof; one
// that reads that group is cut there, like a whole body; every byte
// received is the object's own, and nothing is stored. With an honest
// provider after it, a stream — which may still try another source — gives
// the answers that needed the proof from the provider, with the true total;
// a fill has settled on the liar once its first group verified, so they
// stay 502.
func TestSizeLiars(t *testing.T) {
	data, id := pattern(60, 5*cs+1234)
	size := int64(len(data))
	truth := strconv.FormatInt(size, 10)
	for _, mode := range []struct {
		name string
		lim  Limits
	}{{"fill", Limits{MaxProviders: 1}}, {"stream", Limits{FillMaxBytes: 2 * cs, MaxProviders: 1}}} {
		for _, l := range vfetchtest.SizeLiars(data) {
			t.Run(mode.name+"/"+l.Name, func(t *testing.T) {
				claim, err := verified.ParseTree(l.Outboard, id)
				if err != nil {
					t.Fatal(err)
				}
				n, _ := storageHolding(id, servingObj(l.Object))
				p := newFakeStore()
				p.put(id, honestObj(data))
				n["p.test"] = p
				alone := newEnv(t, envOptions{storage: httpSource(n, "storage.test"), lim: mode.lim})
				var backed *env
				if mode.name == "stream" {
					backed = newEnv(t, envOptions{storage: httpSource(n, "storage.test"), lim: mode.lim, net: n,
						providers: []string{"http://p.test"}})
				}
				for _, r := range vfetchtest.SizeRanges(size) {
					a := alone.get(t.Context(), http.MethodGet, id.String(), "Range", r.Header())
					switch {
					case r.StatesClaim(claim) && (a.status != http.StatusBadGateway || errReason(a) != ReasonEtagInvalid):
						t.Fatalf("alone, %s: %d %q, want a clean 502 etag_invalid", r.Header(), a.status, total(a))
					case a.status/100 == 2 && !bytes.HasPrefix(data[min(r.Start, size):], a.body):
						t.Fatalf("alone, %s: %d bytes that are not the object's", r.Header(), len(a.body))
					case (a.status == http.StatusPartialContent || a.status == http.StatusRequestedRangeNotSatisfiable) &&
						a.err == nil && total(a) != truth:
						t.Fatalf("alone, %s: a complete %d stating %s", r.Header(), a.status, total(a))
					}
					if !r.StatesClaim(claim) || backed == nil {
						continue
					}
					a = backed.get(t.Context(), http.MethodGet, id.String(), "Range", r.Header())
					if a.status/100 != 2 && a.status != http.StatusRequestedRangeNotSatisfiable || total(a) != truth || a.err != nil ||
						a.status == http.StatusPartialContent && !bytes.Equal(a.body, data[r.Start:min(r.End+1, size)]) {
						t.Fatalf("before an honest provider, %s: %d %q, %d bytes, %v", r.Header(), a.status, total(a), len(a.body), a.err)
					}
				}
				if _, _, ok := alone.cache.Object(id); ok {
					t.Fatal("a lying source's object was stored")
				}
			})
		}
	}
}

// TestSizeProvenOnceStreamed: an object too large to store, from an
// honest source: ranges ending before the last group and 416s carry the
// true total, and the size costs one request for the last group in all.
func TestSizeProvenOnceStreamed(t *testing.T) {
	data, id := pattern(61, 5*cs+1234)
	size := int64(len(data))
	n, s := storageHolding(id, honestObj(data))
	e := newEnv(t, envOptions{storage: httpSource(n, "storage.test"), lim: Limits{FillMaxBytes: 2 * cs}})
	for _, r := range vfetchtest.SizeRanges(size) {
		a := e.get(t.Context(), http.MethodGet, id.String(), "Range", r.Header())
		if a.err != nil || total(a) != strconv.FormatInt(size, 10) {
			t.Fatalf("%s: %d %q %v", r.Header(), a.status, total(a), a.err)
		}
	}
	// Each answer but the 416 sends one span; two of them are the last
	// group; one more request for the last group is the proof, made by the
	// first answer before its span.
	var spans, last int
	for _, r := range s.requests() {
		if !strings.HasSuffix(r.URL.Path, "/outboard") {
			spans++
			if r.Header.Get("Range") == lastGroupRange(size) {
				last++
			}
		}
	}
	want := len(vfetchtest.SizeRanges(size)) - 1 + 1 // every answer but the 416, and the proof
	if spans != want || last != 3 || s.gets.Load() != int64(spans) {
		t.Fatalf("%d body requests (%d of the last group), want %d (3)", spans, last, want)
	}
}

// lastGroupRange is the Range of the last group of an object of size
// bytes (more than one group).
func lastGroupRange(size int64) string {
	return "bytes=" + strconv.FormatInt((size-1)/cs*cs, 10) + "-" + strconv.FormatInt(size-1, 10)
}

// TestSizeProvenOnceCoalesced: ten range requests ending before the last
// group, all waiting on one fill that is held after its first group, get
// their 206 with the true total from one shared proof (one request for the
// last group), before the fill goes on; once it is stored, ranges are hits.
func TestSizeProvenOnceCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		data, id := pattern(62, 3*cs+1)
		obj := honestObj(data)
		obj.gate, obj.gateAfter = make(chan struct{}), cs
		n, s := storageHolding(id, obj)
		e := newEnv(t, envOptions{storage: httpSource(n, "storage.test")})
		results := make(chan result, 10)
		for range 10 {
			go func() { results <- e.get(context.Background(), http.MethodGet, id.String(), "Range", "bytes=10-99") }()
		}
		for range 10 {
			r := <-results
			if r.status != http.StatusPartialContent || r.header.Get("Content-Range") != "bytes 10-99/196609" ||
				!bytes.Equal(r.body, data[10:100]) || r.err != nil {
				t.Fatalf("%d %q, %d bytes, %v", r.status, r.header.Get("Content-Range"), len(r.body), r.err)
			}
		}
		proofs := 0
		for _, r := range s.requests() {
			if r.Header.Get("Range") == lastGroupRange(int64(len(data))) {
				proofs++
			}
		}
		if proofs != 1 || s.gets.Load() != 2 {
			t.Fatalf("%d proofs, %d body GETs; want one proof and the fill", proofs, s.gets.Load())
		}
		close(obj.gate)
		synctest.Wait()
		before := len(s.requests())
		r := e.get(context.Background(), http.MethodGet, id.String(), "Range", "bytes=10-99")
		if r.status != http.StatusPartialContent || r.header.Get("Cache-Status") != statusHit || len(s.requests()) != before {
			t.Fatalf("after the fill: %d %q, %d more requests", r.status, r.header.Get("Cache-Status"), len(s.requests())-before)
		}
	})
}
