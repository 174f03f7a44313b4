package tiles

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ronhq/ron/roles/edge/packs"
	"github.com/ronhq/ron/roles/edge/tiletype"
)

// Header values computed once and shared by every response that sends
// them (assigned to the header map under their canonical keys). Each slice
// has capacity 1, so h.Add on the same field copies instead of writing into
// it; nothing may modify their elements.
var (
	valBytes          = []string{"bytes"}
	valAcceptEncoding = []string{"Accept-Encoding"}
	valContentType    = func() map[tiletype.Type][]string {
		m := map[tiletype.Type][]string{}
		for t := tiletype.Type(0); t <= 7; t++ {
			m[t] = []string{t.ContentType()}
		}
		return m
	}()
)

// valEncoding holds the Content-Encoding value of each coding that has one.
var valEncoding = func() map[tiletype.Coding][]string {
	m := map[tiletype.Coding][]string{}
	for _, c := range []tiletype.Coding{tiletype.Gzip, tiletype.Brotli, tiletype.Zstd} {
		m[c] = []string{c.ContentEncoding()}
	}
	return m
}()

// contentEncodingOf is the Content-Encoding value of bytes sent with
// coding c, nil for none.
func contentEncodingOf(c tiletype.Coding) []string { return valEncoding[c] }

// contentTypeOf is the Content-Type value of tile type typ.
func contentTypeOf(typ tiletype.Type) []string {
	if v, ok := valContentType[typ]; ok {
		return v
	}
	return []string{typ.ContentType()}
}

// headerVals caches the formatted values that change rarely: the Date of
// the current second, the Cache-Control of the settings in force and the
// Last-Modified of each pack version.
type headerVals struct {
	date     atomic.Pointer[dateVal]
	cacheCtl atomic.Pointer[[]string]
	mtimes   sync.Map     // pack id → *mtimeVal
	nMtimes  atomic.Int64 // entries in mtimes
}

// maxMtimes bounds headerVals.mtimes: past it the map starts over.
const maxMtimes = 1024

type dateVal struct {
	sec int64
	val []string
}

type mtimeVal struct {
	mtime time.Time // the file's mtime, truncated to seconds
	val   []string
}

// dateOf is the Date value of t (formatted once per second).
func (hv *headerVals) dateOf(t time.Time) []string {
	sec := t.Unix()
	if d := hv.date.Load(); d != nil && d.sec == sec {
		return d.val
	}
	d := &dateVal{sec: sec, val: []string{t.UTC().Format(http.TimeFormat)}}
	hv.date.Store(d)
	return d.val
}

// cacheControlOf is the Cache-Control value of v.
func (hv *headerVals) cacheControlOf(v string) []string {
	if p := hv.cacheCtl.Load(); p != nil && (*p)[0] == v {
		return *p
	}
	val := []string{v}
	hv.cacheCtl.Store(&val)
	return val
}

// lastModified is the Last-Modified value of pack p answering at date (the
// mtime, or date when the mtime is later: RFC 9110 §8.8.2.1).
func (hv *headerVals) lastModified(p *packs.Pack, date time.Time) []string {
	mv := hv.mtimeOf(p)
	if mv.mtime.After(date) {
		return hv.dateOf(date)
	}
	return mv.val
}

// mtimeOf returns the formatted mtime of p's version.
func (hv *headerVals) mtimeOf(p *packs.Pack) *mtimeVal {
	if v, ok := hv.mtimes.Load(p.ID()); ok {
		return v.(*mtimeVal)
	}
	if hv.nMtimes.Add(1) > maxMtimes {
		hv.mtimes.Clear()
		hv.nMtimes.Store(1)
	}
	m := p.ModTime().UTC()
	mv := &mtimeVal{mtime: m.Truncate(time.Second), val: []string{m.Format(http.TimeFormat)}}
	hv.mtimes.Store(p.ID(), mv)
	return mv
}
