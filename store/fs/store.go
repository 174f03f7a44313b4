// Package fs is the durable, on-disk BlobStore engine.
//
// Layout under the storage directory (docs/storage.md §5):
//
//	objects/<hex[0:2]>/<hex[2:4]>/<hex>       object bytes (0640)
//	objects/<hex[0:2]>/<hex[2:4]>/<hex>.meta  sidecar
//	tmp/                                      partial uploads and probes, emptied at Open
//	quarantine/<hex>.<unix_ms>[.meta]         failed objects, removed by Sweep after QuarantineKeep
//
// Directories are created with mode 0750. Open does no full scan: object
// and byte counts reflect writes since Open until Recount is called.
package fs

import (
	"context"
	"fmt"
	"github.com/ronhq/ron/store/durable"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/ronhq/ron/store"
	"golang.org/x/sync/singleflight"
	"golang.org/x/sys/unix"
)

// Defaults applied by Open to zero Options fields.
const (
	DefaultSidecarCacheBytes = 64 << 20
	DefaultQuarantineKeep    = 168 * time.Hour
	// OrphanSidecarAge is how old a sidecar without data must be before
	// Sweep removes it.
	OrphanSidecarAge = time.Hour
	// FreeCheckInterval is how many bytes a Put writes between free-space
	// checks.
	FreeCheckInterval = 64 << 20
)

// Options configures an fs Store.
type Options struct {
	// MinFreeBytes: Put fails with ErrNoSpace when the file system's
	// available bytes drop below this (checked at the start and every
	// FreeCheckInterval bytes).
	MinFreeBytes int64
	// SidecarCacheBytes bounds the LRU of parsed sidecars; 0 = 64 MiB,
	// negative disables caching.
	SidecarCacheBytes int64
	// QuarantineKeep is how long Sweep keeps quarantined files; 0 = 168 h.
	QuarantineKeep time.Duration
	// OnCorrupt is called after an object was found corrupt and quarantined.
	OnCorrupt func(id store.ID, chunk int, kind string)
	// OnSidecarRebuilt is called after a missing or invalid sidecar was
	// rebuilt from its data.
	OnSidecarRebuilt func(id store.ID)
	// Now is the clock; nil = time.Now.
	Now func() time.Time
}

// Store is the fs engine. It implements store.BlobStore and is safe for
// concurrent use.
type Store struct {
	dir, objDir, tmpDir, qDir string
	opt                       Options
	hooks                     store.Hooks
	cache                     *sidecarCache
	cpu                       chan struct{} // bounds sidecar rebuilds to GOMAXPROCS
	rebuilds                  singleflight.Group
	closed                    atomic.Bool

	objects, bytes atomic.Int64
	minFree        atomic.Int64 // Options.MinFreeBytes, changeable live

	shards sync.Map // shard dirs whose entries are known durable

	qmu  sync.Mutex
	qset map[store.ID]int // quarantined data files per id

	// Test hooks (internal tests only).
	failpoint  func(step string) error // a non-nil error simulates a crash at step
	checkEvery int64
	statfs     func() (int64, error)
}

var _ store.BlobStore = (*Store)(nil)

// Open opens (creating if needed) the store rooted at dir (<data>/storage),
// empties tmp/ and loads the quarantine index. It does not scan objects.
func Open(dir string, opt Options) (*Store, error) {
	if opt.SidecarCacheBytes == 0 {
		opt.SidecarCacheBytes = DefaultSidecarCacheBytes
	}
	if opt.QuarantineKeep == 0 {
		opt.QuarantineKeep = DefaultQuarantineKeep
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	s := &Store{
		dir: dir, objDir: filepath.Join(dir, "objects"), tmpDir: filepath.Join(dir, "tmp"),
		qDir: filepath.Join(dir, "quarantine"), opt: opt,
		hooks:      store.Hooks{OnCorrupt: opt.OnCorrupt, OnSidecarRebuilt: opt.OnSidecarRebuilt},
		cache:      newSidecarCache(opt.SidecarCacheBytes),
		cpu:        make(chan struct{}, runtime.GOMAXPROCS(0)),
		qset:       map[store.ID]int{},
		checkEvery: FreeCheckInterval,
	}
	s.minFree.Store(opt.MinFreeBytes)
	s.statfs = s.available
	for _, d := range []string{dir, s.objDir, s.tmpDir, s.qDir} {
		if err := os.MkdirAll(d, dirMode); err != nil {
			return nil, fmt.Errorf("fs: open: %w", err)
		}
	}
	if err := emptyDir(s.tmpDir); err != nil {
		return nil, fmt.Errorf("fs: empty tmp: %w", err)
	}
	if err := s.loadQuarantine(); err != nil {
		return nil, fmt.Errorf("fs: read quarantine: %w", err)
	}
	return s, nil
}

// Dir returns the storage directory.
func (s *Store) Dir() string { return s.dir }

// Close marks the store closed; later calls fail with store.ErrClosed.
// Objects already open stay readable until closed.
func (s *Store) Close() error {
	s.closed.Store(true)
	s.cache.purge()
	return nil
}

func (s *Store) check(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return ctx.Err()
}

// Free returns the file system's available bytes at the storage directory.
func (s *Store) Free() (int64, error) {
	if s.closed.Load() {
		return 0, store.ErrClosed
	}
	return s.statfs()
}

func (s *Store) available() (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(s.dir, &st); err != nil {
		return 0, fmt.Errorf("fs: statfs: %w", err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// SetMinFreeBytes changes MinFreeBytes for Puts that check free space from
// now on (hot reload).
func (s *Store) SetMinFreeBytes(n int64) { s.minFree.Store(n) }

// checkFree returns ErrNoSpace when available space is below MinFreeBytes.
func (s *Store) checkFree() error {
	minFree := s.minFree.Load()
	if minFree <= 0 {
		return nil
	}
	free, err := s.statfs()
	if err != nil {
		return err
	}
	if free < minFree {
		return fmt.Errorf("%w: %d bytes available, minimum %d", store.ErrNoSpace, free, minFree)
	}
	return nil
}

// Probe creates, writes (4 KiB), fsyncs and removes a file in tmp/.
func (s *Store) Probe(ctx context.Context) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	p := filepath.Join(s.tmpDir, "probe-"+ulid.Make().String())
	if err := durable.WriteFileSync(p, make([]byte, 4096), fileMode); err != nil {
		return fmt.Errorf("fs: probe: %w", err)
	}
	if err := os.Remove(p); err != nil {
		return fmt.Errorf("fs: probe: %w", err)
	}
	return nil
}

// Stats returns the gauges. Objects and Bytes are exact only after Recount
// (plus the writes and deletes since).
func (s *Store) Stats() store.Stats {
	s.qmu.Lock()
	q := 0
	for _, n := range s.qset {
		q += n
	}
	s.qmu.Unlock()
	return store.Stats{Objects: max(0, s.objects.Load()), Bytes: max(0, s.bytes.Load()), Quarantined: int64(q)}
}

func (s *Store) now() time.Time { return s.opt.Now() }

func (s *Store) shardDir(id store.ID) string {
	h := id.Hex()
	return filepath.Join(s.objDir, h[0:2], h[2:4])
}

func (s *Store) dataPath(id store.ID) string { return filepath.Join(s.shardDir(id), id.Hex()) }
func (s *Store) metaPath(id store.ID) string { return s.dataPath(id) + ".meta" }

// ensureShard creates the two shard levels on demand, fsyncing parents.
// Shards known durable in this process skip the work.
func (s *Store) ensureShard(id store.ID) error {
	d := s.shardDir(id)
	if _, ok := s.shards.Load(d); ok {
		return nil
	}
	if err := mkdirSynced(filepath.Dir(d)); err != nil {
		return err
	}
	if err := mkdirSynced(d); err != nil {
		return err
	}
	s.shards.Store(d, struct{}{})
	return nil
}

// parseQuarantineName splits "<hex>.<unix_ms>[.meta]".
func parseQuarantineName(name string) (id store.ID, ms int64, meta bool, ok bool) {
	name, meta = strings.CutSuffix(name, ".meta")
	h, t, found := strings.Cut(name, ".")
	if !found {
		return id, 0, false, false
	}
	id, err := store.ParseID("b3:" + h)
	if err != nil {
		return id, 0, false, false
	}
	ms, err = strconv.ParseInt(t, 10, 64)
	return id, ms, meta, err == nil
}

func (s *Store) loadQuarantine() error {
	ents, err := os.ReadDir(s.qDir)
	if err != nil {
		return err
	}
	s.qmu.Lock()
	defer s.qmu.Unlock()
	for _, e := range ents {
		if id, _, meta, ok := parseQuarantineName(e.Name()); ok && !meta {
			s.qset[id]++
		}
	}
	return nil
}

func (s *Store) isQuarantined(id store.ID) bool {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return s.qset[id] > 0
}

// fail runs the crash-simulation hook for step.
func (s *Store) fail(step string) error {
	if s.failpoint == nil {
		return nil
	}
	return s.failpoint(step)
}
