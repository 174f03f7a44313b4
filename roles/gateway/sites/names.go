package sites

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/ronhq/ron/httpx"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
)

// ParseName decodes the raw {name} segment once and validates it with the
// index's own parsers (indexapi.ParseName, or indexapi.ParseNameVersion when
// it holds '@'). It returns the bare name and the resolve key (the name, or
// "name@version"); bad syntax is 400 bad_request.
func ParseName(raw string) (name, key string, err error) {
	dec, uerr := url.PathUnescape(raw)
	if uerr != nil {
		return "", "", badName("name is not valid path text")
	}
	if strings.Contains(dec, "@") {
		name, _, err = indexapi.ParseNameVersion(dec)
	} else {
		name, err = indexapi.ParseName(dec)
	}
	if err != nil {
		return "", "", badName(err.Error())
	}
	return name, dec, nil
}

func badName(msg string) error {
	return httpx.NewError(http.StatusBadRequest, httpx.CodeBadRequest, "%s", msg)
}

// resolve returns key's target through the name cache; concurrent misses
// on one key share one Resolver call.
func (s *Sites) resolve(ctx context.Context, key string) (store.ID, error) {
	if id, ok, err := s.names.get(key); ok {
		return id, err
	}
	return s.nameFlight.do(ctx, key, func() (store.ID, error) {
		if id, ok, err := s.names.get(key); ok {
			return id, err
		}
		id, err := s.resolver.Resolve(ctx, key)
		if err != nil {
			err = upstreamError(err)
		}
		s.names.put(key, id, err, s.settings())
		return id, err
	})
}

// nameCache maps resolve keys to answers with an expiry: targets for
// nameTTL, 404s for notFoundTTL; other errors are not stored. Bounded by
// entry count, least recently used out.
type nameCache struct {
	c *lru.Cache[string, nameEntry]
}

type nameEntry struct {
	id      store.ID
	err     error
	expires time.Time
}

func newNameCache(entries int) *nameCache {
	c, _ := lru.New[string, nameEntry](entries) // fails only for entries ≤ 0 (defaults prevent it)
	return &nameCache{c: c}
}

// get returns a live entry; an expired one is removed and missed.
func (n *nameCache) get(key string) (store.ID, bool, error) {
	e, ok := n.c.Get(key)
	if !ok {
		return store.ID{}, false, nil
	}
	if !time.Now().Before(e.expires) {
		n.c.Remove(key)
		return store.ID{}, false, nil
	}
	return e.id, true, cloneError(e.err)
}

func (n *nameCache) put(key string, id store.ID, err error, set *settings) {
	ttl := set.nameTTL
	switch {
	case isNotFound(err):
		ttl = set.notFoundTTL
	case err != nil:
		return
	}
	n.c.Add(key, nameEntry{id: id, err: err, expires: time.Now().Add(ttl)})
}

func (n *nameCache) resize(entries int) { n.c.Resize(entries) }
