package sites

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/httpx/ranges"
	"github.com/ronhq/ron/store"
)

// Listing is the JSON body of a directory listing (docs/gateway.md §5).
type Listing struct {
	Name     string         `json:"name"`
	Manifest string         `json:"manifest"`
	Path     string         `json:"path"`
	Entries  []ListingEntry `json:"entries"`
}

// ListingEntry is a file (Name, ID, Size, Type) or a subdirectory (Name
// ending in '/', Dir true).
type ListingEntry struct {
	Name string `json:"name"`
	ID   string `json:"id,omitempty"`
	Size *int64 `json:"size,omitempty"`
	Type string `json:"type,omitempty"`
	Dir  bool   `json:"dir,omitempty"`
}

// ListingETag is the strong entity tag of the listing of directory d of the
// manifest id: "ls-" and the first 32 hex digits of BLAKE3 over the bytes
// of id's textual form "b3:<hex>", one 0x00 byte and d; quoted.
func ListingETag(id store.ID, d string) string {
	buf := make([]byte, 0, 68+len(d))
	buf = append(buf, id.String()...)
	buf = append(buf, 0)
	buf = append(buf, d...)
	return `"ls-` + store.Sum(buf).Hex()[:32] + `"`
}

// listing builds the listing of directory d of st for name.
func listing(name string, st *site, d string) Listing {
	kids := st.tree.Children(d)
	l := Listing{Name: name, Manifest: st.id.String(), Path: d, Entries: make([]ListingEntry, 0, len(kids))}
	for _, c := range kids {
		if c.Dir {
			l.Entries = append(l.Entries, ListingEntry{Name: c.Name, Dir: true})
			continue
		}
		e := st.entries[c.Path]
		size := e.Size
		l.Entries = append(l.Entries, ListingEntry{Name: c.Name, ID: e.ID.String(), Size: &size, Type: e.Type})
	}
	return l
}

// serveListing answers the listing of directory d: 200 application/json
// with a strong ETag and Cache-Control, or 304 / 412 from its conditionals
// (evaluated before the listing is built). HEAD gets the headers only.
func (s *Sites) serveListing(q request, st *site, d string) error {
	etag := ListingETag(st.id, d)
	switch ranges.CheckPreconditions(q.r, etag) {
	case http.StatusNotModified:
		q.notModified(etag)
		return nil
	case http.StatusPreconditionFailed:
		return httpx.NewError(http.StatusPreconditionFailed, httpx.CodePreconditionFailed, "precondition failed")
	}
	var body bytes.Buffer
	if err := json.NewEncoder(&body).Encode(listing(q.name, st, d)); err != nil {
		return err // cannot happen: strings and numbers only
	}
	h := q.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("ETag", etag)
	h.Set("Cache-Control", q.cc)
	h.Set("Content-Length", strconv.Itoa(body.Len()))
	q.w.WriteHeader(http.StatusOK)
	if q.r.Method != http.MethodHead {
		_, _ = q.w.Write(body.Bytes())
	}
	return nil
}
