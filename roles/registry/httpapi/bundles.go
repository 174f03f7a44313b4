package httpapi

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/ronhq/ron/httpx/content"
	"github.com/ronhq/ron/roles/registry/segment"
	"github.com/ronhq/ron/roles/registry/tiles"
)

// bundleCacheSize is how many full entry bundles are kept (docs/registry.md §5).
const bundleCacheSize = 64

// bundle is one encoded entry bundle; its gzip form is made on first use.
type bundle struct {
	raw  []byte
	once sync.Once
	gz   []byte
	err  error
}

// gzipped returns the bundle's gzip encoding, computing it once.
func (b *bundle) gzipped() ([]byte, error) {
	b.once.Do(func() {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(b.raw); err != nil {
			b.err = err
			return
		}
		if b.err = zw.Close(); b.err == nil {
			b.gz = buf.Bytes()
		}
	})
	return b.gz, b.err
}

// serveEntries writes entry bundle p (already checked by tileAvailable),
// gzip-encoded when Accept-Encoding allows; Vary: Accept-Encoding always.
func (a *API) serveEntries(c echo.Context, p tiles.TilePath) error {
	b, err := a.bundle(p)
	if err != nil {
		return err
	}
	hd := c.Response().Header()
	hd.Add("Vary", "Accept-Encoding")
	if !acceptsGzip(c.Request().Header.Values("Accept-Encoding")) {
		return writeBytes(c, http.StatusOK, ctBinary, b.raw, content.Immutable)
	}
	gz, err := b.gzipped()
	if err != nil {
		return errInternal("gzip entry bundle %s: %v", p, err)
	}
	hd.Set("Content-Encoding", "gzip")
	return writeBytes(c, http.StatusOK, ctBinary, gz, content.Immutable)
}

// bundle returns entry bundle p built from the segment log; full bundles
// come from (and go to) the LRU.
func (a *API) bundle(p tiles.TilePath) (*bundle, error) {
	if p.Width == 0 {
		if b, ok := a.bundles.Get(p.Index); ok {
			return b, nil
		}
	}
	n := uint64(p.Width)
	if n == 0 {
		n = tiles.TileWidth
	}
	first := p.Index * tiles.TileWidth
	leaves := make([][]byte, 0, n)
	err := a.opt.Log.Scan(first, first+n-1, func(r segment.Record) error {
		leaves = append(leaves, r.Artifact)
		return nil
	})
	if err != nil {
		return nil, logError(first, err)
	}
	b := &bundle{raw: tiles.EntryBundle(leaves)}
	if p.Width == 0 {
		a.bundles.Add(p.Index, b)
	}
	return b, nil
}

// acceptsGzip reports whether Accept-Encoding allows gzip: gzip (or
// x-gzip) with q > 0, or * with q > 0 when gzip is not listed.
func acceptsGzip(values []string) bool {
	gz, star := -1.0, -1.0
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			name, q := codingQ(part)
			switch name {
			case "gzip", "x-gzip":
				gz = max(gz, q)
			case "*":
				star = max(star, q)
			}
		}
	}
	if gz >= 0 {
		return gz > 0
	}
	return star > 0
}

// codingQ splits one Accept-Encoding element into its lower-case coding
// and q value (1 when absent, 0 when unparsable).
func codingQ(part string) (string, float64) {
	name, params, _ := strings.Cut(part, ";")
	q := 1.0
	for p := range strings.SplitSeq(params, ";") {
		k, v, ok := strings.Cut(p, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < 0 || f > 1 {
			f = 0
		}
		q = f
	}
	return strings.ToLower(strings.TrimSpace(name)), q
}
