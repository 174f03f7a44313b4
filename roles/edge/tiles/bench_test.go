package tiles

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// stamenURLs are the URLs of every tile of stamen_toner_z3 (z0–3).
func stamenURLs() []string {
	var urls []string
	for z := 0; z <= 3; z++ {
		for x := 0; x < 1<<z; x++ {
			for y := 0; y < 1<<z; y++ {
				urls = append(urls, "/tiles/stamen_toner_z3/"+strconv.Itoa(z)+"/"+strconv.Itoa(x)+"/"+strconv.Itoa(y)+".png")
			}
		}
	}
	return urls
}

// discard is a ResponseWriter that keeps headers and drops the body.
type discard struct {
	h    http.Header
	code int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(code int)        { d.code = code }

// BenchmarkTileHit: warm tile hits through the handler (echo router,
// pack lookup, tile read, headers, body), cycling through every tile of
// stamen_toner_z3.
func BenchmarkTileHit(b *testing.B) {
	ev := newEnv(b, Settings{}, fixtures(b, "stamen_toner_z3.pmtiles"))
	urls := stamenURLs()
	reqs := make([]*http.Request, len(urls))
	for i, u := range urls {
		reqs[i] = httptest.NewRequest(http.MethodGet, u, nil)
		if w := ev.do(reqs[i]); w.Code != 200 {
			b.Fatalf("%s: %d", u, w.Code)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := &discard{h: http.Header{}}
		mine := make([]*http.Request, len(reqs))
		for i, r := range reqs {
			mine[i] = r.Clone(r.Context())
		}
		for i := 0; pb.Next(); i++ {
			clear(w.h)
			ev.e.ServeHTTP(w, mine[i%len(mine)])
			if w.code != 200 {
				b.Errorf("status %d", w.code)
				return
			}
		}
	})
}
