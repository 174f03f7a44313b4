package packs

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/ronhq/ron/roles/edge/pmtiles"
	"github.com/ronhq/ron/runtime"
)

// snapshot is an immutable name → pack map plus the packs sorted by name.
type snapshot struct {
	byName map[string]*Pack
	sorted []*Pack
}

func newSnapshot(byName map[string]*Pack) *snapshot {
	s := &snapshot{byName: byName, sorted: make([]*Pack, 0, len(byName))}
	for _, p := range byName {
		s.sorted = append(s.sorted, p)
	}
	slices.SortFunc(s.sorted, func(a, b *Pack) int { return strings.Compare(a.name, b.name) })
	return s
}

// entry is the watcher's record of one pack name.
type entry struct {
	path        string   // the file last acted on
	applied     fileStat // its stat then (mounted or failed)
	hasApplied  bool
	pending     fileStat // a different stat seen at the previous poll
	pendingPath string
	hasPending  bool
	failure     string // why the name is not mounted ("" = mounted, or an old version kept)
	suspect     bool   // corruption reported while serving: re-verify
}

// lastError is the Set's most recent failure, shown as the role's
// last_error.
type lastError struct {
	name, msg string
}

// Set is the edge's set of mounted packs. Mount and Run are the single
// writer (Run after Mount); Acquire, List, Missing and Status are safe from
// any goroutine at any time.
type Set struct {
	opt   atomic.Pointer[Options]
	log   zerolog.Logger
	m     *runtime.Metrics
	cache *pmtiles.DirCache
	snap  atomic.Pointer[snapshot]
	busy  atomic.Bool // a poll is running

	mu      sync.Mutex // guards the fields below; never held across I/O
	entries map[string]*entry
	last    lastError
	closed  bool
}

// NewSet returns an empty set for opt. It opens nothing: call Mount.
func NewSet(opt Options) *Set {
	opt = opt.withDefaults()
	if opt.Metrics == nil {
		opt.Metrics = runtime.NewMetrics(nil)
	}
	s := &Set{log: opt.Log, m: opt.Metrics, entries: map[string]*entry{}}
	s.opt.Store(&opt)
	s.snap.Store(newSnapshot(map[string]*Pack{}))
	hit := s.m.Counter("edge_dir_cache_lookups_total", "role", role, "result", "hit")
	miss := s.m.Counter("edge_dir_cache_lookups_total", "role", role, "result", "miss")
	s.cache = pmtiles.NewDirCache(pmtiles.DirCacheOptions{MaxBytes: opt.DirCacheBytes, OnLookup: func(h bool) {
		if h {
			hit.Inc()
		} else {
			miss.Inc()
		}
	}})
	for _, k := range []Kind{KindPMTiles, KindMBTiles} {
		s.m.Gauge("edge_packs_mounted", func() float64 { return float64(s.countKind(k)) }, "role", role, "kind", string(k))
	}
	return s
}

// options returns the current options.
func (s *Set) options() Options { return *s.opt.Load() }

// Apply installs new options. New or removed folders and files are acted
// on by the next polls (added files after two equal stats, like any
// change); the verification level applies to packs opened from then on
// (mounted ones are not re-verified); the poll interval from the next
// sleep; pack_errors at once to Missing and Status; the directory cache
// budget at once (shrinking evicts). Metrics and Log are kept from NewSet.
func (s *Set) Apply(opt Options) {
	opt = opt.withDefaults()
	cur := s.options()
	opt.Metrics, opt.Log = cur.Metrics, cur.Log
	s.opt.Store(&opt)
	s.cache.SetMaxBytes(opt.DirCacheBytes)
}

// Acquire returns the mounted pack name and a release function to call
// once when the caller's reads are done; a pack swapped out meanwhile stays
// open until its last release.
func (s *Set) Acquire(name string) (p *Pack, release func(), ok bool) {
	for {
		snap := s.snap.Load()
		p, ok = snap.byName[name]
		if !ok {
			return nil, nil, false
		}
		if p.tryRef() {
			var once atomic.Bool
			return p, func() {
				if once.CompareAndSwap(false, true) {
					p.unref()
				}
			}, true
		}
		// p was swapped out and closed between the load and the ref:
		// the snapshot has changed, load it again.
	}
}

// List returns the mounted packs sorted by name, for their metadata (reads
// need Acquire).
func (s *Set) List() []*Pack { return slices.Clone(s.snap.Load().sorted) }

// DirCache returns the shared PMTiles directory cache.
func (s *Set) DirCache() *pmtiles.DirCache { return s.cache }

// countKind counts the mounted packs of kind k.
func (s *Set) countKind(k Kind) int {
	n := 0
	for _, p := range s.snap.Load().sorted {
		if p.kind == k {
			n++
		}
	}
	return n
}

// Close unmounts every pack; each file closes after its last release.
// Acquire then finds nothing and polls stop changing the set.
func (s *Set) Close() {
	s.mu.Lock()
	s.closed = true
	old := s.snap.Swap(newSnapshot(map[string]*Pack{}))
	s.entries = map[string]*entry{}
	s.mu.Unlock()
	for _, p := range old.sorted {
		p.unref()
	}
}

// reportCorrupt marks p's name for re-verification at the next poll when p
// is still the mounted version.
func (s *Set) reportCorrupt(p *Pack) {
	s.mu.Lock()
	e := s.entries[p.name]
	first := e != nil && !e.suspect && s.snap.Load().byName[p.name] == p
	if first {
		e.suspect = true
	}
	s.mu.Unlock()
	if first {
		s.log.Warn().Str("pack", p.name).Msg("pack found corrupt while serving; re-verifying at the next poll")
	}
}
