package provider

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ronhq/ron/store/verified"
	"github.com/ronhq/ron/store/verified/vfetch/vfetchtest"
)

// answer is what a client of the gateway got for one range.
type answer struct {
	status int
	total  string // the Content-Range total ("" without one)
	body   []byte
	err    error // the body's read error: the answer was cut
}

// getRange GETs url with r's Range.
func getRange(t *testing.T, c *http.Client, url string, r vfetchtest.Range) answer {
	t.Helper()
	resp, body, err := get(t, c, http.MethodGet, url, map[string]string{"Range": r.Header()})
	cr := resp.Header.Get("Content-Range")
	return answer{status: resp.StatusCode, total: cr[strings.LastIndexByte(cr, '/')+1:], body: body, err: err}
}

// Providers lying about the size only (their outboards state another size
// but prove the groups the two trees share): alone, no client gets a 206
// or a 416 stating their size complete — an answer that would state it
// before reading the stated last group is a clean 502 after the failed
// proof (the provider marked bad, a hash mismatch); one that reads that
// group is cut there, like a whole body — and every byte received is the
// object's own. Before an honest provider, the answers that needed the
// proof are the honest ones, with the true total.
func TestSizeLiars(t *testing.T) {
	data, id := pattern(5*cs + 1234)
	size := int64(len(data))
	truth := strconv.FormatInt(size, 10)
	c := newClient(t)
	goodURL := start(t, honest(data))
	for _, l := range vfetchtest.SizeLiars(data) {
		t.Run(l.Name, func(t *testing.T) {
			claim, err := verified.ParseTree(l.Outboard, id)
			if err != nil {
				t.Fatal(err)
			}
			liarURL := start(t, serving(l.Object))
			for _, r := range vfetchtest.SizeRanges(size) {
				f, m := newFetcher(t, Options{HTTP: c})
				a := getRange(t, c, gateway(t, f, id, []string{liarURL}, nil), r)
				switch {
				case r.StatesClaim(claim) && (a.status != http.StatusBadGateway || metric(m, mismatchSeries) != 1 || len(f.Filter([]string{liarURL}, "")) != 0):
					t.Fatalf("alone, %s: %d %q, want a clean 502 and a bad mark", r.Header(), a.status, a.total)
				case a.status/100 == 2 && !bytes.HasPrefix(data[min(r.Start, size):], a.body):
					t.Fatalf("alone, %s: %d bytes that are not the object's", r.Header(), len(a.body))
				case (a.status == http.StatusPartialContent || a.status == http.StatusRequestedRangeNotSatisfiable) && a.err == nil && a.total != truth:
					t.Fatalf("alone, %s: a complete %d stating %s", r.Header(), a.status, a.total)
				}
				if !r.StatesClaim(claim) {
					continue
				}
				f, _ = newFetcher(t, Options{HTTP: c})
				a = getRange(t, c, gateway(t, f, id, []string{liarURL, goodURL}, nil), r)
				want := getRange(t, c, gateway(t, f, id, []string{goodURL}, nil), r)
				if a.status != want.status || a.total != truth || a.err != nil || !bytes.Equal(a.body, want.body) {
					t.Fatalf("before an honest provider, %s: %d %q, %d bytes, %v; want %d with the true total", r.Header(),
						a.status, a.total, len(a.body), a.err, want.status)
				}
			}
		})
	}
}

// An honest provider: ranges ending before the last group and 416s carry
// the true total, and the size costs one request for the last group per
// object, not per answer (the proof is remembered; so is a size proven by a
// read that reached the last group).
func TestSizeProvenOnce(t *testing.T) {
	data, id := pattern(5*cs + 1234)
	size := int64(len(data))
	lastGroup := "bytes=327680-" + strconv.FormatInt(size-1, 10)
	for _, tc := range []struct {
		name   string
		first  string // the first request's Range ("": none, a whole body)
		proofs int
	}{{"ranges only", "bytes=0-0", 1}, {"after a whole read", "", 0}, {"after a range reaching the last group", "bytes=-1", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			p := honest(data)
			f, _ := newFetcher(t, Options{})
			url := gateway(t, f, id, []string{start(t, p)}, nil)
			c := newClient(t)
			if resp, _, err := get(t, c, http.MethodGet, url, map[string]string{"Range": tc.first}); err != nil || resp.StatusCode/100 != 2 {
				t.Fatalf("first read: %d %v", resp.StatusCode, err)
			}
			for _, r := range vfetchtest.SizeRanges(size) {
				a := getRange(t, c, url, r)
				if a.err != nil || a.total != strconv.FormatInt(size, 10) {
					t.Fatalf("%s: %d %q %v", r.Header(), a.status, a.total, a.err)
				}
			}
			// Each answer: the outboard and the span it sends (none for the
			// 416), and the proofs.
			reqs := p.requests()
			if want := 2*(1+len(vfetchtest.SizeRanges(size))) - 1 + tc.proofs; len(reqs) != want ||
				tc.proofs == 1 && reqs[1].Header.Get("Range") != lastGroup {
				t.Fatalf("%d requests, want %d (%d proofs of the size)", len(reqs), want, tc.proofs)
			}
		})
	}
}
