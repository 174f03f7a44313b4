package sites

import (
	"net/http"
	"strings"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/content"
	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/store"
)

// request carries one /n request through the serve helpers.
type request struct {
	w     http.ResponseWriter
	r     *http.Request
	name  string // bare name
	key   string // name or name@version, as resolved
	query string // raw query
	cc    string // Cache-Control of this request's answers
}

// errNotFound is the 404 of a path the target does not have.
func errNotFound() error {
	return httpx.NewError(http.StatusNotFound, httpx.CodeNotFound, "no such path")
}

// serveBlob answers a blob target: only "/n/{name}" and "/n/{name}/" exist.
func (s *Sites) serveBlob(q request, id store.ID, p Path) error {
	if p.P != "" {
		return errNotFound()
	}
	return s.serveObject(q, id, "", -1)
}

// serveSite maps p over the manifest and answers accordingly.
func (s *Sites) serveSite(q request, st *site, p Path) error {
	m := st.tree.Map(p)
	switch m.Action {
	case ServeEntry:
		e := st.entries[m.Path]
		return s.serveObject(q, e.ID, e.Type, e.Size)
	case ServeListing:
		return s.serveListing(q, st, m.Path)
	case Redirect:
		return q.redirect(m.Path)
	}
	return errNotFound()
}

// serveObject answers with id's bytes through Objects.Serve, with ETag and
// Cache-Control set, and Content-Type when contentType is not empty. A
// request whose If-None-Match matches the ETag (weak comparison, lists;
// not "*", which Objects.Serve evaluates) gets a 304 here without any
// Objects call. size ≥ 0 is the manifest's advisory size, checked against
// what Objects.Serve announces.
func (s *Sites) serveObject(q request, id store.ID, contentType string, size int64) error {
	etag := content.ETag(id)
	if localNotModified(q.r, etag) {
		q.notModified(etag)
		return nil
	}
	set := http.Header{}
	set.Set("ETag", etag)
	set.Set("Cache-Control", q.cc)
	if contentType != "" {
		set.Set("Content-Type", contentType)
	}
	w := q.w
	if size >= 0 {
		w = &sizeWriter{ResponseWriter: q.w, want: size, mismatch: func(got int64) { s.sizeMismatch(q, id, size, got) }}
	}
	return s.objects.Serve(w, q.r, id, set)
}

// localNotModified reports whether r may be answered 304 for etag without
// asking storage: ranges.CheckPreconditions says 304 (so a failing If-Match
// still goes to Objects.Serve for its 412) and If-None-Match is not "*".
func localNotModified(r *http.Request, etag string) bool {
	if strings.TrimSpace(strings.Join(r.Header.Values("If-None-Match"), ",")) == "*" {
		return false
	}
	return ranges.CheckPreconditions(r, etag) == http.StatusNotModified
}

// notModified writes a 304 with ETag and Cache-Control.
func (q request) notModified(etag string) {
	h := q.w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", q.cc)
	q.w.WriteHeader(http.StatusNotModified)
}

// redirect writes a 301 to "/n/{key}/{dir}" (dir "" or ending in '/',
// escaped per segment) with the raw query kept and Cache-Control set (a
// name can move, so the redirect must not be cached for good).
func (q request) redirect(dir string) error {
	loc := "/n/" + escapePath(q.key) + "/" + escapePath(dir)
	if q.query != "" {
		loc += "?" + q.query
	}
	h := q.w.Header()
	h.Set("Location", loc)
	h.Set("Cache-Control", q.cc)
	h.Set("Content-Length", "0")
	q.w.WriteHeader(http.StatusMovedPermanently)
	return nil
}

// sizeMismatch counts and logs an entry served with another size than its
// manifest says (the id's bytes win).
func (s *Sites) sizeMismatch(q request, id store.ID, want, got int64) {
	s.metrics.sizeMismatch.Inc()
	s.log.Warn().Str("name", q.name).Str("entry", id.Prefix()).
		Int64("manifest_size", want).Int64("served_size", got).Msg("site entry size differs from its manifest")
}
