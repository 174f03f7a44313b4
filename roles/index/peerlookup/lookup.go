package peerlookup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/ronhq/ron/httpx/client"
	"github.com/ronhq/ron/httpx/client/hedge"
	"github.com/ronhq/ron/roles/index/indexapi"
	"github.com/ronhq/ron/store"
)

// LookupName asks peers (in order) for key, a name or "name@version", with
// GET /names/{key}?local=1 legs. Per docs/index.md §6 rule 3 the lookup ends at the first
// satisfactory answer (200 with a valid record) and returns the highest
// version among the satisfactory answers received by then (answers of legs
// that completed before they saw the cancellation count too). No peers is
// an *hedge.UnavailableError.
func LookupName(ctx context.Context, key string, peers []*client.Client, opt hedge.Options) (indexapi.NameRecord, error) {
	check, err := nameCheck(key)
	if err != nil {
		return indexapi.NameRecord{}, fmt.Errorf("index: peer lookup of %q: %w", key, err)
	}
	if len(peers) == 0 {
		return indexapi.NameRecord{}, &hedge.UnavailableError{}
	}
	var (
		mu   sync.Mutex
		best indexapi.NameRecord
		have bool
	)
	path := namesPath(key)
	legs := make([]hedge.Peer[indexapi.NameRecord], len(peers))
	for i, c := range peers {
		legs[i] = &collectPeer{
			HTTPPeer: &hedge.HTTPPeer[indexapi.NameRecord]{Client: c, Path: path, Op: "GET /names/{name}", Check: check},
			got: func(r indexapi.NameRecord) {
				mu.Lock()
				defer mu.Unlock()
				if !have || r.Version > best.Version {
					best, have = r, true
				}
			},
		}
	}
	rec, _, err := hedge.Lookup(ctx, legs, func(indexapi.NameRecord) bool { return true }, opt)
	if err != nil {
		return indexapi.NameRecord{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	if have && best.Version > rec.Version {
		rec = best
	}
	return rec, nil
}

// LookupProviders asks peers (in order) for the live providers of id with
// GET /providers/{b3}?local=1 legs; the first answer with at least one
// (unexpired) provider wins (docs/index.md §6 rule 3). No peers is an
// *hedge.UnavailableError.
func LookupProviders(ctx context.Context, id store.ID, peers []*client.Client, opt hedge.Options) (indexapi.ProviderList, error) {
	if len(peers) == 0 {
		return indexapi.ProviderList{}, &hedge.UnavailableError{}
	}
	b3 := id.String()
	check := func(l indexapi.ProviderList) error {
		if l.B3 != b3 {
			return fmt.Errorf("answer for %q, asked %q", l.B3, b3)
		}
		for _, p := range l.Providers {
			if p.ExpiresInS <= 0 {
				return fmt.Errorf("expired provider record %q", p.Node)
			}
		}
		return nil
	}
	path := providersPath(b3)
	legs := make([]hedge.Peer[indexapi.ProviderList], len(peers))
	for i, c := range peers {
		legs[i] = &hedge.HTTPPeer[indexapi.ProviderList]{Client: c, Path: path, Op: "GET /providers/{b3}", Check: check}
	}
	l, _, err := hedge.Lookup(ctx, legs, func(l indexapi.ProviderList) bool { return len(l.Providers) > 0 }, opt)
	return l, err
}

// nameCheck parses key, a name or "name@version", and returns the check of
// an answer to it: the name asked, the version asked (if any), a version
// and a valid target.
func nameCheck(key string) (func(indexapi.NameRecord) error, error) {
	name, version, versioned := key, uint64(0), strings.Contains(key, "@")
	var err error
	if versioned {
		name, version, err = indexapi.ParseNameVersion(key)
	} else {
		_, err = indexapi.ParseName(key)
	}
	if err != nil {
		return nil, err
	}
	return func(r indexapi.NameRecord) error {
		switch {
		case r.Name != name:
			return fmt.Errorf("answer for name %q, asked %q", r.Name, name)
		case versioned && r.Version != version:
			return fmt.Errorf("answer for version %d, asked %d", r.Version, version)
		case r.Version == 0:
			return errors.New("answer without a version")
		}
		if _, err := store.ParseID(r.B3); err != nil {
			return fmt.Errorf("answer target: %v", err)
		}
		return nil
	}, nil
}

// collectPeer wraps an HTTPPeer and reports every valid answer to got, so
// LookupName can pick the highest version among the answers received.
type collectPeer struct {
	*hedge.HTTPPeer[indexapi.NameRecord]
	got func(indexapi.NameRecord)
}

func (p *collectPeer) Lookup(ctx context.Context) (indexapi.NameRecord, error) {
	r, err := p.HTTPPeer.Lookup(ctx)
	if err == nil {
		p.got(r)
	}
	return r, err
}

// namesPath is the route GET /names/{name} (docs/index.md §6 lookup leg for names).
func namesPath(name string) string { return "/names/" + name }

// providersPath is the route GET /providers/{b3} (docs/index.md §6 lookup leg for b3 keys).
func providersPath(b3 string) string { return "/providers/" + b3 }
